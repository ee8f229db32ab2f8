"""How a suite's designs are compared with the CoT-SC curve: matching unit, level, power."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Spec


class StatsSpec(Spec):
    """Settings of the paired tests and verdicts (formulas in docs/metrics.md)."""

    match: Literal["tokens", "calls", "usd"] = "tokens"
    """Cost unit at which a design is matched to the curve for its verdict (all three are stored)."""
    alpha: float = Field(default=0.05, gt=0, lt=1)
    """Family-wise error rate; Holm-corrected across the designs of a group."""
    bootstrap: int = Field(default=2000, ge=100)
    """Paired bootstrap resamples (tasks resampled, each task's seeds kept together)."""
    power: float = Field(default=0.8, gt=0, lt=1)
    """Power at which "needs n ≈ N tasks" is computed."""
    seed: int = 0
    """Seed of the bootstrap resampling."""
