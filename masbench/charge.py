"""What one model call is charged, recorded once, and the tallies that read that record.

Every call's :class:`~masbench.llm.result.CallResult` carries one :class:`Charge`, made when the
result is made: the call's *counted* usage (its reported usage, or for a usage-missing call its
worst case — see :mod:`masbench.llm.result`), its cost, and whether it failed or was served from the
response cache. Everything that counts calls adds that record to a :class:`Tally`:

- the budget meter (:class:`masbench.budget.BudgetMeter`: what a task has spent, and of it what
  the designers' search calls spent);
- the node that made the call (its ``nodes`` row), whose tally is merged into the tally of the
  design run the node belongs to when the node ends — a sub-design node's tally holds its
  sub-run's, so a design run's tally (its ``results`` row) holds every call under it, once;
- the gateway's running totals (``Gateway.stats``: the progress display, a worker's reports).

This module imports nothing of masbench: the budget (below the model layer) and the model layer
both read it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple


class Charge(NamedTuple):
    """One call's counted usage and cost: the record every tally adds (immutable; a named tuple,
    as cheap to make as a tuple — one is made per call)."""

    prompt: int
    """Counted input tokens (fresh + cached read + cache write)."""
    completion: int
    """Counted output tokens (visible + reasoning)."""
    cost: float
    """USD of the counted usage."""
    model: str | None = None
    """The model id called."""
    failed: bool = False
    """The call ended with an error (after retries), or its usage was missing."""
    cache_hit: bool = False
    """Served from the response cache."""

    @property
    def tokens(self) -> int:
        return self.prompt + self.completion


@dataclass(slots=True)
class Tally:
    """A running sum of charges: calls, tokens, cost (and failed calls, cache hits)."""

    calls: int = 0
    prompt: int = 0
    completion: int = 0
    cost: float = 0.0
    failed: int = 0
    """Calls that failed (an error after retries, or usage missing)."""
    cache_hits: int = 0
    model: str | None = None
    """The model of the last charge added (None: none yet; :meth:`merge` leaves it)."""

    @property
    def tokens(self) -> int:
        return self.prompt + self.completion

    def add(self, c: Charge) -> None:
        """Count one call."""
        self.calls += 1
        self.prompt += c.prompt
        self.completion += c.completion
        self.cost += c.cost
        self.failed += c.failed
        self.cache_hits += c.cache_hit
        self.model = c.model

    def merge(self, t: Tally) -> None:
        """Count every call of another tally (a finished node, or a sub-run); the model stays."""
        self.calls += t.calls
        self.prompt += t.prompt
        self.completion += t.completion
        self.cost += t.cost
        self.failed += t.failed
        self.cache_hits += t.cache_hits

    @classmethod
    def of(cls, charges: Iterable[Charge]) -> Tally:
        """The tally of these charges."""
        t = cls()
        for c in charges:
            t.add(c)
        return t


__all__ = ["Charge", "Tally"]
