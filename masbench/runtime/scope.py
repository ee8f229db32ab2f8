"""The state of one run: :class:`Shared` by a run and its sub-design runs (budget meter, gateway,
row sink), one :class:`Scope` per design run (its position — question, rounds, stop flags — and
the ops' diaries: statuses, votes, loops, …; its counted usage is one :class:`Tally`), and the
small records node bodies pass around (:class:`Stats`, :class:`Env`, :class:`Br`).

langgraph state holds one small key per node (its value); everything else lives here, passed to
every graph node as langgraph's runtime context.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..budget import BudgetMeter
from ..store import NodeRow
from ..llm.result import CallResult
from .pyfuncs import majority_vote
from .types import SCHEDULERS, RunContext
from .values import OK, Val, fmt_data

if TYPE_CHECKING:  # pragma: no cover - checking a design must not load the benchmarks
    from ..bench.types import TaskInstance
    from ..spec.agent import AgentSpec

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
                 "texts", "scheduler")

    def __init__(self, ctx: RunContext):
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

    def vote(self, answers: list, node: str) -> tuple:
        """``majority_vote`` under the run's tie rule, keyed by the cell (seed, task) and node."""
        return majority_vote(answers, self.tie, seed=self.seed, task_id=str(self.tags.get("task_id", "")), node=node)


@dataclass(slots=True)
class Stats:
    """Usage of one node execution: the counted usage of its calls (and of its sub-designs)."""

    calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    model: str | None = None

    def add(self, res: CallResult) -> None:
        """Count one model call (its counted usage: what the budget meter settled)."""
        self.calls += 1
        self.tokens += res.prompt_tokens + res.completion_tokens
        self.cost += res.cost_usd
        self.model = res.model


@dataclass(slots=True)
class Tally:
    """Counted usage of one design run and the sub-designs it called (what its result row reports)."""

    calls: int = 0
    prompt: int = 0
    completion: int = 0
    cost: float = 0.0


class Scope:
    """One run of one design on one task (sub-designs get their own scope, sharing ``sh``)."""

    __slots__ = ("sh", "question", "gold", "n", "skills", "seed_base", "prefix", "rounds", "stop", "go",
                 "hist", "prev", "status", "branches", "votes", "loops", "selects", "parse_failures", "errors",
                 "subs", "notes", "parent", "usage", "bad")

    def __init__(self, sh: Shared, question: str, gold: list[str], skills: list[str], seed_base: int,
                 prefix: str = "", parent: "Scope | None" = None):
        self.parent = parent
        """The scope of the design that called this one as a sub-design."""
        self.bad = 0
        """Node executions (any round, any branch) that did not end ``ok``."""
        self.usage = Tally()
        """This run's counted usage, its sub-designs' included (:meth:`count`)."""
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

    def emit(self, display: str, op: str, agent: str | None, model: str | None, st: Stats, val: Val,
             t0: float) -> None:
        """Send one node row (a :class:`~masbench.store.NodeRow`) to the sink. ``t0``: the
        ``perf_counter`` the node began at; its ``t_start``/``t_end`` are epoch seconds."""
        sink = self.sh.sink
        if sink is None:
            return
        if val.answers:
            out = ", ".join(val.answers)
        else:
            out = val.text if val.text else (fmt_data(val.data) if val.data is not None else None)
        if out is not None and len(out) > OUTPUT_CHARS:
            out = out[:OUTPUT_CHARS]
        latency = time.perf_counter() - t0
        t_end = time.time()
        sink(NodeRow(**self.sh.row_base, node=self.prefix + display, op=op, agent=agent, model=st.model or model,
                     calls=st.calls, tokens=st.tokens, cost_usd=st.cost, latency_s=latency,
                     status=val.status, error=val.error, output=out, ts=t_end, t_start=t_end - latency, t_end=t_end))

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

    def count(self, res: CallResult, st: Stats) -> None:
        """Count one call of a node of this run, once, from its result's counted usage (what the
        budget meter settled): in the node's ``st`` and in the tally of this run and of every
        design that called it (what each design's result row reports)."""
        st.add(res)
        prompt, completion, cost = res.prompt_tokens, res.completion_tokens, res.cost_usd
        s: Scope | None = self
        while s is not None:
            u = s.usage
            u.calls += 1
            u.prompt += prompt
            u.completion += completion
            u.cost += cost
            s = s.parent


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


__all__ = ["Br", "Caller", "EMPTY", "Env", "NODE_TAGS", "ROUND_STRIDE", "SEED_STRIDE", "SKIP", "Scope", "Shared", "Stats",
           "Tally"]
