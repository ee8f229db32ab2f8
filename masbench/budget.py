"""The one budget meter: a task's (or a design search's) spend against an optional cap.

Used by the runtime for every node call and by the designers for every search call — the same
"reserve the worst case, call, settle the actual" chain, so concurrent branches can never jointly
overshoot and a designer's sub-runs get exactly what is left. All bookkeeping is synchronous (one
asyncio loop), so a reservation made between two awaits cannot race another branch. Once a call
is refused the meter is *exhausted*: no later call is made, and the caller returns its best answer
so far. The metered model call itself is :func:`masbench.llm.metered_call`.

The token cap counts on the budget's *basis* (:func:`spend_on`): ``tokens`` (prompt + completion),
``completion`` (completion + reasoning only) or ``usd`` (the cost; the USD cap applies as always).
Reservations and the ``tokens`` argument of :meth:`BudgetMeter.reserve` / ``release`` / ``settle``
are in basis tokens — :meth:`BudgetMeter.worst_tokens` turns a call's bounds into them.
"""

from __future__ import annotations

from typing import Any

from .charge import Charge, Tally
from .spec.budget import Budget

BASES = ("tokens", "completion", "usd")


def spend_on(basis: str, prompt: float, completion: float, cost: float) -> float:
    """What one call (or result) spent on a budget basis: all tokens, completion tokens, or USD."""
    if basis == "completion":
        return completion
    if basis == "usd":
        return cost
    return prompt + completion


class BudgetMeter:
    """Spent and reserved tokens / USD / calls, with an optional cap on each. What was spent is a
    :class:`~masbench.charge.Tally` of the calls' charges (:attr:`spent`; of it, the designers'
    search calls: :attr:`search`)."""

    __slots__ = ("budget", "max_tokens", "max_usd", "max_calls", "limited", "spent", "search",
                 "r_tokens", "r_usd", "r_calls", "exhausted", "refused", "basis")

    def __init__(self, budget: Budget | None = None):
        self.budget = budget
        self.basis = budget.basis if budget else "tokens"
        """The budget basis: ``tokens``, ``completion`` or ``usd``."""
        self.max_tokens = budget.per_task_tokens if budget else None
        self.max_usd = budget.per_task_usd if budget else None
        self.max_calls = budget.per_task_calls if budget else None
        self.limited = any(x is not None for x in (self.max_tokens, self.max_usd, self.max_calls))
        """Whether any cap is set (otherwise no worst case needs computing)."""
        self.spent = Tally()
        """Every call counted (and every finished sub-run absorbed)."""
        self.search = Tally()
        """Of :attr:`spent`, the designers' search calls."""
        self.r_tokens = 0
        self.r_usd = 0.0
        self.r_calls = 0
        self.exhausted = False
        self.refused: list[dict[str, Any]] = []

    @property
    def prompt(self) -> int:
        return self.spent.prompt

    @property
    def completion(self) -> int:
        return self.spent.completion

    @property
    def usd(self) -> float:
        return self.spent.cost

    @property
    def calls(self) -> int:
        return self.spent.calls

    @property
    def tokens(self) -> int:
        """Tokens spent (prompt + completion)."""
        return self.spent.prompt + self.spent.completion

    @property
    def counted(self) -> int:
        """Tokens spent on the basis the token cap counts (all tokens, or completion only)."""
        s = self.spent
        return s.completion if self.basis == "completion" else s.prompt + s.completion

    def worst_tokens(self, prompt_bound: int, max_tokens: int) -> int:
        """A call's worst case in the tokens the cap counts."""
        return max_tokens if self.basis == "completion" else prompt_bound + max_tokens

    @property
    def needs_usd(self) -> bool:
        """Whether a USD cap is set (so a call's worst-case cost must be priced)."""
        return self.max_usd is not None

    def refuse(self, where: str, cap: str, **extra: Any) -> None:
        """Record a refusal: the meter is exhausted from now on."""
        self.exhausted = True
        self.refused.append({"where": where, "cap": cap, "spent_tokens": self.tokens, **extra})

    def reserve(self, tokens: int, usd: float = 0.0, where: str = "") -> bool:
        """Reserve one call's worst case. False (and the meter is exhausted) if it might not fit."""
        if self.exhausted:
            return False
        why = None
        if self.max_calls is not None and self.spent.calls + self.r_calls + 1 > self.max_calls:
            why = "calls"
        elif self.max_tokens is not None and self.counted + self.r_tokens + tokens > self.max_tokens:
            why = "tokens"
        elif self.max_usd is not None and self.spent.cost + self.r_usd + usd > self.max_usd:
            why = "usd"
        if why is not None:
            self.refuse(where, why, worst_tokens=tokens, worst_usd=usd, reserved_tokens=self.r_tokens)
            return False
        self.r_tokens += tokens
        self.r_usd += usd
        self.r_calls += 1
        return True

    def release(self, tokens: int, usd: float = 0.0) -> None:
        """Give back a reservation whose call was not made."""
        self.r_tokens -= tokens
        self.r_usd -= usd
        self.r_calls -= 1

    def settle(self, tokens: int, usd: float, charge: Charge, *, search: bool = False) -> None:
        """Replace a reservation by what the call was charged."""
        self.release(tokens, usd)
        self.add(charge, search=search)

    def add(self, charge: Charge, *, search: bool = False) -> None:
        """Count a call that was not reserved (an unlimited meter)."""
        self.spent.add(charge)
        if search:
            self.search.add(charge)

    def absorb(self, result: Any) -> None:
        """Account a finished sub-run (a :class:`~masbench.runtime.DesignResult`: its ``usage``
        tally), including its refusal."""
        self.spent.merge(result.usage)
        b = (result.detail or {}).get("budget") or {}
        if b.get("exhausted") and b.get("refused"):
            self.refuse("sub-run", b["refused"][0].get("cap"))

    def remaining(self) -> Budget | None:
        """The budget left for a sub-run (None: unlimited). Raises :class:`ValueError` if a cap is
        already used up."""
        if self.budget is None:
            return None
        upd: dict[str, Any] = {}
        if self.max_tokens is not None:
            upd["per_task_tokens"] = self.max_tokens - self.counted
        if self.max_usd is not None:
            upd["per_task_usd"] = self.max_usd - self.usd
        if self.max_calls is not None:
            upd["per_task_calls"] = self.max_calls - self.calls
        if any(v <= 0 for v in upd.values()):
            raise ValueError("budget used up")
        return self.budget.model_copy(update=upd)

    def summary(self) -> dict[str, Any]:
        """What a result's ``detail["budget"]`` records."""
        s, q = self.spent, self.search
        out = {"max_tokens": self.max_tokens, "max_usd": self.max_usd, "max_calls": self.max_calls,
               "tokens": s.tokens, "usd": s.cost, "calls": s.calls, "exhausted": self.exhausted,
               "refused": self.refused[:5], "basis": self.basis,
               "spent": spend_on(self.basis, s.prompt, s.completion, s.cost)}
        if q.calls:
            out.update(search_tokens=q.tokens, search_usd=q.cost, search_calls=q.calls)
        return out


__all__ = ["BASES", "BudgetMeter", "spend_on"]
