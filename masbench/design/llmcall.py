"""Designer model calls under a budget.

Every designer call goes through :meth:`masbench.llm.Gateway.complete` (so it is a ``calls`` row,
tagged ``purpose: search``). A :class:`Ledger` holds one task's (or one search session's) spend:
a designer call is made only if its worst case (a prompt-token bound plus ``max_tokens``) fits
what is left, and each sub-design run gets the remainder as its own enforced budget — so the
total never exceeds the configured cap.
"""

from __future__ import annotations

from typing import Any

from ..llm import CallResult, Gateway, prompt_token_bound
from ..spec.budget import Budget


class Ledger:
    """Spent tokens / USD / calls against an optional :class:`Budget`."""

    def __init__(self, budget: Budget | None = None):
        self.budget = budget
        self.max_tokens = budget.per_task_tokens if budget else None
        self.max_usd = budget.per_task_usd if budget else None
        self.max_calls = budget.per_task_calls if budget else None
        self.prompt = 0
        self.completion = 0
        self.usd = 0.0
        self.calls = 0
        self.search_tokens = 0
        self.search_usd = 0.0
        self.search_calls = 0
        self.refused: list[dict[str, Any]] = []

    @property
    def tokens(self) -> int:
        return self.prompt + self.completion

    @property
    def exhausted(self) -> bool:
        return bool(self.refused)

    def fits(self, tokens: int, usd: float = 0.0, calls: int = 1, what: str = "") -> bool:
        """Would a call with this worst case fit? A refusal is recorded (and ends the search)."""
        why = None
        if self.max_calls is not None and self.calls + calls > self.max_calls:
            why = "calls"
        elif self.max_tokens is not None and self.tokens + tokens > self.max_tokens:
            why = "tokens"
        elif self.max_usd is not None and self.usd + usd > self.max_usd:
            why = "usd"
        if why:
            self.refused.append({"what": what, "cap": why, "worst_tokens": tokens, "spent_tokens": self.tokens})
            return False
        return True

    def remaining(self) -> Budget | None:
        """The budget left for a sub-run (None: unlimited). Raises :class:`ValueError` if a cap is
        already used up."""
        if self.budget is None:
            return None
        upd: dict[str, Any] = {}
        if self.max_tokens is not None:
            upd["per_task_tokens"] = self.max_tokens - self.tokens
        if self.max_usd is not None:
            upd["per_task_usd"] = self.max_usd - self.usd
        if self.max_calls is not None:
            upd["per_task_calls"] = self.max_calls - self.calls
        if any(v <= 0 for v in upd.values()):
            raise ValueError("budget used up")
        return self.budget.model_copy(update=upd)  # keeps match and basis

    def add(self, prompt: int, completion: int, usd: float, calls: int = 1, search: bool = False) -> None:
        self.prompt += prompt
        self.completion += completion
        self.usd += usd
        self.calls += calls
        if search:
            self.search_tokens += prompt + completion
            self.search_usd += usd
            self.search_calls += calls

    def absorb(self, result: Any) -> None:
        """Account a sub-run's :class:`~masbench.runtime.DesignResult`."""
        self.add(result.prompt_tokens, result.completion_tokens, result.cost_usd, result.calls)
        b = (result.detail or {}).get("budget") or {}
        if b.get("exhausted") and b.get("refused"):
            self.refused.append({"what": "sub-run", "cap": b["refused"][0].get("cap"), "spent_tokens": self.tokens})

    def summary(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "max_usd": self.max_usd, "max_calls": self.max_calls,
                "tokens": self.tokens, "usd": self.usd, "calls": self.calls, "search_tokens": self.search_tokens,
                "search_usd": self.search_usd, "search_calls": self.search_calls, "exhausted": self.exhausted,
                "refused": self.refused[:5]}


async def designer_call(gateway: Gateway, ledger: Ledger, *, model: str, messages: list[dict[str, Any]],
                        max_tokens: int, temperature: float | None, sample_index: int, tags: dict[str, Any],
                        sim: dict[str, Any] | None = None, search: bool = True) -> CallResult | None:
    """One budget-checked designer call (None if it does not fit the ledger)."""
    worst = prompt_token_bound(gateway, model, messages) + max_tokens
    worst_usd = gateway.prices(model).cost(worst - max_tokens, max_tokens) if ledger.max_usd is not None else 0.0
    if not ledger.fits(worst, worst_usd, 1, str(tags.get("node", ""))):
        return None
    res = await gateway.complete(model, messages, sample_index=sample_index, temperature=temperature,
                                 max_tokens=max_tokens, tags=tags, metadata={"sim": sim or {"mode": "design"}})
    ledger.add(res.prompt_tokens, res.completion_tokens, res.cost_usd, 1, search=search)
    return res


__all__ = ["Ledger", "designer_call"]
