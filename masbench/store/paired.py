"""Per-task paired differences as SQL views (formulas in docs/metrics.md, "Paired comparisons").

- ``paired_diffs``: one row per design, group, cost unit (tokens | calls | usd | budget: the
  design's ``budget_spent`` against the curve's, on the suite's budget basis) and cell
  (task, seed): the design's correctness ``y``; the CoT-SC curve's maj@k *of that cell*
  interpolated at the design's mean cost in the group (``curve_y``, the same weights for every
  cell, so its mean is the group curve at that cost); ``diff = y − curve_y``; the CoT reference
  (the ``cot`` design on the same cell if the suite ran it, else the cell's maj@1) and
  ``diff_cot``. ``position`` says where the cost fell (within | below → compared at k = 1 |
  beyond → compared at k_max); ``k_match`` is the matched (fractional) k. For the matched cost's
  uncertainty (docs/metrics.md, "Paired comparisons"): ``cost`` (the design's cost on the cell, in
  the unit), ``sample_cost`` (the cell's mean CoT sample cost: tokens and USD from
  ``cot_sc_task_curve`` at k = 1, budget from ``pool``, 1 for calls), ``cost_mean`` (c̄, the
  design's mean cost in the group), ``sample_cost_mean`` (s̄, the curve's cost at k = 1) and
  ``slope`` (h: the group curve's accuracy gain per sample on the matched segment; 0 below and
  beyond, where the comparison is at a fixed k).
- ``paired_task_diffs``: the same averaged over each task's seeds (the unit the tests flip or
  resample: seeds are clustered by task).
- ``paired_summary``: per design, group and unit: n tasks and cells, mean and SD of the
  per-task differences against the curve and against CoT.
- ``design_pair_diffs``: per pair of designs (a, b), group and cell: both correctness values
  (the McNemar table and the design-vs-design bootstrap read it).
"""

from __future__ import annotations

_G = "AND {a}.axis_value IS NOT DISTINCT FROM {b}.axis_value"


def _where(cells: str) -> str:
    return f" WHERE {cells}" if cells else ""


def grouped_results(cols: str, cells: str = "") -> str:
    """``results``' cells once for the whole run (axis 'all') and once in their task group, with
    the keys and ``cols``: a view takes only the columns it reads. ``cells``: a condition on
    ``run_id`` and ``task_id`` (a slice of the run's tasks; empty: every row)."""
    return f"""
    SELECT run_id, design, task_id, seed, 'all' AS axis, CAST(NULL AS INTEGER) AS axis_value, {cols} FROM results{_where(cells)}
    UNION ALL
    SELECT run_id, design, task_id, seed, coalesce(axis, source), axis_value, {cols} FROM results{_where(cells)}"""


GROUPED_RESULTS = grouped_results("correct, tokens, calls, cost_usd, budget_spent")

UNITS = ("tokens", "calls", "usd", "budget")
"""The cost units a design is matched to the curve on (``budget``: the suite's budget basis)."""


def _by_unit(unit: str, tokens: str, calls: str, usd: str, budget: str) -> str:
    return f"CASE {unit} WHEN 'tokens' THEN {tokens} WHEN 'calls' THEN {calls} WHEN 'usd' THEN {usd} ELSE {budget} END"


