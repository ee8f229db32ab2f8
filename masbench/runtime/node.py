"""One node execution: dispatch to the op body, turn any failure into a recorded status (so one
failed branch never loses its siblings' work), keep the loop history, and emit the node row."""

from __future__ import annotations

import asyncio
import time

from .calls import BudgetRefused, sample_index
from .ops.agent import agent_body
from .ops.design import design_body
from .ops.python import python_body
from .ops.select import select_body
from .ops.until import check_until
from .ops.vote import vote_body
from .plan import Plan
from .scope import Env, Scope, Stats
from .values import OK, Val, fmt_data


async def run_node(plan: Plan, sc: Scope, env: Env, i: int | None) -> Val:
    """Run one node execution (branch ``i`` of a fan-out). Never raises, except cancellation."""
    t0 = time.perf_counter()
    st = Stats()
    kind = plan.kind
    try:
        if kind == "agent":
            val = await agent_body(plan, sc, env, sample_index(plan, sc, i or 0), st)
        elif kind == "majority":
            val = vote_body(plan, sc, env)
        elif kind == "select":
            val = await select_body(plan, sc, env, sample_index(plan, sc, 0), st)
        elif kind == "python":
            val = await python_body(plan, sc, env)
        elif kind == "design":
            val = await design_body(plan, sc, env, i or 0, st)
        else:  # pragma: no cover - loops are built from controller/exit nodes
            raise RuntimeError(f"unknown node kind {kind}")
    except asyncio.CancelledError:
        raise
    except BudgetRefused:
        val = Val(status="budget_exhausted", error="budget exhausted: call not made")
    except Exception as exc:  # noqa: BLE001 - a node records its own failure
        val = Val(status="error", error=f"{type(exc).__name__}: {exc}"[:1000])
    if plan.loop is not None:
        if val.status == OK or val.present:
            sc.hist.setdefault(plan.loop, []).append((sc.rounds.get(plan.loop, 0),
                                                      plan.name + (f"[{i + 1}]" if plan.fan else ""),
                                                      val.text or fmt_data(val.data)))
        if plan.until is not None and not plan.fan:
            check_until(plan, sc, val)
    sc.record(plan.key, val, i if plan.fan else None)
    sc.emit(plan.key, plan.op, plan.agent_name, plan.model, st, val, t0)
    return val


__all__ = ["run_node"]
