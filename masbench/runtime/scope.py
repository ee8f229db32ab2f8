"""The state of one run: :class:`Shared` by a run and its sub-design runs (budget meter, gateway,
row sink, each design run's usage), one :class:`Scope` per design run (its position — question,
rounds, stop flags — and the ops' diaries: statuses, votes, loops, …), and the small records node
bodies pass around (:class:`Env`, :class:`Br`).

Usage is counted from each call's one record, its :class:`~masbench.charge.Charge`: the budget
meter adds it (:func:`masbench.llm.metered_call`), so does the :class:`~masbench.charge.Tally` of
the node execution that made the call (:mod:`.calls`); when the node ends its tally is merged into
its design run's (:meth:`Shared.charge`), and a sub-design node's tally holds its sub-run's.

langgraph state holds one small key per node (its value); everything else lives here, passed to
every graph node as langgraph's runtime context.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..charge import Tally
from .types import SCHEDULERS, RunContext
from .values import OK, Val, fmt_data

if TYPE_CHECKING:  # pragma: no cover - checking a design must not load the benchmarks
    from ..bench.types import TaskInstance
    from ..spec.agent import AgentSpec

# Every op module imports this one for its run body's types, so checking a design (``masbench
# validate``) loads it: what only a run uses — the budget meter, the store's row types, the vote
# (and with it the calculator) — is imported where the run first needs it, not here.

SEED_STRIDE = 1_000_003
ROUND_STRIDE = 10_007
OUTPUT_CHARS = 2000
NODE_TAGS = ("run_id", "design", "task_id", "seed")
"""The run tags a node row carries (its other columns are the node's own: node, op, agent, …).
Call rows carry every tag; the ``nodes`` table has no ``purpose`` column."""

EMPTY = object()
"""Map item marker: the list to map over was empty (the node still runs once, to record it)."""
SKIP = object()
"""Branch marker: the loop's stop condition already held this round."""


class Shared:
    """State shared by a run and its sub-design runs."""

    __slots__ = ("meter", "simulated", "sink", "row_base", "tags", "gateway", "route", "library", "tie", "seed", "task",
                 "texts", "scheduler", "usage")

    def __init__(self, ctx: RunContext):
        from ..budget import BudgetMeter  # run time only (see the note on the imports)

        self.meter = BudgetMeter(ctx.budget)
        self.simulated = False
        self.sink = ctx.node_sink
        self.tags = dict(ctx.tags)
        self.row_base = {k: self.tags[k] for k in NODE_TAGS if k in self.tags}
        self.gateway = ctx.gateway
        self.route = ctx.route
        self.library = ctx.library
        self.tie = ctx.tie
        self.seed = int(self.tags.get("seed", ctx.seed) or 0)
        self.task: TaskInstance | None = None
        """The task being solved (set by :meth:`CompiledDesign.run`; tools read it, e.g. its corpus)."""
        self.texts: set[str] = set()
        """Hashes of the texts this run has sent to the sink (tool observations): each is sent once."""
        if ctx.scheduler is not None and ctx.scheduler not in SCHEDULERS:
            raise ValueError(f"unknown scheduler {ctx.scheduler!r} (known: {', '.join(SCHEDULERS)})")
        self.scheduler = ctx.scheduler
        """The scheduler asked for (:attr:`RunContext.scheduler`), for this run and its sub-designs."""
        self.usage: dict[Scope, Tally] = {}
        """The counted usage of each design run in progress (its scope's), its sub-runs' included."""

    def begin(self, sc: Scope) -> None:
        """A design run starts in ``sc``: its usage is counted from zero."""
        self.usage[sc] = Tally()

    def charge(self, sc: Scope, node: Tally) -> None:
        """A node execution of the run in ``sc`` ended: count its usage in the run's (a node
        cancelled after its run ended — the run raised — has nowhere left to count)."""
        run = self.usage.get(sc)
        if run is not None:
            run.merge(node)

    def end(self, sc: Scope) -> Tally:
        """The run in ``sc`` ended: its usage."""
        return self.usage.pop(sc)

    def vote(self, answers: list, node: str) -> tuple:
        """``majority_vote`` under the run's tie rule, keyed by the cell (seed, task) and node."""
        from .pyfuncs import majority_vote  # run time only (see the note on the imports)

        return majority_vote(answers, self.tie, seed=self.seed, task_id=str(self.tags.get("task_id", "")), node=node)


class Scope:
    """One run of one design on one task (sub-designs get their own scope, sharing ``sh``)."""

    __slots__ = ("sh", "question", "gold", "n", "skills", "seed_base", "prefix", "rounds", "stop", "go",
                 "hist", "prev", "status", "branches", "votes", "loops", "selects", "parse_failures", "errors",
                 "subs", "notes", "bad")

    def __init__(self, sh: Shared, question: str, gold: list[str], skills: list[str], seed_base: int,
                 prefix: str = ""):
        self.bad = 0
        """Node executions (any round, any branch) that did not end ``ok`` (:meth:`record`)."""
        self.sh = sh
        self.question = question
        self.gold = gold
        self.n = max(1, len(gold))
        self.skills = skills
        self.seed_base = seed_base
        self.prefix = prefix
        self.rounds: dict[str, int] = {}
        self.stop: dict[str, str] = {}
        self.go: dict[str, bool] = {}
        self.hist: dict[str, list[tuple[int, str, str]]] = {}
        self.prev: dict[str, Any] = {}
        self.status: dict[str, str] = {}
        self.branches: dict[str, list[str]] = {}
        self.votes: dict[str, dict] = {}
        self.loops: dict[str, dict] = {}
        self.selects: dict[str, dict] = {}
        self.parse_failures: list[dict] = []
        self.errors: dict[str, str] = {}
        self.subs: dict[str, Any] = {}
        self.notes: list[str] = []

    def emit(self, display: str, op: str, agent: str | None, model: str | None, st: Tally, val: Val,
             t0: float, started: float | None = None) -> None:
        """Send one node row (a :class:`~masbench.store.NodeRow`) to the sink. ``t0``: the
        ``perf_counter`` the node began at (its latency); ``started``: the epoch seconds read just
        before it, so the row's ``t_start``/``t_end`` hold every call the node made (a call's
        times are read on the same clock, after ``started`` and before this row's end)."""
        sink = self.sh.sink
        if sink is None:
            return
        from ..store import NodeRow  # run time only (see the note on the imports)

        if val.answers:
            out = ", ".join(val.answers)
        else:
            out = val.text if val.text else (fmt_data(val.data) if val.data is not None else None)
        if out is not None and len(out) > OUTPUT_CHARS:
            out = out[:OUTPUT_CHARS]
        t_end = time.time()  # read first: t_end − latency is then never after the node's start
        latency = time.perf_counter() - t0
        sink(NodeRow(**self.sh.row_base, node=self.prefix + display, op=op, agent=agent, model=st.model or model,
                     calls=st.calls, tokens=st.tokens, cost_usd=st.cost, latency_s=latency,
                     status=val.status, error=val.error, output=out, ts=t_end,
                     t_start=min(started, t_end) if started is not None else t_end - latency, t_end=t_end))

    def record(self, display: str, val: Val, branch: int | None = None) -> None:
        """Record a node's (or branch's) status and error."""
        if val.status != OK:
            self.bad += 1
        if branch is None:
            self.status[display] = val.status
        else:
            lst = self.branches.setdefault(display, [])
            if len(lst) <= branch:
                lst.extend([""] * (branch + 1 - len(lst)))
            lst[branch] = val.status
        if val.error and val.status != OK:
            key = display if branch is None else f"{display}[{branch}]"
            self.errors[key] = val.error[:500]

    def history(self, loop: str) -> str:
        """A loop's history so far, as prompt text."""
        h = self.hist.get(loop)
        if not h:
            return ""
        return "\n\n".join(f"[round {r}] {name}:\n{text}" for r, name, text in h if text)


class Caller(Protocol):
    """What a model call reads of the node making it (a prompted node,
    :class:`~masbench.runtime.ops.prompted.PromptedNode`)."""

    @property
    def key(self) -> str: ...

    @property
    def loop(self) -> str | None: ...

    @property
    def actor(self) -> str | None: ...

    @property
    def agent(self) -> AgentSpec:
        """The agent (its model route, when ``model`` is None)."""
        ...

    @property
    def model(self) -> str | None:
        """The model alias (None: a routed agent)."""
        ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def temperature(self) -> float | None: ...

    @property
    def stop(self) -> tuple[str, ...]:
        """The agent's stop sequences (empty: none sent)."""
        ...


@dataclass(slots=True)
class Env:
    """What templates read during one node execution."""

    state: dict
    sc: Scope
    br: "Br | None" = None
    cands: list[Val] | None = None


@dataclass(slots=True)
class Br:
    """A ``Send`` payload: one branch of a fan-out."""

    state: dict
    i: int
    item: Any


__all__ = ["Br", "Caller", "EMPTY", "Env", "NODE_TAGS", "ROUND_STRIDE", "SEED_STRIDE", "SKIP", "Scope", "Shared"]