def _matched_ctes() -> str:
    """The CTEs that match each design's mean cost per group and unit to the group's CoT-SC curve
    (``mw``: the matched segment ``k_lo``, its weight ``w``, ``position``, ``slope``, ``c``, ``x1``,
    ``k_max``): the whole run's, whatever slice of cells is read."""
    return f"""units(unit) AS (VALUES {', '.join(f"('{u}')" for u in UNITS)}),
dm AS (  -- a design's mean cost per group (as design_metrics, without its per-task tables)
    SELECT run_id, design, axis, axis_value, avg(tokens) AS tokens, avg(calls) AS calls, avg(cost_usd) AS cost_usd,
           avg(budget_spent) AS budget_spent
    FROM ({grouped_results("tokens, calls, cost_usd, budget_spent")}) GROUP BY ALL
), cost AS (
    SELECT d.run_id, d.axis, d.axis_value, d.design, u.unit,
           {_by_unit('u.unit', 'd.tokens', 'd.calls', 'd.cost_usd', 'd.budget_spent')} AS c
    FROM dm d CROSS JOIN units u
), seg AS (
    SELECT c.run_id, c.axis, c.axis_value, c.k, u.unit, c.accuracy AS y,
           {_by_unit('u.unit', 'c.tokens', 'c.calls', 'c.cost_usd', 'c.budget_spent')} AS x
    FROM cot_sc_curve c CROSS JOIN units u
), seg2 AS (
    SELECT *, lead(x) OVER w AS x2, lead(y) OVER w AS y2,
           max(k) OVER (PARTITION BY run_id, axis, axis_value, unit) AS k_max
    FROM seg WINDOW w AS (PARTITION BY run_id, axis, axis_value, unit ORDER BY k)
), pos AS (
    SELECT c.run_id, c.axis, c.axis_value, c.design, c.unit, any_value(c.c) AS c,
           min(s.k) FILTER (WHERE c.c >= s.x AND (c.c <= s.x2 OR (s.x2 IS NULL AND c.c = s.x))) AS k_in,
           min(s.x) FILTER (WHERE s.k = 1) AS x1, max(s.x) AS x_max, max(s.k_max) AS k_max
    FROM cost c JOIN seg2 s ON s.run_id = c.run_id AND s.axis = c.axis {_G.format(a='s', b='c')} AND s.unit = c.unit
    GROUP BY ALL
), m AS (
    SELECT p.*,
           CASE WHEN k_in IS NOT NULL THEN 'within' WHEN c < x1 THEN 'below' ELSE 'beyond' END AS position,
           coalesce(k_in, CASE WHEN c < x1 THEN 1 ELSE k_max END) AS k_lo
    FROM pos p WHERE x_max > 0  -- a unit the run recorded no cost in (e.g. USD of free models) is not matched
), mw AS (
    SELECT m.*, CASE WHEN m.position <> 'within' OR s.x2 IS NULL OR s.x2 = s.x THEN 0.0
                     ELSE (m.c - s.x) / (s.x2 - s.x) END AS w,
           -- the group curve's slope per sample on the matched segment (0: compared at a fixed k)
           CASE WHEN m.position <> 'within' OR s.x2 IS NULL THEN 0.0 ELSE s.y2 - s.y END AS slope
    FROM m JOIN seg2 s ON s.run_id = m.run_id AND s.axis = m.axis {_G.format(a='s', b='m')}
                      AND s.unit = m.unit AND s.k = m.k_lo
)"""


def paired_matches() -> str:
    """Each design's matched point on its group's curve per unit (the ``mw`` rows every cell of
    :func:`paired_diffs` joins): what a reader of many slices computes once (:func:`paired_diffs`'
    ``matched``) instead of once a slice, each slice's query re-reading the whole run's results."""
    return f"WITH {_matched_ctes()}\nSELECT * FROM mw"


def paired_diffs(cells: str = "", matched: str | None = None) -> str:
    """``paired_diffs``' SELECT; ``cells`` (a condition on ``run_id`` and ``task_id``) keeps only
    those cells, the filter applied to every per-cell table it joins (results, the per-task curve,
    the pool): a slice of the run's tasks is read without a join table of the whole run's. What is
    per group (a design's mean cost, the group curve) is always the whole run's: computed here, or
    read from the table ``matched`` holding :func:`paired_matches`' rows."""
    mw = f"mw AS (SELECT * FROM {matched})" if matched else _matched_ctes()
    return f"""
WITH {mw}, pb AS (  -- a cell's mean CoT sample spend on the budget basis
    SELECT run_id, task_id, seed, avg(budget_spent) AS b FROM pool{_where(cells)} GROUP BY ALL
), r AS ({grouped_results('correct, tokens, calls, cost_usd, budget_spent', cells)}), tc AS (
    SELECT * FROM cot_sc_task_curve{_where(cells)}
), cr AS (
    SELECT * FROM results{_where(cells)}
)
SELECT r.run_id, r.axis, r.axis_value, r.design, mw.unit, r.task_id, r.seed, mw.position, mw.k_lo + mw.w AS k_match,
       mw.k_max, CAST(coalesce(r.correct, false) AS DOUBLE) AS y,
       (1 - mw.w) * t1.accuracy + mw.w * coalesce(t2.accuracy, t1.accuracy) AS curve_y,
       CAST(coalesce(r.correct, false) AS DOUBLE)
           - ((1 - mw.w) * t1.accuracy + mw.w * coalesce(t2.accuracy, t1.accuracy)) AS diff,
       -- the cot design's cell if the suite ran it (a failed cell counts as wrong), else maj@1
       CASE WHEN cr.design IS NULL THEN k1.accuracy ELSE CAST(coalesce(cr.correct, false) AS DOUBLE) END AS cot_y,
       CAST(coalesce(r.correct, false) AS DOUBLE)
           - CASE WHEN cr.design IS NULL THEN k1.accuracy ELSE CAST(coalesce(cr.correct, false) AS DOUBLE) END
           AS diff_cot,
       cr.design IS NOT NULL AS cot_is_design,
       CAST({_by_unit('mw.unit', 'r.tokens', 'r.calls', 'r.cost_usd', 'r.budget_spent')} AS DOUBLE) AS cost,
       CAST({_by_unit('mw.unit', 'k1.tokens', '1.0', 'k1.cost_usd', 'pb.b')} AS DOUBLE) AS sample_cost,
       mw.c AS cost_mean, mw.x1 AS sample_cost_mean, mw.slope
FROM r
JOIN mw ON mw.run_id = r.run_id AND mw.axis = r.axis {_G.format(a='mw', b='r')} AND mw.design = r.design
JOIN tc t1 ON t1.run_id = r.run_id AND t1.task_id = r.task_id AND t1.seed = r.seed AND t1.k = mw.k_lo
LEFT JOIN tc t2 ON t2.run_id = r.run_id AND t2.task_id = r.task_id AND t2.seed = r.seed
     AND t2.k = mw.k_lo + 1
LEFT JOIN tc k1 ON k1.run_id = r.run_id AND k1.task_id = r.task_id AND k1.seed = r.seed AND k1.k = 1
LEFT JOIN pb ON pb.run_id = r.run_id AND pb.task_id = r.task_id AND pb.seed = r.seed
LEFT JOIN cr ON cr.run_id = r.run_id AND cr.task_id = r.task_id AND cr.seed = r.seed AND cr.design = 'cot'
"""


