"""Per-task budgets: enforced caps, not just reports."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Spec


class Budget(Spec):
    """A per-task budget. Any cap left unset is unlimited. A call whose worst case (prompt plus
    ``max_tokens``) could exceed what is left is not made."""

    per_task_tokens: int | None = Field(default=None, gt=0)
    """Cap on the tokens spent on one task by one design, counted on ``basis`` (all tokens, or
    completion + reasoning only)."""
    per_task_usd: float | None = Field(default=None, gt=0)
    """Cap on USD spent on one task by one design."""
    per_task_calls: int | None = Field(default=None, gt=0)
    """Cap on model calls made for one task by one design."""
    match: Literal["tokens", "calls", "usd"] = "tokens"
    """Which cost the equal-budget comparison matches on (tokens, calls or USD)."""
    basis: Literal["tokens", "completion", "usd"] = "tokens"
    """What "spent" means, for the cap and for the equal-budget matching against the CoT-SC curve:
    ``tokens`` (every prompt and completion token), ``completion`` (completion + reasoning tokens
    only: a design that re-sends long context is not charged for it) or ``usd`` (the cost; cap with
    ``per_task_usd``). The report says which; results carry ``budget_basis``/``budget_spent``."""
