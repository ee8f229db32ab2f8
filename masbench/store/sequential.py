"""The SQL of a sequential run (``masbench run --until-decided``; docs/sequential.md).

Queries the harness runs at each look (parameters named ``$run``, ``$design``, ``$unit``,
``$tasks`` — a list of task ids — and ``$ks`` — the matched k of each of those tasks):

- :data:`DESIGN_COST`: a design's mean cost per cell over the given tasks, on a matching unit
  (``budget``: ``results.budget_spent``; ``tokens``; ``calls``; ``usd``: ``cost_usd``);
- :data:`POOL_SAMPLE_COST`: the CoT-SC pool's mean cost per sample over the same tasks, on the
  same unit (``calls``: one per sample) — the curve's cost at k is k times it;
- :data:`TASK_DIFFS`: per task, in the given order: the design's correctness averaged over the
  task's seeds, the curve's per-cell maj@k (``cot_sc_task_curve``) linearly interpolated at the
  task's matched fractional k and averaged the same way, and their difference;
- :data:`DESIGN_TOTALS`: what a design has spent so far (tasks, cells, calls, tokens, USD, budget).

Views (registered in :mod:`.views`):

- ``sequential_decisions``: per run and design, its first decided look (the last look if it was
  never decided): tasks, calls and cost at that look, the cap, the verdict, and the saving against
  running all ``max_tasks`` tasks: ``saved_calls = 1 − calls / (calls per task × max_tasks)`` and
  ``saved_tasks = 1 − n_tasks / max_tasks`` (equal by construction while a design's calls per task
  are estimated by its own mean; they are two columns so the formula is explicit);
- ``sequential_run_saving``: per sequential run, the calls made by every design and the pool
  against those a fixed-n run of ``max_tasks`` tasks would have made at each one's own mean calls
  per task.
"""

from __future__ import annotations

_UNIT_RESULTS = ("CASE $unit WHEN 'budget' THEN r.budget_spent WHEN 'tokens' THEN CAST(r.tokens AS DOUBLE) "
                 "WHEN 'calls' THEN CAST(r.calls AS DOUBLE) ELSE r.cost_usd END")
_UNIT_POOL = ("CASE $unit WHEN 'budget' THEN p.budget_spent WHEN 'tokens' THEN CAST(p.tokens AS DOUBLE) "
              "WHEN 'calls' THEN 1.0 ELSE p.cost_usd END")

DESIGN_COST = f"""
SELECT avg({_UNIT_RESULTS}) FROM results r
WHERE r.run_id = $run AND r.design = $design AND list_contains($tasks, r.task_id)
"""

POOL_SAMPLE_COST = f"""
SELECT avg({_UNIT_POOL}) FROM pool p WHERE p.run_id = $run AND list_contains($tasks, p.task_id)
"""

TASK_DIFFS = """
WITH m AS (
    SELECT unnest($tasks) AS task_id, unnest($ks) AS k, generate_subscripts($tasks, 1) AS ord
), mw AS (
    SELECT task_id, ord, CAST(floor(k) AS INTEGER) AS k_lo, k - floor(k) AS w FROM m
), cells AS (
    SELECT mw.ord, mw.task_id, CAST(coalesce(r.correct, false) AS DOUBLE) AS y,
           (1 - mw.w) * t1.accuracy + mw.w * coalesce(t2.accuracy, t1.accuracy) AS curve_y
    FROM mw
    JOIN results r ON r.run_id = $run AND r.design = $design AND r.task_id = mw.task_id
    JOIN cot_sc_task_curve t1 ON t1.run_id = r.run_id AND t1.task_id = r.task_id AND t1.seed = r.seed
         AND t1.k = mw.k_lo
    LEFT JOIN cot_sc_task_curve t2 ON t2.run_id = r.run_id AND t2.task_id = r.task_id AND t2.seed = r.seed
         AND t2.k = mw.k_lo + 1
)
SELECT ord, task_id, count(*) AS seeds, avg(y) AS y, avg(curve_y) AS curve_y, avg(y) - avg(curve_y) AS diff
FROM cells GROUP BY ord, task_id ORDER BY ord
"""

DESIGN_TOTALS = """
SELECT count(DISTINCT task_id) AS n_tasks, count(*) AS n_cells, coalesce(sum(calls), 0) AS calls,
       coalesce(sum(tokens), 0) AS tokens, coalesce(sum(cost_usd), 0) AS cost_usd,
       coalesce(sum(budget_spent), 0) AS budget_spent
FROM results WHERE run_id = $run AND design = $design
"""

SEQUENTIAL_DECISIONS = """
WITH span AS (
    SELECT run_id, design, min(look) FILTER (WHERE decided) AS look_decided, max(look) AS look_last
    FROM sequential_looks GROUP BY run_id, design
)
SELECT l.run_id, l.design, l.look, s.look_last AS looks, l.decided, l.verdict, l.reason, l.unit,
       l.n_tasks, l.n_cells, l.calls, l.tokens, l.cost_usd, l.budget_spent, l.max_tasks, l.batch,
       least(l.look * l.batch, l.max_tasks) AS tasks_drawn,
       NOT l.decided AND least(l.look * l.batch, l.max_tasks) >= l.max_tasks AS at_cap,
       l.mean_diff, l.cs_lo, l.cs_hi, l.p_anytime, l.p_holm, l.level_holm, l.family_size, l.position, l.method,
       l.alpha,
       CAST(l.calls AS DOUBLE) * l.max_tasks / nullif(l.n_tasks, 0) AS calls_at_cap,
       1 - l.calls / nullif(CAST(l.calls AS DOUBLE) * l.max_tasks / nullif(l.n_tasks, 0), 0) AS saved_calls,
       1 - CAST(l.n_tasks AS DOUBLE) / nullif(l.max_tasks, 0) AS saved_tasks
FROM sequential_looks l
JOIN span s ON s.run_id = l.run_id AND s.design = l.design AND l.look = coalesce(s.look_decided, s.look_last)
"""

SEQUENTIAL_RUN_SAVING = """
WITH cap AS (
    SELECT run_id, max(max_tasks) AS max_tasks FROM sequential_looks GROUP BY run_id
), d AS (
    SELECT r.run_id, r.design, CAST(sum(r.calls) AS DOUBLE) AS calls, count(DISTINCT r.task_id) AS n_tasks
    FROM results r GROUP BY ALL
), p AS (
    SELECT c.run_id, '(CoT-SC pool)' AS design, CAST(count(*) AS DOUBLE) AS calls,
           count(DISTINCT c.task_id) AS n_tasks
    FROM calls c WHERE c.purpose = 'pool' GROUP BY ALL
), u AS (SELECT * FROM d UNION ALL SELECT * FROM p)
-- runs without looks drop out at the join with cap; n_tasks >= 1 (a group of rows with task ids)
SELECT u.run_id, any_value(cap.max_tasks) AS max_tasks, CAST(sum(u.calls) AS BIGINT) AS calls,
       sum(u.calls * cap.max_tasks / u.n_tasks) AS calls_fixed_n,
       1 - sum(u.calls) / nullif(sum(u.calls * cap.max_tasks / u.n_tasks), 0) AS saved_calls
FROM u JOIN cap USING (run_id) GROUP BY u.run_id
"""

__all__ = ["DESIGN_COST", "DESIGN_TOTALS", "POOL_SAMPLE_COST", "SEQUENTIAL_DECISIONS", "SEQUENTIAL_RUN_SAVING",
           "TASK_DIFFS"]
