"""Routing outcomes: each routed call's decision learns whether its cell was answered correctly."""

from __future__ import annotations

from .db import Store


def fill_outcomes(store: Store, run_id: str | None = None) -> int:
    """Set ``routing_decisions.outcome`` from the scored ``results`` of the same (run, design,
    task, seed), of one run or (``None``) every run. Returns the number of decisions updated."""
    where = "AND d.run_id = ?" if run_id else ""
    params = [run_id] if run_id else []
    n_before = store.sql(f"SELECT count(*) FROM routing_decisions d WHERE d.outcome IS NULL {where}", params)[0][0]
    store.sql(f"""
        UPDATE routing_decisions AS d SET outcome = r.correct
        FROM results AS r
        WHERE d.run_id = r.run_id AND d.task_id = r.task_id
          AND d.design IS NOT DISTINCT FROM r.design AND d.seed IS NOT DISTINCT FROM r.seed
          AND d.outcome IS NULL {where}""", params)
    n_after = store.sql(f"SELECT count(*) FROM routing_decisions d WHERE d.outcome IS NULL {where}", params)[0][0]
    return int(n_before - n_after)


__all__ = ["fill_outcomes"]
