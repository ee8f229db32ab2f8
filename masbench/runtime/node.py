"""One node execution: run the node's op (``plan.op.run``), turn any failure into a recorded
status (so one failed branch never loses its siblings' work), keep the loop history, and emit the
node row."""

from __future__ import annotations

import asyncio
import time

from .. import telemetry
from .calls import CALLS, BudgetRefused
from .ops.until import check_until
from .plan import Plan
from .scope import Env, Scope, Stats
from .values import OK, Val, fmt_data


async def run_node(plan: Plan, sc: Scope, env: Env, i: int | None) -> Val:
    """Run one node execution (branch ``i`` of a fan-out). Never raises, except cancellation."""
    st = Stats()
    with telemetry.node(sc.prefix + plan.key, plan.row_op, plan.agent.name if plan.agent is not None else None,
                        sc.sh.tags, round=sc.rounds.get(plan.loop, 0) if plan.loop is not None else None,
                        branch=i if plan.fan else None) as span:
        val = await _execute(plan, sc, env, i, st)
        span.node_result(val, st)
    return val


async def _execute(plan: Plan, sc: Scope, env: Env, i: int | None, st: Stats) -> Val:
    """:func:`run_node`'s body: the op, its failure as a status, the loop history, the node row."""
    t0 = time.perf_counter()
    try:
        val = await plan.op.run(plan, sc, env, i, st, CALLS)
    except asyncio.CancelledError:
        raise
    except BudgetRefused:
        val = Val(status="budget_exhausted", error="budget exhausted: call not made")
    except Exception as exc:  # noqa: BLE001 - a node records its own failure
        val = Val(status="error", error=f"{type(exc).__name__}: {exc}"[:1000])
    if plan.loop is not None:
        if val.status == OK or val.present:
            sc.hist.setdefault(plan.loop, []).append((sc.rounds.get(plan.loop, 0),
                                                      plan.name + (f"[{i + 1}]" if plan.fan and i is not None else ""),
                                                      val.text or fmt_data(val.data)))
        if plan.until is not None and not plan.fan:
            check_until(plan, sc, val)
    sc.record(plan.key, val, i if plan.fan else None)
    sc.emit(plan.key, plan.row_op, plan.agent_name, plan.model, st, val, t0)
    return val


__all__ = ["run_node"]
