"""Choosing a model per call: U(a) = Σ_s w_s·E[p_{a,s}] − λ·E[c_{a,s}], and logging every decision.

Strategies (``RouteSpec.strategy``):

* ``greedy`` — argmax U with posterior means.
* ``thompson`` — p_{a,s} drawn from each Beta posterior, then argmax (explores uncertain models).
* ``ucb`` — Σ w·(E[p] + c·sd[p]) − λ·E[c] (optimism in the face of uncertainty).
* ``floor`` — the cheapest model whose lower bound Σ w·E[p] − z·sd ≥ τ; if none reaches τ, the
  one with the highest lower bound.

E[c] is the demand-weighted mean cost per call of the model on those skills, in the handbook's
``cost_unit`` (USD per 1k calls, or relative to the priciest model). Candidates are ordered by
cost, so ties go to the cheaper model.

Online learning: :meth:`SkillRouter.observe` updates the posterior with a call's (or task's)
outcome — fractional credit by skill weight × responsibility, see :func:`credit`.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..spec.handbook import HandbookSpec
from ..store import RoutingDecisionRow
from ..store import fill_outcomes  # noqa: F401 - re-exported (masbench.routing.fill_outcomes)
from .demand import IndicatorMatcher, LLMDemandClassifier, infer_demand, message_text
from .handbook import CompiledHandbook, compile_handbook, load_handbook
from .metrics import routing_entropy
from .targets import Via, prepare_candidates

STRATEGIES = ("greedy", "thompson", "ucb", "floor")


def credit(w: np.ndarray, p: np.ndarray, y: float | np.ndarray, mode: str = "responsibility") -> tuple[np.ndarray, np.ndarray]:
    """Split outcomes among skills. ``w``: (n, S) demand weights (rows sum to 1); ``p``: (n, S) the
    model's current rates; ``y``: (n,) outcomes in [0, 1]. Returns (wins, losses), each (n, S).

    * ``demand``: skill s gets w_s·y wins and w_s·(1 − y) losses.
    * ``responsibility``: the posterior share of the blame/credit under the mixture model
      P(correct) = Σ w_s p_s (the call is as hard as one of its skills, chosen by weight): a
      success credits s in proportion to w_s·p_s, a failure in proportion to w_s·(1 − p_s). Batch
      learning iterates this to a fixed point (EM), which is consistent for the true p_s.
    * ``whole``: every demanded skill gets the whole outcome (SkillOrchestra as coded).
    """
    w = np.atleast_2d(w)
    y = np.asarray(y, dtype=float).reshape(-1, 1)
    if mode == "whole":
        act = (w > 0).astype(float)
        return act * y, act * (1 - y)
    if mode == "demand":
        return w * y, w * (1 - y)
    p = np.clip(np.atleast_2d(p), 1e-6, 1 - 1e-6)
    num1 = w * p
    num0 = w * (1 - p)
    r1 = num1 / np.maximum(num1.sum(1, keepdims=True), 1e-12)
    r0 = num0 / np.maximum(num0.sum(1, keepdims=True), 1e-12)
    return r1 * y, r0 * (1 - y)


@dataclass
class Scored:
    """Per-candidate numbers for a batch of demands: arrays of shape (n, M)."""

    p_mean: np.ndarray
    p_sd: np.ndarray
    cost: np.ndarray
    """In cost units (see ``CompiledHandbook.cost_scale``)."""
    cost_usd: np.ndarray
    tokens: np.ndarray
    """Estimated tokens per call."""
    utility: np.ndarray
    choice: np.ndarray
    """(n,) chosen model index."""


def score_batch(ch: CompiledHandbook, W: np.ndarray, lam: float, strategy: str = "greedy", *, tau: float = 0.7,
                rng: np.random.Generator | None = None, ucb_c: float = 1.0, z: float = 1.645,
                allowed: np.ndarray | None = None) -> Scored:
    """Utilities and choices for demand rows ``W`` (n, S) over the handbook's models."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; use one of {STRATEGIES}")
    W = np.atleast_2d(W)
    mean, var = ch.mean, ch.var
    P = W @ mean.T
    SD = np.sqrt((W * W) @ var.T)
    CU = W @ ch.cost.T
    C = W @ ch.unit_cost().T
    if strategy == "thompson":
        rng = rng or np.random.default_rng()
        n, S = W.shape
        draws = rng.beta(ch.alpha[None, :, :].repeat(n, 0), ch.beta[None, :, :].repeat(n, 0))  # (n, M, S)
        Pq = np.einsum("ns,nms->nm", W, draws)
    elif strategy == "ucb":
        Pq = P + ucb_c * SD
    else:
        Pq = P
    U = Pq - lam * C
    # order by estimated cost so that argmax ties go to the cheaper model
    order = np.argsort(C, axis=1, kind="stable")
    if allowed is not None:
        U = np.where(allowed[None, :], U, -np.inf)
    if strategy == "floor":
        lb = P - z * SD
        if allowed is not None:
            lb = np.where(allowed[None, :], lb, -np.inf)
        ok = lb >= tau
        Cf = np.where(ok, C, np.inf)
        cheapest = np.argmin(np.take_along_axis(Cf, order, 1), axis=1)
        best_lb = np.argmax(np.take_along_axis(lb, order, 1), axis=1)
        pick = np.where(ok.any(1), cheapest, best_lb)
        U = np.where(ok, 1.0 - C, lb - 1.0)  # reported utility: feasible models rank by cheapness
    else:
        pick = np.argmax(np.take_along_axis(U, order, 1), axis=1)
    choice = np.take_along_axis(order, pick[:, None], 1)[:, 0]
    return Scored(P, SD, C, CU, W @ ch.tokens.T, U, choice)


