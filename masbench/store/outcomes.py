"""Routing outcomes: each routed call's decision learns whether its cell was answered correctly;
and the views routing reads (listed in :data:`masbench.store.views.VIEWS`):

* ``design_task_outcomes`` — one row per (run, design, task): the design's mean correctness, USD,
  tokens and wall time over its seeds (failed cells left out: an infrastructure failure says
  nothing about competence), and the task's ``skill`` from its source and level
  (``masbench.arith``; ``masbench.depth.L1`` for level 1 of an axis). ``masbench skills learn
  --store … --candidates A,B`` reads it: the designs are the candidates.
* ``routing_choices`` — per (run, design, handbook, node, chosen candidate, skill of the task): how
  often it was chosen, and the accuracy of those choices once outcomes are filled.
"""

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


TASK_SKILL = """CASE WHEN {r}.axis_value IS NULL THEN {r}.source
                    ELSE {r}.source || '.L' || CAST({r}.axis_value AS VARCHAR) END"""
"""The skill of a result's task: its source, refined by its level on an axis."""

DESIGN_TASK_OUTCOMES = f"""
    SELECT r.run_id, r.design, r.task_id, any_value({TASK_SKILL.format(r="r")}) AS skill,
           any_value(r.source) AS source, any_value(r.axis) AS axis, any_value(r.axis_value) AS axis_value,
           avg(CAST(r.correct AS DOUBLE)) AS correct, avg(r.cost_usd) AS cost_usd,
           avg(CAST(r.tokens AS DOUBLE)) AS tokens, avg(r.wall_s) AS latency_s, avg(r.calls) AS calls,
           count(*) AS seeds, bool_or(coalesce(r.simulated, false)) AS simulated
    FROM results r WHERE r.status != 'failed'
    GROUP BY r.run_id, r.design, r.task_id
"""

ROUTING_CHOICES = f"""
    SELECT d.run_id, d.design, d.handbook, d.node, d.chosen, {TASK_SKILL.format(r="r")} AS skill,
           count(*) AS choices, count(d.outcome) AS scored, avg(CAST(d.outcome AS DOUBLE)) AS accuracy
    FROM routing_decisions d
    LEFT JOIN results r ON r.run_id = d.run_id AND r.task_id = d.task_id
         AND r.design IS NOT DISTINCT FROM d.design AND r.seed IS NOT DISTINCT FROM d.seed
    GROUP BY ALL
"""


__all__ = ["DESIGN_TASK_OUTCOMES", "ROUTING_CHOICES", "TASK_SKILL", "fill_outcomes"]
