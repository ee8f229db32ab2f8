"""``route`` nodes: pick ONE of several sub-agents (designs) per task from a skill handbook, then run
it on the node's input like a ``design:`` node.

Settings in ``params`` (a :class:`~masbench.spec.agent.RouteSpec` plus its candidates)::

    nodes:
      solve:
        kind: route
        params: {route: quickstart-subagents, lambda: 0.2, strategy: greedy,
                 candidates: [cot-tiny, expression-calculator]}

The choice is the run's route hook's (``RunContext.route``, :class:`masbench.routing.RouteHook`):
the handbook's per-(candidate, skill) posteriors and costs, λ and the strategy — the machinery of
model routing — with the node's question as the text the demand is inferred from and the task's
level as the fallback (:func:`task_skills`). The hook logs one ``routing_decisions`` row per choice (candidates with
their utilities); its ``outcome`` is filled from the result like any other decision. The chosen
sub-design runs with the task's own sample indices, as it would alone: on a task, the routed
design's answer is exactly the chosen candidate's (a cache hit when both ran in one suite), so the
paired verdict against a candidate measures the routing and no sampling noise. Without a
route hook (a bare :func:`~masbench.runtime.run_design`) the first candidate runs, recorded as such.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

from pydantic import ValidationError

from ...charge import Tally
from ...spec.agent import RouteSpec
from ...spec.design import NodeSpec
from .. import links
from ..info import Checking, NodeInfo
from ..scope import Env, Scope
from ..values import Val
from .base import Binding, Calls, SubRun, Weigher
from .design import DesignOp, SubNode, sub_fields


@dataclass(frozen=True)
class SubagentRoute:
    """What a route node hands the route hook: it looks like a routed agent (``name``, ``model`` is
    the route, ``skills`` hints) and says it routes between sub-agents (``via = "node"``)."""

    name: str
    model: RouteSpec
    skills: tuple[str, ...] = ()
    via: str = field(default="node")


def route_settings(node: NodeSpec) -> RouteSpec:
    """The node's ``params`` as a route; raises ``ValueError`` naming the bad field."""
    try:
        spec = RouteSpec.model_validate(node.params)
    except ValidationError as exc:
        e = exc.errors()[0]
        raise ValueError(f"params.{'.'.join(map(str, e['loc']))}: {e['msg']}") from None
    if not spec.candidates:
        raise ValueError("params.candidates: a route node names its sub-agent designs (at least one)")
    return spec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RouteNode(SubNode):
    """One of several sub-designs, chosen per task by the run's route hook."""

    route: RouteSpec
    """The node's route settings (handbook, λ, strategy, candidates)."""
    subs: dict[str, SubRun]
    """The candidate sub-designs, by design name (one runs per task)."""

    async def run(self, sc: Scope, env: Env, i: int | None, st: Tally, calls: Calls) -> Val:
        spec = self.route
        names = list(self.subs)
        question = self.sub_question(sc, env)
        chosen = names[0]
        hook = sc.sh.route
        if hook is not None:
            target = SubagentRoute(self.key, spec)
            r = hook(target, question, _TaskSkills(task_skills(sc)), node=sc.prefix + self.key)
            chosen = await r if inspect.isawaitable(r) else r
            if chosen not in self.subs:
                raise ValueError(f"route {spec.route!r} chose {chosen!r}, not one of the node's candidates {names}")
        # the chosen sub-agent samples as it would run alone on this task and seed (same sample
        # indices): the routed design's answer is the chosen design's own, so a paired comparison
        # with each candidate measures the choice and nothing else (and its calls are cache hits
        # when the candidates ran in the same suite)
        val = await self.run_design(sc, env, i or 0, st, self.subs[chosen], seed_base=sc.seed_base)
        data = dict(val.data) if isinstance(val.data, dict) else {}
        data["chosen"] = chosen
        return Val(text=val.text, answers=val.answers, status=val.status, error=val.error, data=data)


class RouteOp(DesignOp):
    """One of ``params.candidates`` (designs), chosen per task by the handbook ``params.route``. A
    design node whose design is chosen at run time: it shares the design op's prompt (the
    sub-question) and body."""

    keys = ()
    fans = frozenset()
    may_be_list = True
    data_fields = True
    color = "#fde2c8"
    shape = ('{{"', '"}}')

    def check(self, an: Checking, info: NodeInfo) -> None:
        try:
            spec = route_settings(info.spec)
        except ValueError as exc:
            an.at(info, ("params",), str(exc))
            return
        for c in spec.candidates or ():
            links.check_subdesign(an, info, c, {})

    def compile(self, b: Binding, info: NodeInfo) -> RouteNode:
        spec = route_settings(info.spec)
        return RouteNode(**sub_fields(b, info), route=spec, subs={c: b.sub_design(c, {}) for c in spec.candidates or ()})

    def actor(self, info: NodeInfo) -> str | None:
        return f"route:{info.spec.params.get('route', '?')}"

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        try:
            cands = route_settings(node).candidates or []
        except ValueError:
            return 1
        return max((w.design(c, {}) for c in cands), default=1)

    def sub_design(self, node: NodeSpec) -> str | None:
        try:
            cands = route_settings(node).candidates or []
        except ValueError:
            return None
        return cands[0] if cands else None

    def label(self, info: NodeInfo) -> str:
        c = info.spec.params.get("candidates") or []
        return f"route: {info.spec.params.get('route', '?')} over {', '.join(map(str, c))}"


def task_skills(sc: Scope) -> list[str]:
    """The demand fallback when no indicator matches the question: the task's level as a skill —
    its source, refined by its level on an axis (``one-step.L1``), the id ``skills learn
    --candidates`` learns under (the store's ``design_task_outcomes.skill``) — else its skill tags."""
    t = sc.sh.task
    if t is not None and t.source:
        return [t.source + (f".L{t.axis_value}" if t.axis_value is not None else "")]
    return list(sc.skills)


@dataclass(frozen=True)
class _TaskSkills:
    """The task as the router's demand fallback sees it: its skill tags."""

    skills: list[str]


OP = RouteOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["route"]``)."""

__all__ = ["OP", "RouteNode", "RouteOp", "SubagentRoute", "route_settings"]