@dataclass
class Decision:
    """One routing decision (what gets logged)."""

    decision_id: str
    chosen: str
    demand: dict[str, float]
    demand_source: str
    candidates: list[dict[str, Any]]
    context: dict[str, Any] = field(default_factory=dict)
    w: np.ndarray | None = None
    model_index: int = -1

    def row(self, handbook: str, strategy: str, lam: float) -> RoutingDecisionRow:
        """The decision's ``routing_decisions`` row (its outcome is filled after scoring)."""
        c = self.context
        return RoutingDecisionRow(decision_id=self.decision_id, run_id=c.get("run_id"), design=c.get("design"),
                                  task_id=c.get("task_id"), seed=c.get("seed"), node=c.get("node"),
                                  agent=c.get("agent"), handbook=handbook, strategy=strategy, lambda_=float(lam),
                                  skills=json.dumps(self.demand), candidates=json.dumps(self.candidates),
                                  chosen=self.chosen, outcome=None, ts=time.time())


class SkillRouter:
    """Routes calls between a handbook's models. Thread-safe for ``choose``/``observe``."""

    def __init__(self, handbook: HandbookSpec | CompiledHandbook, *, lambda_: float = 1.0, strategy: str = "greedy",
                 tau: float = 0.7, candidates: list[str] | None = None, classifier: LLMDemandClassifier | None = None,
                 sink: Callable[[RoutingDecisionRow], None] | None = None, seed: int = 0, ucb_c: float = 1.0,
                 z: float = 1.645, credit_mode: str = "responsibility", use_task_skills: bool = True,
                 demand_once: bool = False):
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; use one of {STRATEGIES}")
        self.ch = handbook if isinstance(handbook, CompiledHandbook) else compile_handbook(handbook, candidates)
        self.spec = self.ch.spec
        self.name = self.spec.name
        self.lambda_ = float(lambda_)
        self.strategy = strategy
        self.tau = tau
        self.classifier = classifier
        self.sink = sink
        self.rng = np.random.default_rng(seed)
        self.ucb_c = ucb_c
        self.z = z
        self.credit_mode = credit_mode
        self.use_task_skills = use_task_skills
        self.demand_once = demand_once
        """Reproduce SkillOrchestra's code: infer the demand on a task's first call only (comparisons)."""
        self._first: dict[str, tuple[dict[str, float], str]] = {}
        self.matcher = IndicatorMatcher(self.spec.taxonomy)
        self.pending: dict[str, list[Decision]] = {}
        self.decisions = 0
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_route(cls, route, library=None, **kw) -> "SkillRouter":
        """A router for an agent's ``model: {route: …}`` (a :class:`~masbench.spec.RouteSpec`)."""
        hb = load_handbook(route.route, library)
        return cls(hb, lambda_=route.lambda_, strategy=route.strategy, tau=route.tau, candidates=route.candidates, **kw)

    @property
    def models(self) -> list[str]:
        return self.ch.models

    # ----- demand -------------------------------------------------------------------------
    def demand(self, messages: Any, agent: Any = None, task: Any = None) -> tuple[dict[str, float], str]:
        text = message_text(messages)
        hints = list(getattr(agent, "skills", None) or [])
        fallback = list(getattr(task, "skills", None) or []) if self.use_task_skills else []
        return infer_demand(self.matcher, text, hints, fallback)

    async def ademand(self, messages: Any, agent: Any = None, task: Any = None) -> tuple[dict[str, float], str]:
        if self.classifier is not None:
            d = await self.classifier.classify(message_text(messages))
            if d:
                return d, "llm"
        return self.demand(messages, agent, task)

    # ----- decide -------------------------------------------------------------------------
    def decide(self, demand: dict[str, float], source: str = "given", context: dict[str, Any] | None = None) -> Decision:
        w = self.ch.demand_vector(demand)
        with self._lock:
            sc = score_batch(self.ch, w[None, :], self.lambda_, self.strategy, tau=self.tau, rng=self.rng,
                             ucb_c=self.ucb_c, z=self.z)
        mi = int(sc.choice[0])
        cands = [{"model": m, "utility": round(float(sc.utility[0, j]), 6), "p_mean": round(float(sc.p_mean[0, j]), 6),
                  "p_lo": round(float(max(0.0, sc.p_mean[0, j] - self.z * sc.p_sd[0, j])), 6),
                  "cost": float(f"{sc.cost_usd[0, j]:.6g}"), "tokens": round(float(sc.tokens[0, j]), 1)}
                 for j, m in enumerate(self.ch.models)]
        dec = Decision(uuid.uuid4().hex[:16], self.ch.models[mi], dict(demand), source, cands, dict(context or {}), w, mi)
        with self._lock:
            self.decisions += 1
            self.counts[dec.chosen] = self.counts.get(dec.chosen, 0) + 1
            tid = dec.context.get("task_id")
            if tid is not None:
                self.pending.setdefault(str(tid), []).append(dec)
        if self.sink is not None:
            self.sink(dec.row(self.name, self.strategy, self.lambda_))
        return dec

    @staticmethod
    def _context(agent: Any, ctx: dict[str, Any]) -> dict[str, Any]:
        out = dict(ctx.get("tags") or {})
        out.update({k: v for k, v in ctx.items() if k != "tags" and v is not None})
        if agent is not None and "agent" not in out:
            out["agent"] = getattr(agent, "name", None) or (agent if isinstance(agent, str) else None)
        return out

    def _once(self, context: dict[str, Any], d: dict[str, float], src: str) -> tuple[dict[str, float], str]:
        tid = context.get("task_id")
        if not self.demand_once or tid is None:
            return d, src
        key = f"{context.get('run_id')}|{tid}|{context.get('seed')}"
        return self._first.setdefault(key, (d, src + " (first turn)"))

    def choose(self, agent: Any = None, messages: Any = None, task: Any = None, **ctx: Any) -> str:
        """The model alias for one call (sync; indicator demand, re-inferred on every call).
        ``ctx``: tags such as run_id, design, task_id, seed, node (or ``tags={...}``) for the log."""
        if task is not None and "task_id" not in ctx:
            ctx["task_id"] = getattr(task, "id", None)
        context = self._context(agent, ctx)
        d, src = self._once(context, *self.demand(messages, agent, task))
        return self.decide(d, src, context).chosen

    async def achoose(self, agent: Any = None, messages: Any = None, task: Any = None, **ctx: Any) -> str:
        """Like :meth:`choose`, using the LLM classifier if one is configured."""
        if task is not None and "task_id" not in ctx:
            ctx["task_id"] = getattr(task, "id", None)
        context = self._context(agent, ctx)
        if self.demand_once and f"{context.get('run_id')}|{context.get('task_id')}|{context.get('seed')}" in self._first:
            d, src = self._once(context, {}, "")
        else:
            d, src = self._once(context, *(await self.ademand(messages, agent, task)))
        return self.decide(d, src, context).chosen

    __call__ = choose

    # ----- learn online -------------------------------------------------------------------
    def observe(self, decision: Decision, correct: float, cost_usd: float | None = None,
                tokens: float | None = None) -> None:
        """Update the chosen model's posterior with an outcome (fractional, by skill)."""
        ch = self.ch
        mi = decision.model_index
        w = decision.w if decision.w is not None else ch.demand_vector(decision.demand)
        with self._lock:
            win, loss = credit(w[None, :], ch.mean[mi][None, :], float(correct), self.credit_mode)
            for si in np.nonzero(w > 0)[0]:
                for aj in ch.ancestors(int(si)):
                    ch.alpha[mi, aj] += win[0, si]
                    ch.beta[mi, aj] += loss[0, si]
                ch.wins[mi, si] += win[0, si]
                ch.losses[mi, si] += loss[0, si]
                if cost_usd is not None:
                    ch.cost_sum[mi, si] += w[si] * cost_usd
                    ch.tok_sum[mi, si] += w[si] * (tokens or 0.0)
                    ch.cost_n[mi, si] += w[si]

    def observe_task(self, task_id: str, correct: float) -> int:
        """Feed a task's final outcome to every pending decision of that task. Returns how many."""
        with self._lock:
            decs = self.pending.pop(str(task_id), [])
        for d in decs:
            self.observe(d, correct)
        return len(decs)

    def entropy(self) -> tuple[float, float]:
        """Routing entropy of the decisions so far: (bits, normalised by log2 #models)."""

        return routing_entropy(np.repeat(np.arange(len(self.counts)), list(self.counts.values())), len(self.ch.models))

    def handbook(self) -> HandbookSpec:
        """The handbook including online updates (to save)."""
        return self.ch.to_spec()


