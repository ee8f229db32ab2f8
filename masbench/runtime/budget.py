"""Per-task budget enforcement: reserve the worst case before a call, settle the actual after.

All bookkeeping is synchronous (one asyncio loop), so a reservation made between two awaits can
never race another branch: concurrent branches cannot jointly overshoot. Once a call is refused
the budget is *exhausted*: no later call of the task is made, and the design returns its best
answer so far.
"""

from __future__ import annotations

from typing import Any

from ..spec.budget import Budget


class Tracker:
    """Spent and reserved tokens / USD / calls of one task (shared with its sub-designs)."""

    __slots__ = ("max_tokens", "max_usd", "max_calls", "tokens", "usd", "calls", "prompt", "completion",
                 "r_tokens", "r_usd", "r_calls", "exhausted", "refused", "limited")

    def __init__(self, budget: Budget | None = None):
        self.max_tokens = budget.per_task_tokens if budget else None
        self.max_usd = budget.per_task_usd if budget else None
        self.max_calls = budget.per_task_calls if budget else None
        self.limited = any(x is not None for x in (self.max_tokens, self.max_usd, self.max_calls))
        """Whether any cap is set (otherwise no worst case needs computing)."""
        self.tokens = 0
        self.usd = 0.0
        self.calls = 0
        self.prompt = 0
        self.completion = 0
        self.r_tokens = 0
        self.r_usd = 0.0
        self.r_calls = 0
        self.exhausted = False
        self.refused: list[dict[str, Any]] = []

    @property
    def needs_usd(self) -> bool:
        return self.max_usd is not None

    def reserve(self, tokens: int, usd: float, where: str = "") -> bool:
        """Reserve one call's worst case. False (and the budget is exhausted) if it might not fit."""
        if self.exhausted:
            return False
        why = None
        if self.max_calls is not None and self.calls + self.r_calls + 1 > self.max_calls:
            why = "calls"
        elif self.max_tokens is not None and self.tokens + self.r_tokens + tokens > self.max_tokens:
            why = "tokens"
        elif self.max_usd is not None and self.usd + self.r_usd + usd > self.max_usd:
            why = "usd"
        if why is not None:
            self.exhausted = True
            self.refused.append({"node": where, "cap": why, "worst_tokens": tokens, "worst_usd": usd,
                                 "spent_tokens": self.tokens, "reserved_tokens": self.r_tokens})
            return False
        self.r_tokens += tokens
        self.r_usd += usd
        self.r_calls += 1
        return True

    def release(self, tokens: int, usd: float) -> None:
        """Give back a reservation whose call was not made."""
        self.r_tokens -= tokens
        self.r_usd -= usd
        self.r_calls -= 1

    def settle(self, tokens: int, usd: float, prompt: int, completion: int, cost: float) -> None:
        """Replace a reservation by what the call really used."""
        self.r_tokens -= tokens
        self.r_usd -= usd
        self.r_calls -= 1
        self.add(prompt, completion, cost)

    def add(self, prompt: int, completion: int, cost: float) -> None:
        """Account one call (unbudgeted path)."""
        self.calls += 1
        self.prompt += prompt
        self.completion += completion
        self.tokens += prompt + completion
        self.usd += cost

    def summary(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "max_usd": self.max_usd, "max_calls": self.max_calls,
                "tokens": self.tokens, "usd": self.usd, "calls": self.calls, "exhausted": self.exhausted,
                "refused": self.refused[:5]}
