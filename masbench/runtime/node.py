"""One node execution, whoever schedules it: run the node (:meth:`Node.run
<masbench.runtime.ops.base.Node.run>`), turn any failure into a recorded status (so one failed
branch never loses its siblings' work), keep the loop history, judge the loop's stop condition
when it reads this node, and emit the node row."""

from __future__ import annotations

import asyncio
import time

from .. import telemetry
from .calls import CALLS, BudgetRefused
from .ops.base import Node
from .scope import Env, Scope, Stats
from .values import OK, Val, fmt_data


async def run_node(node: Node, sc: Scope, env: Env, i: int | None) -> Val:
    """Run one node execution (branch ``i`` of a fan-out). Never raises, except cancellation."""
    st = Stats()
    with telemetry.node(sc.prefix + node.key, node.row_op, node.agent_name, sc.sh.tags,
                        round=sc.rounds.get(node.loop, 0) if node.loop is not None else None,
                        branch=i if node.fan else None) as span:
        val = await _execute(node, sc, env, i, st)
        span.node_result(val, st)
    return val


async def _execute(node: Node, sc: Scope, env: Env, i: int | None, st: Stats) -> Val:
    """:func:`run_node`'s body: the node, its failure as a status, the loop history, the node row."""
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
                                                      node.name + (f"[{i + 1}]" if node.fan and i is not None else ""),
                                                      val.text or fmt_data(val.data)))
        if node.until is not None and not node.fan:
            node.until.check(sc, val)
    sc.record(node.key, val, i if node.fan else None)
    sc.emit(node.key, node.row_op, node.actor, node.model, st, val, t0)
    return val


__all__ = ["run_node"]
