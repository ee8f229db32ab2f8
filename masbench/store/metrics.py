"""Equal-budget metrics as SQL views (formulas in docs/metrics.md).

Groups: every metric exists for the whole run (``axis = 'all'``) and per task group (the task's
axis and axis value, or its source when it has no axis).

- ``design_metrics``: per design and group: n, accuracy with a Wilson 95% interval at the
  task-clustered effective n (``n_eff``: seeds of a task are not independent; n_eff = n with one
  seed), mean tokens, calls and USD per task, status counts.
- ``design_comparison``: design_metrics plus, against the run's CoT-SC curve (``cot_sc_curve``)
  and its CoT reference (the ``cot`` design if the suite has it, else the curve at k = 1):
  cost multiples over CoT and CoT-SC@5; iso-cost gaps (design accuracy minus the curve's accuracy
  linearly interpolated at the design's cost) by tokens, calls and USD; the iso-accuracy cost
  ratio (design cost / the cost at which the curve first reaches the design's accuracy);
  marginal utility against CoT in pp per 1k tokens and pp per USD; Pareto membership on
  (tokens, accuracy) against the other designs and the curve points. ``iso_gap_budget`` is the
  iso-cost gap on the suite's budget basis (``budget_basis``: all tokens, completion tokens or USD;
  ``budget_spent`` is the mean spend per task on it, and the curve's ``budget_spent`` the same for
  CoT-SC@k). ``curve_ci_lo_at_tokens`` / ``curve_ci_hi_at_tokens``: the curve's 95% band at the
  design's tokens, interpolated the same way (the report's verdict reads it).
  ``same_cost_tokens`` / ``same_cost_usd``: the design's cost is within noise of CoT's (the rule:
  :data:`SAME_COST_FLOOR` and the paired interval ``cost_diff_*_ci_lo/hi`` of the per-task cost
  difference over ``cost_diff_n_tasks`` tasks); the marginal utility is then NULL, not a ratio
  over noise.
"""

from __future__ import annotations

from .paired import GROUPED_RESULTS

_Z = 1.959963984540054

SAME_COST_FLOOR = 0.10
"""A design whose mean cost differs from CoT's by less than this fraction of CoT's cost has the
same cost (no marginal utility), whatever the interval says (docs/metrics.md)."""

_T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
         2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
         2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272)
"""Student's t 97.5% quantile at 1..30 degrees of freedom."""


