"""How a suite's designs are compared with the CoT-SC curve: matching unit, test, level, power,
and the sequential (anytime-valid) test of ``masbench run --until-decided``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ..registry import PAIRED_TESTS
from .base import Spec

MatchUnit = Literal["budget", "tokens", "calls", "usd"]


class StatsSpec(Spec):
    """Settings of the paired tests and verdicts (formulas in docs/metrics.md)."""

    match: MatchUnit = "budget"
    """Cost unit at which a design is matched to the curve for its verdict: ``budget`` (default)
    is the suite's budget basis (``budget.basis``: tokens, completion tokens or USD), so "equal
    budget" means what the budget caps; ``tokens``, ``calls`` and ``usd`` are stored beside it."""
    test: str = "sign-flip"
    """The fixed-n paired test (a registered name, :mod:`masbench.harness.stats.tests`): ``sign-flip``
    (default: the paired randomization test on the per-task differences, exact McNemar on 0/1
    pairs), ``student-t``, or ``bootstrap-t`` (the earlier rule, kept for comparison)."""
    alpha: float = Field(default=0.05, gt=0, lt=1)
    """Family-wise error rate; Holm-corrected across the designs of a group (per-axis tables:
    across every design at every value of the axis)."""
    bootstrap: int = Field(default=2000, ge=100)
    """Resamples of the randomization (sign-flip) or bootstrap test; raised automatically so the
    smallest Holm level of a family is resolved."""
    power: float = Field(default=0.8, gt=0, lt=1)
    """Power at which the "needs n ≈ lo–hi tasks" range is computed."""
    seed: int = 0
    """Seed of the resampling (and of a sequential run's task order)."""
    bet: Literal["prpl", "agrapa"] = "agrapa"
    """Betting strategy of the anytime-valid confidence sequence (``--until-decided``):
    ``agrapa`` (default: a plug-in Kelly bet, bets harder as evidence accrues — decides sooner at
    moderate effects) or ``prpl`` (predictable plug-in, tuned for a tight interval at a horizon)."""

    @field_validator("test")
    @classmethod
    def _known_test(cls, v: str) -> str:
        if v not in PAIRED_TESTS:
            raise ValueError(f"unknown paired test {v!r} (known: {', '.join(PAIRED_TESTS.names())})")
        return v