# ----- the runtime hook ---------------------------------------------------------------------------
class RouteHook:
    """What the graph runtime calls for agents whose ``model`` is ``{route: …}``.

    ``hook(agent, messages, task=None, **tags) -> alias`` (sync) or ``await hook.achoose(...)``.
    Routers are built per (handbook, λ, strategy, τ, candidates) and cached. Models named in a
    handbook profile's ``model:`` block are registered with the gateway on first use, so a suite
    does not have to list them. A route node (``kind: route``) calls it the same way with a
    :class:`~masbench.runtime.ops.route.SubagentRoute` (``via = "node"``), whose candidates are
    designs."""

    def __init__(self, library=None, gateway=None, sink: Callable[[RoutingDecisionRow], None] | None = None, *,
                 classifier_model: str | None = None, seed: int = 0, tags: dict[str, Any] | None = None):
        self.library = library
        self.gateway = gateway
        self.sink = sink
        self.classifier_model = classifier_model
        self.seed = seed
        self.tags = dict(tags or {})
        self._routers: dict[tuple, SkillRouter] = {}
        self._lock = threading.Lock()

    def router_for(self, route, via: Via = "call") -> SkillRouter:
        """The (cached) router of a route; its candidates must be choosable ``via`` a routed agent's
        call (model targets) or a route node (sub-agent designs), see :mod:`.targets`."""
        key = (route.route, route.lambda_, route.strategy, route.tau, tuple(route.candidates or ()), via)
        with self._lock:
            r = self._routers.get(key)
            if r is None:
                hb = load_handbook(route.route, self.library)
                clf = None
                if self.classifier_model and self.gateway is not None:
                    clf = LLMDemandClassifier(self.gateway, self.classifier_model, hb, tags=self.tags)
                r = SkillRouter(hb, lambda_=route.lambda_, strategy=route.strategy, tau=route.tau,
                                candidates=route.candidates, classifier=clf, sink=self.sink,
                                seed=self.seed + len(self._routers))
                prepare_candidates(hb, r.models, via, library=self.library, gateway=self.gateway)
                self._routers[key] = r
            return r

    @staticmethod
    def _route_of(agent: Any):
        m = getattr(agent, "model", agent)
        if not hasattr(m, "route"):
            raise TypeError(f"agent {getattr(agent, 'name', agent)!r} has no route (model: {m!r})")
        return m

    def choose(self, agent: Any, messages: Any = None, task: Any = None, **ctx: Any) -> str:
        """Sync choice (indicator demand, never calls a model)."""
        r = self.router_for(self._route_of(agent), getattr(agent, "via", "call"))
        return r.choose(agent, messages, task, **{**self.tags, **ctx})

    async def achoose(self, agent: Any, messages: Any = None, task: Any = None, **ctx: Any) -> str:
        """Async choice (uses the LLM classifier if configured)."""
        r = self.router_for(self._route_of(agent), getattr(agent, "via", "call"))
        return await r.achoose(agent, messages, task, **{**self.tags, **ctx})

    def __call__(self, agent: Any, messages: Any = None, task: Any = None, **ctx: Any):
        """``RunContext.route``: an alias, or an awaitable of one when an LLM classifier is set."""
        if self.classifier_model and self.gateway is not None:
            return self.achoose(agent, messages, task, **ctx)
        return self.choose(agent, messages, task, **ctx)

    def bind(self, **tags: Any) -> BoundRoute:
        """A hook for one cell: ``RunContext(route=hook.bind(run_id=…, design=…, task_id=…, seed=…))``,
        so each decision row names its run, design, task and seed (routers stay shared)."""
        return BoundRoute(self, tags)

    def observe_task(self, task_id: str, correct: float) -> int:
        """Feed a task's outcome to every router's pending decisions (online learning)."""
        return sum(r.observe_task(task_id, correct) for r in list(self._routers.values()))


class BoundRoute:
    """:meth:`RouteHook.bind`'s result: the hook with one cell's tags, called as ``route(agent, messages,
    task, **ctx)`` (a call's own tags win over the cell's); ``hook`` is the shared :class:`RouteHook`."""

    __slots__ = ("hook", "tags")

    def __init__(self, hook: RouteHook, tags: dict[str, Any]):
        self.hook = hook
        self.tags = tags

    def __call__(self, agent: Any, messages: Any = None, task: Any = None, **ctx: Any):
        return self.hook(agent, messages, task, **{**self.tags, **ctx})