def _t975(nu: str) -> str:
    """SQL for Student's t 97.5% quantile at ``nu`` (an integer) degrees of freedom: the table at 1..30,
    else the Cornish-Fisher expansion around the normal quantile (Abramowitz & Stegun 26.7.5; error
    below 1e-6 past 30); NULL below 1."""
    z = _Z
    g = ((z ** 3 + z) / 4, (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
         (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
         (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160)
    table = " ".join(f"WHEN {i + 1} THEN {t}" for i, t in enumerate(_T975))
    series = " + ".join(f"{c!r} / ({nu}) ^ {i + 1}" for i, c in enumerate(g))
    return f"(CASE WHEN ({nu}) >= 1 THEN coalesce(CASE CAST({nu} AS INTEGER) {table} END, {z!r} + {series}) END)"

DESIGN_METRICS = f"""
WITH base AS (
    SELECT run_id, design, 'all' AS axis, CAST(NULL AS INTEGER) AS axis_value, task_id, correct, partial, tokens,
           calls, cost_usd, status, simulated, budget_basis, budget_spent FROM results
    UNION ALL
    SELECT run_id, design, coalesce(axis, source), axis_value, task_id, correct, partial, tokens, calls, cost_usd,
           status, simulated, budget_basis, budget_spent FROM results
), agg AS (
    SELECT run_id, design, axis, axis_value, count(*) AS n,
           avg(CAST(coalesce(correct, false) AS DOUBLE)) AS accuracy, avg(partial) AS partial,
           avg(tokens) AS tokens, avg(calls) AS calls, avg(cost_usd) AS cost_usd,
           count(*) FILTER (WHERE status = 'budget_exhausted') AS n_budget_exhausted,
           count(*) FILTER (WHERE status = 'degraded') AS n_degraded,
           count(*) FILTER (WHERE status = 'failed') AS n_failed,
           bool_or(simulated) AS simulated,
           coalesce(any_value(budget_basis), 'tokens') AS budget_basis, avg(budget_spent) AS budget_spent
    FROM base GROUP BY ALL
), per_task AS (  -- a task's cells (its seeds) together: the cluster of the clustered variance
    SELECT run_id, design, axis, axis_value, task_id, sum(CAST(coalesce(correct, false) AS DOUBLE)) AS sy,
           count(*) AS ct
    FROM base GROUP BY ALL
), clustered AS (
    SELECT a.run_id, a.design, a.axis, a.axis_value, max(t.ct) AS max_seeds,
           sum((t.sy - t.ct * a.accuracy) ^ 2) / (any_value(a.n) ^ 2) AS v_clustered
    FROM agg a JOIN per_task t ON t.run_id = a.run_id AND t.design = a.design AND t.axis = a.axis
         AND t.axis_value IS NOT DISTINCT FROM a.axis_value
    GROUP BY ALL
), eff AS (
    SELECT a.*, CASE WHEN c.max_seeds <= 1 OR c.v_clustered <= 0 THEN CAST(a.n AS DOUBLE)
                     ELSE least(CAST(a.n AS DOUBLE), a.accuracy * (1 - a.accuracy) / c.v_clustered) END AS n_eff
    FROM agg a JOIN clustered c ON c.run_id = a.run_id AND c.design = a.design AND c.axis = a.axis
         AND c.axis_value IS NOT DISTINCT FROM a.axis_value
)
SELECT *,
       (accuracy + {_Z}^2 / (2 * n_eff) - {_Z} * sqrt(accuracy * (1 - accuracy) / n_eff + {_Z}^2 / (4 * n_eff * n_eff)))
           / (1 + {_Z}^2 / n_eff) AS ci_lo,
       (accuracy + {_Z}^2 / (2 * n_eff) + {_Z} * sqrt(accuracy * (1 - accuracy) / n_eff + {_Z}^2 / (4 * n_eff * n_eff)))
           / (1 + {_Z}^2 / n_eff) AS ci_hi
FROM eff
"""

_SAME = "s.run_id = d.run_id AND s.axis = d.axis AND s.axis_value IS NOT DISTINCT FROM d.axis_value"


def _iso_cost(col: str, y: str = "y") -> str:
    """The curve's ``y`` (accuracy; ``lo`` / ``hi``: its 95% band) linearly interpolated at the
    design's cost ``col`` (NULL outside the curve), on the first segment that holds it (``= s.x1``
    adds only the last point, whose x2 is NULL: the curve's costs never decrease in k). The one
    iso-cost interpolation: the gaps and the report's band at the design's cost read it alike."""
    return f"""(SELECT CASE WHEN s.x2 IS NULL OR s.x2 = s.x1 THEN s.{y}1
                        ELSE s.{y}1 + (s.{y}2 - s.{y}1) * (d.{col} - s.x1) / (s.x2 - s.x1) END
              FROM seg_{col} s WHERE {_SAME} AND d.{col} >= s.x1 AND (d.{col} <= s.x2 OR d.{col} = s.x1)
              ORDER BY s.k LIMIT 1)"""


def _iso_acc(col: str) -> str:
    """Cost (``col``) at which the curve first reaches the design's accuracy (NULL if never): the
    first segment whose start or end reaches it (curve accuracies are never NULL: harness/curve.py)."""
    return f"""(SELECT CASE WHEN s.y1 >= d.accuracy THEN s.x1
                        ELSE s.x1 + (d.accuracy - s.y1) * (s.x2 - s.x1) / (s.y2 - s.y1) END
              FROM seg_{col} s WHERE {_SAME} AND (s.y1 >= d.accuracy OR s.y2 >= d.accuracy)
              ORDER BY s.k LIMIT 1)"""


def _seg(col: str, band: bool = False) -> str:
    """The curve's segments on cost ``col``: (x1, y1) to the next point (x2, y2), x2 NULL after the
    last; ``band``: also the 95% band at both ends (lo1, hi1, lo2, hi2), read on tokens only."""
    lohi = (", ci_lo AS lo1, ci_hi AS hi1, lead(ci_lo) OVER w AS lo2, lead(ci_hi) OVER w AS hi2" if band else "")
    return f"""seg_{col} AS (
        SELECT run_id, axis, axis_value, k, {col} AS x1, accuracy AS y1, lead({col}) OVER w AS x2,
               lead(accuracy) OVER w AS y2{lohi}
        FROM cot_sc_curve WINDOW w AS (PARTITION BY run_id, axis, axis_value ORDER BY k))"""


DESIGN_COMPARISON = f"""
WITH {_seg('tokens', band=True)}, {_seg('calls')}, {_seg('cost_usd')}, {_seg('budget_spent')},
ref AS (  -- the CoT reference: the 'cot' design if present, else the curve at k = 1
    SELECT d.run_id, d.axis, d.axis_value,
           coalesce(c.accuracy, k1.accuracy) AS cot_accuracy, coalesce(c.tokens, k1.tokens) AS cot_tokens,
           coalesce(c.calls, k1.calls) AS cot_calls, coalesce(c.cost_usd, k1.cost_usd) AS cot_cost_usd,
           k1.tokens AS k1_tokens, c.design IS NOT NULL AS cot_is_design,
           k5.accuracy AS sc5_accuracy, k5.tokens AS sc5_tokens, k5.cost_usd AS sc5_cost_usd,
           km.k AS k_max, km.accuracy AS kmax_accuracy, km.tokens AS kmax_tokens
    FROM (SELECT DISTINCT run_id, axis, axis_value FROM design_metrics) d
    LEFT JOIN design_metrics c ON c.run_id = d.run_id AND c.axis = d.axis
         AND c.axis_value IS NOT DISTINCT FROM d.axis_value AND c.design = 'cot'
    LEFT JOIN cot_sc_curve k1 ON k1.run_id = d.run_id AND k1.axis = d.axis
         AND k1.axis_value IS NOT DISTINCT FROM d.axis_value AND k1.k = 1
    LEFT JOIN cot_sc_curve k5 ON k5.run_id = d.run_id AND k5.axis = d.axis
         AND k5.axis_value IS NOT DISTINCT FROM d.axis_value AND k5.k = 5
    LEFT JOIN (SELECT * FROM cot_sc_curve QUALIFY k = max(k) OVER (PARTITION BY run_id, axis, axis_value)) km
         ON km.run_id = d.run_id AND km.axis = d.axis AND km.axis_value IS NOT DISTINCT FROM d.axis_value
), gr AS ({GROUPED_RESULTS}
), cdt AS (  -- per task: the design's cost minus the CoT reference's on the same cells, seeds averaged
    SELECT g.run_id, g.axis, g.axis_value, g.design, g.task_id,
           avg(g.tokens - CASE WHEN f.cot_is_design THEN cr.tokens ELSE k1.tokens END) AS d_tokens,
           avg(g.cost_usd - CASE WHEN f.cot_is_design THEN cr.cost_usd ELSE k1.cost_usd END) AS d_usd
    FROM gr g
    JOIN ref f ON f.run_id = g.run_id AND f.axis = g.axis AND f.axis_value IS NOT DISTINCT FROM g.axis_value
    LEFT JOIN results cr ON cr.run_id = g.run_id AND cr.task_id = g.task_id AND cr.seed = g.seed AND cr.design = 'cot'
    LEFT JOIN cot_sc_task_curve k1 ON k1.run_id = g.run_id AND k1.task_id = g.task_id AND k1.seed = g.seed
         AND k1.k = 1
    GROUP BY ALL
), cds AS (
    SELECT run_id, axis, axis_value, design, count(d_tokens) AS n_t, avg(d_tokens) AS m_t, stddev_samp(d_tokens) AS s_t,
           count(d_usd) AS n_u, avg(d_usd) AS m_u, stddev_samp(d_usd) AS s_u
    FROM cdt GROUP BY ALL
), x AS (
    SELECT d.*, r.* EXCLUDE (run_id, axis, axis_value),
           cds.n_t AS cost_diff_n_tasks, cds.m_t AS cost_diff_tokens,
           cds.m_t - {_t975('cds.n_t - 1')} * cds.s_t / sqrt(cds.n_t) AS cost_diff_tokens_ci_lo,
           cds.m_t + {_t975('cds.n_t - 1')} * cds.s_t / sqrt(cds.n_t) AS cost_diff_tokens_ci_hi,
           cds.m_u AS cost_diff_usd,
           cds.m_u - {_t975('cds.n_u - 1')} * cds.s_u / sqrt(cds.n_u) AS cost_diff_usd_ci_lo,
           cds.m_u + {_t975('cds.n_u - 1')} * cds.s_u / sqrt(cds.n_u) AS cost_diff_usd_ci_hi,
           {_iso_cost('tokens')} AS curve_acc_at_tokens,
           {_iso_cost('calls')} AS curve_acc_at_calls,
           {_iso_cost('cost_usd')} AS curve_acc_at_usd,
           {_iso_cost('budget_spent')} AS curve_acc_at_budget,
           {_iso_cost('tokens', 'lo')} AS curve_ci_lo_at_tokens,
           {_iso_cost('tokens', 'hi')} AS curve_ci_hi_at_tokens,
           {_iso_acc('tokens')} AS curve_tokens_at_acc,
           {_iso_acc('cost_usd')} AS curve_usd_at_acc
    FROM design_metrics d
    LEFT JOIN ref r ON r.run_id = d.run_id AND r.axis = d.axis AND r.axis_value IS NOT DISTINCT FROM d.axis_value
    LEFT JOIN cds ON cds.run_id = d.run_id AND cds.axis = d.axis AND cds.axis_value IS NOT DISTINCT FROM d.axis_value
         AND cds.design = d.design
), sc AS (  -- same cost as CoT: under the floor, or the paired interval of the difference holds 0
    SELECT x.*,
           CASE WHEN design = 'cot' OR tokens IS NULL OR cot_tokens IS NULL THEN NULL
                WHEN abs(tokens - cot_tokens) < {SAME_COST_FLOOR} * cot_tokens THEN true
                ELSE coalesce(cost_diff_tokens_ci_lo <= 0 AND cost_diff_tokens_ci_hi >= 0, false) END
               AS same_cost_tokens,
           CASE WHEN design = 'cot' OR cost_usd IS NULL OR cot_cost_usd IS NULL
                     OR (cost_usd = 0 AND cot_cost_usd = 0) THEN NULL
                WHEN abs(cost_usd - cot_cost_usd) < {SAME_COST_FLOOR} * cot_cost_usd THEN true
                ELSE coalesce(cost_diff_usd_ci_lo <= 0 AND cost_diff_usd_ci_hi >= 0, false) END AS same_cost_usd
    FROM x
)
SELECT x.*,
       tokens / nullif(cot_tokens, 0) AS x_cot_tokens,
       cost_usd / nullif(cot_cost_usd, 0) AS x_cot_usd,
       tokens / nullif(sc5_tokens, 0) AS x_sc5_tokens,
       cost_usd / nullif(sc5_cost_usd, 0) AS x_sc5_usd,
       accuracy - curve_acc_at_tokens AS iso_gap_tokens,
       accuracy - curve_acc_at_calls AS iso_gap_calls,
       accuracy - curve_acc_at_usd AS iso_gap_usd,
       accuracy - curve_acc_at_budget AS iso_gap_budget,
       CASE WHEN kmax_tokens IS NULL THEN NULL WHEN tokens > kmax_tokens THEN 'beyond'
            WHEN tokens < k1_tokens THEN 'below' ELSE 'within' END AS cost_vs_curve,
       accuracy - kmax_accuracy AS gap_vs_kmax,
       tokens / nullif(curve_tokens_at_acc, 0) AS iso_acc_cost_ratio_tokens,
       cost_usd / nullif(curve_usd_at_acc, 0) AS iso_acc_cost_ratio_usd,
       CASE WHEN NOT coalesce(same_cost_tokens, false)
            THEN 100 * (accuracy - cot_accuracy) / nullif((tokens - cot_tokens) / 1000.0, 0) END AS mu_pp_per_1k_tokens,
       -- false only where the costs differ (equal costs >= 0 are under the floor, or both 0: NULL)
       CASE WHEN NOT same_cost_usd
            THEN 100 * (accuracy - cot_accuracy) / (cost_usd - cot_cost_usd) END AS mu_pp_per_usd,
       NOT EXISTS (
           SELECT 1 FROM design_metrics o WHERE o.run_id = x.run_id AND o.axis = x.axis
             AND o.axis_value IS NOT DISTINCT FROM x.axis_value
             AND o.tokens <= x.tokens AND o.accuracy >= x.accuracy AND (o.tokens < x.tokens OR o.accuracy > x.accuracy))
       AND NOT EXISTS (
           SELECT 1 FROM cot_sc_curve c WHERE c.run_id = x.run_id AND c.axis = x.axis
             AND c.axis_value IS NOT DISTINCT FROM x.axis_value
             AND c.tokens <= x.tokens AND c.accuracy >= x.accuracy AND (c.tokens < x.tokens OR c.accuracy > x.accuracy))
       AS pareto
FROM sc x
"""


