"""What every scheduler runs for a node, whoever schedules it.

:func:`run_node` is one execution: run the node (:meth:`Node.run
<masbench.runtime.ops.base.Node.run>`), turn any failure into a recorded status (so one failed
branch never loses its siblings' work), keep the loop history, judge the loop's stop condition
when it reads this node, and emit the node row. The steps around it — a plain node
(:func:`single`), one branch of a fan-out (:func:`branch`); a loop's round controller and exit are
its node's own (:class:`~masbench.runtime.ops.loop.LoopNode`) — take the state and the run's
:class:`~masbench.runtime.scope.Scope` and return the state update (the node's value; fan-outs
append ``(round, index, value)`` entries to a list-reducer key). langgraph calls them through
:mod:`.graph` (the scope is its runtime context), the chain (:mod:`.chain`) and the direct run
call them as they are."""

from __future__ import annotations

import asyncio
import time

from .. import telemetry
from ..charge import Tally
from .calls import CALLS, BudgetRefused
from .ops.base import Node
from .scope import EMPTY, SKIP, Br, Env, Scope
from .values import OK, Val, fmt_data


async def run_node(node: Node, sc: Scope, env: Env, i: int | None) -> Val:
    """Run one node execution: branch ``i`` of a fan-out, or the node itself when ``i`` is None (the
    callers keep that exact: :func:`single` passes None, :func:`branch` an int). Never raises, except
    cancellation. Its calls' charges are added to its own tally, which its design run counts when it
    ends (also when it is cancelled: those calls were made)."""
    st = Tally()
    try:
        with telemetry.node(sc.prefix + node.key, node.row_op, node.agent_name, sc.sh.tags,
                            round=sc.rounds.get(node.loop, 0) if node.loop is not None else None,
                            branch=i) as span:
            val = await _execute(node, sc, env, i, st)
            span.node_result(val, st)
    finally:
        sc.sh.charge(sc, st)
    return val


async def _execute(node: Node, sc: Scope, env: Env, i: int | None, st: Tally) -> Val:
    """:func:`run_node`'s body: the node, its failure as a status, the loop history, the node row."""
    started = time.time()  # epoch, on the calls' clock (see Scope.emit)
    t0 = time.perf_counter()
    try:
        val = await node.run(sc, env, i, st, CALLS)
    except asyncio.CancelledError:
        raise
    except BudgetRefused:
        val = Val(status="budget_exhausted", error="budget exhausted: call not made")
    except Exception as exc:  # noqa: BLE001 - a node records its own failure
        val = Val(status="error", error=f"{type(exc).__name__}: {exc}"[:1000])
    if node.loop is not None:
        if val.status == OK or val.present:
            sc.hist.setdefault(node.loop, []).append((sc.rounds.get(node.loop, 0),
                                                      node.name + (f"[{i + 1}]" if i is not None else ""),
                                                      val.text or fmt_data(val.data)))
        if node.until is not None and not node.fan:
            node.until.check(sc, val)
    sc.record(node.key, val, i)
    sc.emit(node.key, node.row_op, node.actor, node.model, st, val, t0, started)
    return val




def branches(node: Node, state: dict, sc: Scope) -> list[Br]:
    """The branches of a fan-out this round (one marker branch if skipped or empty): the payloads
    the graph sends (:func:`masbench.runtime.graph.sends`) and the chain runs."""
    if node.loop is not None and node.loop in sc.stop:
        return [Br(state, 0, SKIP)]
    assert node.items is not None  # compiled for every fan-out node
    items = node.items(state, sc)
    if not items:
        return [Br(state, 0, EMPTY)]
    if isinstance(items, range):
        return [Br(state, i, None) for i in items]
    return [Br(state, i, it) for i, it in enumerate(items)]


async def single(node: Node, state: dict, sc: Scope) -> dict:
    """A node that runs once per round (or once)."""
    L = node.loop
    if L is not None and L in sc.stop:
        return {}
    val = await run_node(node, sc, Env(state, sc), None)
    if L is not None and not val.present:
        return {}  # a failed round keeps the previous round's value (the best so far)
    if node.into is not None:
        return {node.key: val, node.into: [(0, node.order * 100_000, val)]}
    return {node.key: val}


async def branch(node: Node, br: Br, sc: Scope) -> dict:
    """One branch of a fan-out (its payload is a :class:`~masbench.runtime.scope.Br`)."""
    it = br.item
    if it is SKIP:
        return {}
    key = node.key
    L = node.loop
    r = sc.rounds.get(L, 0) if L is not None else 0
    if it is EMPTY:
        val = Val(status="empty", error="nothing to map over (the upstream list is empty or missing)")
        sc.record(key, val, 0)
        sc.emit(key, node.row_op, node.actor, node.model, Tally(), val, time.perf_counter())
    else:
        val = await run_node(node, sc, Env(br.state, sc, br), br.i)
    if node.into is not None:
        return {key: [(r, br.i, val)], node.into: [(0, node.order * 100_000 + br.i, val)]}
    return {key: [(r, br.i, val)]}


__all__ = ["branch", "branches", "run_node", "single"]
