"""The runtime's public records: what a run needs (:class:`RunContext`) and what it returns
(:class:`DesignResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..charge import Tally
from ..library import Library
from ..spec.budget import Budget

if TYPE_CHECKING:  # pragma: no cover - keep `import masbench.runtime` light (no litellm, no store rows)
    from ..llm.gateway import Gateway
    from ..store import Row

STATUSES = ("ok", "degraded", "budget_exhausted", "failed")
SCHEDULERS = ("direct", "chain", "graph")
"""Who schedules a design's nodes, simplest first: ``direct`` (a one-node design: its node, no
graph), ``chain`` (a straight-line design: one node or fan-out per depth, :mod:`.chain`) and
``graph`` (langgraph: any shape, parallel nodes and channels included). They run the same nodes
with the same semantics; a simpler one only skips machinery the shape does not need."""


@dataclass(slots=True)
class RunContext:
    """Everything one design run needs besides the design and the task."""

    gateway: Gateway
    """The one gateway every model call goes through."""
    library: Library
    """A :class:`masbench.library.Library` (agents and sub-designs are resolved by name in it)."""
    budget: Budget | None = None
    """Per-task budget (tokens / USD / calls); None: unlimited."""
    tags: dict[str, Any] = field(default_factory=dict)
    """run_id, design (label), task_id, seed, purpose → merged into every call row and node row."""
    node_sink: Callable[[Row], None] | None = None
    """Receives one row per node execution for the ``nodes`` table, and the records tool-using
    nodes make (``tool_calls`` rows and the texts their observations name), e.g. ``StoreWriter.put``."""
    seed: int = 0
    """Mixed into sample indices so different seeds draw different samples."""
    tie: str = "first"
    """How ``majority`` votes break ties: ``split`` | ``random`` | ``first`` (see
    :mod:`masbench.runtime.ties`). The harness passes the suite's ``cot_sc.tie``."""
    route: Callable[..., Any] | None = None
    """Hook for agents whose model is a route: ``route(agent, messages) -> alias`` (sync or async).
    Unset: such agents use the ``default`` alias."""
    scheduler: str | None = None
    """Which of :data:`SCHEDULERS` runs the design (and its sub-designs): the named one where it can
    take the design, else the next more general one. None: the simplest that can take it."""


@dataclass(slots=True)
class DesignResult:
    """The outcome of one design on one task."""

    text: str
    """Final text of the output node (or of the node the fallback answer came from)."""
    answers: list[str]
    """Extracted, normalized answers, one per gold position ("" where none was found)."""
    status: str
    """``ok`` | ``degraded`` (some node failed; the answer used what arrived) |
    ``budget_exhausted`` (a call was refused; best answer so far) | ``failed`` (no answer)."""
    prompt_tokens: int
    completion_tokens: int
    tokens: int
    cost_usd: float
    calls: int
    wall_s: float
    error: str | None
    detail: dict
    """Per-node status, branch statuses, vote tallies and tie-breaks, loop rounds, select choices,
    parse failures, errors, fallback, budget, simulated flag."""

    @property
    def answer(self) -> str:
        """The answers as one string (", "-joined)."""
        return ", ".join(self.answers)

    @property
    def usage(self) -> Tally:
        """Its calls, tokens and cost as a tally (what a meter absorbs, what a design node adds)."""
        return Tally(calls=self.calls, prompt=self.prompt_tokens, completion=self.completion_tokens,
                     cost=self.cost_usd)
