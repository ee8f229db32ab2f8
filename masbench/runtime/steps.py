"""The langgraph node functions: a plain node, one branch of a fan-out, and a loop's round
controller and exit. Each reads the run's :class:`~masbench.runtime.scope.Scope` from langgraph's
runtime context and returns the state update (the node's value; fan-outs append
``(round, index, value)`` entries to a list-reducer key)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from .info import LoopInfo
from .node import run_node
from .ops.until import check_until
from .plan import Plan
from .scope import EMPTY, SKIP, Br, Env, Scope, Stats
from .values import Val, read, vtext

if TYPE_CHECKING:  # pragma: no cover - annotations only: a straight-line run never imports langgraph
    from langgraph.runtime import Runtime

Step = Callable[..., Any]


def branches(p: Plan, state: dict, sc: Scope) -> list[Br]:
    """The branches of a fan-out this round (one marker branch if skipped or empty): the payloads
    the graph sends (:func:`masbench.runtime.graph.sends`) and the chain runs."""
    if p.loop is not None and p.loop in sc.stop:
        return [Br(state, 0, SKIP)]
    assert p.items is not None  # bound for every fan-out plan
    items = p.items(state, sc)
    if not items:
        return [Br(state, 0, EMPTY)]
    if isinstance(items, range):
        return [Br(state, i, None) for i in items]
    return [Br(state, i, it) for i, it in enumerate(items)]


def single_step(p: Plan) -> Step:
    """A node that runs once per round (or once)."""
    key = p.key
    into = p.info.spec.into
    L = p.loop
    order = p.order

    async def node(state: dict, runtime: Runtime[Any]) -> dict:
        sc: Scope = runtime.context
        if L is not None and L in sc.stop:
            return {}
        val = await run_node(p, sc, Env(state, sc), None)
        if L is not None and not val.present:
            return {}  # a failed round keeps the previous round's value (the best so far)
        if into is not None:
            return {key: val, into: [(0, order * 100_000, val)]}
        return {key: val}
    node.__name__ = key
    return node


def branch_step(p: Plan) -> Step:
    """One branch of a fan-out (its payload is a :class:`~masbench.runtime.scope.Br`)."""
    key = p.key
    into = p.info.spec.into
    L = p.loop
    order = p.order

    async def branch(br: Br, runtime: Runtime[Any]) -> dict:
        sc: Scope = runtime.context
        it = br.item
        if it is SKIP:
            return {}
        r = sc.rounds.get(L, 0) if L is not None else 0
        if it is EMPTY:
            val = Val(status="empty", error="nothing to map over (the upstream list is empty or missing)")
            sc.record(key, val, 0)
            sc.emit(key, p.row_op, p.agent_name, p.model, Stats(), val, time.perf_counter())
        else:
            val = await run_node(p, sc, Env(br.state, sc, br), br.i)
        if into is not None:
            return {key: [(r, br.i, val)], into: [(0, order * 100_000 + br.i, val)]}
        return {key: [(r, br.i, val)]}
    branch.__name__ = key
    return branch


def round_step(p: Plan, lp: LoopInfo, until_plan: Plan | None) -> Step:
    """A loop's round controller: judge the round just finished, then start another or exit."""
    L = lp.name
    cur = p.loop_cur
    assert cur is not None  # bound by the loop op before the graph is built
    until = lp.until
    # the until node when it fans out (judged here, once all its branches are in), else None
    ufan = until_plan if until_plan is not None and until_plan.fan is not None else None

    async def controller(state: dict, runtime: Runtime[Any]) -> dict:
        sc: Scope = runtime.context
        r = sc.rounds.get(L, 0)
        v = cur(Env(state, sc))
        if r == 0:
            # before round 1 only the init has a value (loops are not nested; a sub-design's loop
            # has its own scope)
            if lp.init is not None and v is not None:
                sc.hist.setdefault(L, []).append((0, lp.init, vtext(v)))
        else:
            if ufan is not None and L not in sc.stop:  # a fanned-out until node is judged once all branches are in
                uv = read(state, ufan.key, True)
                if uv is not None:
                    check_until(ufan, sc, uv)
            if until is not None and until.converged and L not in sc.stop:
                if v is not None and v.answers is not None and v.answers == sc.prev.get(L):
                    sc.stop[L] = "converged"
        if v is not None:
            # a fan-out's value (``read``) carries no answers of its own, so ``converged`` compares
            # single values only
            sc.prev[L] = v.answers
        if L not in sc.stop:
            if r >= lp.max_rounds:
                sc.stop[L] = "max_rounds"
            elif sc.sh.meter.exhausted:
                sc.stop[L] = "budget"
            else:
                sc.rounds[L] = r + 1
        sc.go[L] = L not in sc.stop
        return {}
    controller.__name__ = f"{L}#round"
    return controller


def exit_step(p: Plan, lp: LoopInfo) -> Step:
    """A loop's exit: write the loop's value and record its rounds."""
    L = lp.name
    cur = p.loop_cur
    assert cur is not None  # bound by the loop op before the graph is built

    async def exit_(state: dict, runtime: Runtime[Any]) -> dict:
        sc: Scope = runtime.context
        t0 = time.perf_counter()
        v = cur(Env(state, sc))  # the body output's latest value, else the init's (a Val is never mutated)
        if v is None:
            v = Val(status="empty", error="the loop produced no value")
        sc.loops[sc.prefix + L] = {"rounds": sc.rounds.get(L, 0), "max_rounds": lp.max_rounds,
                                   "stopped": sc.stop.get(L)}
        sc.record(L, v)
        sc.emit(L, p.row_op, None, None, Stats(), v, t0)
        return {L: v}
    exit_.__name__ = L
    return exit_


__all__ = ["branch_step", "branches", "exit_step", "round_step", "single_step"]