PAIRED_DIFFS = paired_diffs()


def paired_task_diffs(cells: str = "", matched: str | None = None) -> str:
    """``paired_task_diffs``' SELECT; ``cells`` and ``matched`` as in :func:`paired_diffs`."""
    return f"""
SELECT run_id, axis, axis_value, design, unit, task_id, any_value(position) AS position,
       any_value(k_match) AS k_match, any_value(k_max) AS k_max, count(*) AS seeds,
       avg(y) AS y, avg(curve_y) AS curve_y, avg(diff) AS diff, avg(cot_y) AS cot_y, avg(diff_cot) AS diff_cot,
       bool_and(cot_is_design) AS cot_is_design, avg(cost) AS cost, avg(sample_cost) AS sample_cost,
       any_value(cost_mean) AS cost_mean, any_value(sample_cost_mean) AS sample_cost_mean,
       any_value(slope) AS slope
FROM {f"({paired_diffs(cells, matched)})" if cells or matched else "paired_diffs"} GROUP BY run_id, axis, axis_value, design, unit, task_id
"""


PAIRED_TASK_DIFFS = paired_task_diffs()

PAIRED_SUMMARY = """
SELECT run_id, axis, axis_value, design, unit, any_value(position) AS position, any_value(k_match) AS k_match,
       any_value(k_max) AS k_max, count(*) AS n_tasks, CAST(sum(seeds) AS INTEGER) AS n_cells,
       avg(y) AS accuracy, avg(curve_y) AS curve_accuracy,
       avg(diff) AS mean_diff, stddev_samp(diff) AS sd_diff,
       avg(diff_cot) AS mean_diff_cot, stddev_samp(diff_cot) AS sd_diff_cot
FROM paired_task_diffs GROUP BY run_id, axis, axis_value, design, unit
"""


def design_pair_diffs(cells: str = "") -> str:
    """``design_pair_diffs``' SELECT; ``cells`` as in :func:`paired_diffs`."""
    return f"""
WITH r AS ({grouped_results("correct", cells)})
SELECT a.run_id, a.axis, a.axis_value, a.design AS design_a, b.design AS design_b, a.task_id, a.seed,
       CAST(coalesce(a.correct, false) AS DOUBLE) AS y_a, CAST(coalesce(b.correct, false) AS DOUBLE) AS y_b,
       CAST(coalesce(a.correct, false) AS DOUBLE) - CAST(coalesce(b.correct, false) AS DOUBLE) AS diff
FROM r a JOIN r b ON b.run_id = a.run_id AND b.axis = a.axis {_G.format(a='b', b='a')}
     AND b.task_id = a.task_id AND b.seed = a.seed AND b.design <> a.design
"""


DESIGN_PAIR_DIFFS = design_pair_diffs()
