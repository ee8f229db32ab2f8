"""SQL views over generated designs and their search cost (listed in :data:`masbench.store.views.VIEWS`,
so every store opened for writing has them).

- ``design_validity``: per run and designer: candidates, valid, rejected, repaired, rejection rate.
- ``design_search_cost``: per run, design and task group (like ``design_metrics``): the search
  cost behind a design that ran. Two scopes:

  * ``suite`` — a design generated once for a whole suite (holistic designer): its search cost is
    the total of its search session (every candidate of that session, valid or not: all of them
    were paid for to find it), matched by design name; ``search_*_per_task`` amortizes it over
    the design's result rows (tasks × seeds) in that run. Result rows do NOT include it.
  * ``task`` — a per-task designer (meta-designer): its designer calls are ``calls`` rows with
    ``purpose = 'search'`` for that run/design/task; result rows DO include them.

- ``design_cost_search``: ``design_comparison`` plus the search cost both ways —
  ``tokens_search_excluded`` / ``usd_search_excluded`` and ``tokens_search_amortized`` /
  ``usd_search_amortized`` (and accuracy unchanged): for suite-scope designs, excluded = the
  result's cost and amortized = that + per-task search; for task scope, amortized = the result's
  cost and excluded = that − per-task search.
"""

from __future__ import annotations

from .db import Store

DESIGN_VALIDITY = """
SELECT run_id, designer, count(*) AS candidates,
       count(*) FILTER (WHERE valid) AS valid,
       count(*) FILTER (WHERE NOT valid) AS rejected,
       count(*) FILTER (WHERE valid AND repairs IS NOT NULL AND json_array_length(repairs) > 0) AS repaired,
       count(*) FILTER (WHERE NOT valid) / count(*)::DOUBLE AS rejection_rate,
       sum(tokens) AS tokens, sum(calls) AS calls, sum(cost_usd) AS cost_usd
FROM designs GROUP BY ALL
"""

DESIGN_SEARCH_COST = """
WITH sess AS (   -- one search session = one designs.run_id of suite-level designs
    SELECT run_id AS search_run, sum(tokens) AS s_tokens, sum(cost_usd) AS s_usd, sum(calls) AS s_calls,
           count(*) AS n_candidates, count(*) FILTER (WHERE valid) AS n_valid
    FROM designs WHERE task_id IS NULL GROUP BY run_id
), named AS (     -- a generated design's latest session
    SELECT name, arg_max(run_id, ts) AS search_run, arg_max(designer, ts) AS designer
    FROM designs WHERE valid AND task_id IS NULL GROUP BY name
), sc AS (        -- per-task search calls
    SELECT run_id, design, task_id, seed, sum(prompt_tokens + completion_tokens) AS tokens,
           sum(cost_usd) AS usd, count(*) AS calls
    FROM calls WHERE purpose = 'search' AND task_id IS NOT NULL GROUP BY ALL
), tdesigner AS (
    SELECT run_id, any_value(designer) AS designer, count(*) AS n_candidates,
           count(*) FILTER (WHERE valid) AS n_valid, task_id
    FROM designs WHERE task_id IS NOT NULL GROUP BY run_id, task_id
), rows AS (
    SELECT r.run_id, r.design, r.task_id, r.seed, coalesce(r.axis, r.source) AS grp, r.axis_value,
           CASE WHEN sc.run_id IS NOT NULL THEN 'task' ELSE 'suite' END AS scope,
           coalesce(n.designer, td.designer, 'meta') AS designer,
           sc.tokens AS t_tokens, sc.usd AS t_usd, sc.calls AS t_calls,
           s.s_tokens, s.s_usd, s.s_calls,
           coalesce(s.n_candidates, td.n_candidates) AS n_candidates, coalesce(s.n_valid, td.n_valid) AS n_valid
    FROM results r
    LEFT JOIN sc ON sc.run_id = r.run_id AND sc.design = r.design AND sc.task_id = r.task_id AND sc.seed = r.seed
    LEFT JOIN named n ON n.name = coalesce(r.design_name, r.design) AND sc.run_id IS NULL
    LEFT JOIN sess s ON s.search_run = n.search_run
    LEFT JOIN tdesigner td ON td.run_id = r.run_id AND td.task_id = r.task_id AND sc.run_id IS NOT NULL
    WHERE sc.run_id IS NOT NULL OR n.name IS NOT NULL
), grouped AS (
    SELECT run_id, design, 'all' AS axis, CAST(NULL AS INTEGER) AS axis_value, * EXCLUDE (run_id, design, grp, axis_value)
    FROM rows
    UNION ALL
    SELECT run_id, design, grp AS axis, axis_value, * EXCLUDE (run_id, design, grp, axis_value) FROM rows
), n_run AS (
    SELECT run_id, design, count(*) AS n_run_tasks FROM rows GROUP BY ALL
)
SELECT g.run_id, g.design, g.axis, g.axis_value, any_value(g.scope) AS scope, any_value(g.designer) AS designer,
       count(*) AS n_tasks, any_value(nr.n_run_tasks) AS n_run_tasks,
       CASE WHEN any_value(g.scope) = 'suite' THEN any_value(g.s_tokens) ELSE sum(g.t_tokens) END AS search_tokens,
       CASE WHEN any_value(g.scope) = 'suite' THEN any_value(g.s_usd) ELSE sum(g.t_usd) END AS search_usd,
       CASE WHEN any_value(g.scope) = 'suite' THEN any_value(g.s_calls) ELSE sum(g.t_calls) END AS search_calls,
       CASE WHEN any_value(g.scope) = 'suite' THEN any_value(g.s_tokens) / any_value(nr.n_run_tasks)
            ELSE avg(coalesce(g.t_tokens, 0)) END AS search_tokens_per_task,
       CASE WHEN any_value(g.scope) = 'suite' THEN any_value(g.s_usd) / any_value(nr.n_run_tasks)
            ELSE avg(coalesce(g.t_usd, 0)) END AS search_usd_per_task,
       CASE WHEN any_value(g.scope) = 'suite' THEN any_value(g.s_calls) / any_value(nr.n_run_tasks)
            ELSE avg(coalesce(g.t_calls, 0)) END AS search_calls_per_task,
       any_value(g.n_candidates) AS n_candidates, any_value(g.n_valid) AS n_valid
FROM grouped g JOIN n_run nr ON nr.run_id = g.run_id AND nr.design = g.design
GROUP BY g.run_id, g.design, g.axis, g.axis_value
"""

DESIGN_COST_SEARCH = """
SELECT c.*, s.scope AS search_scope, s.designer,
       coalesce(s.search_tokens_per_task, 0) AS search_tokens_per_task,
       coalesce(s.search_usd_per_task, 0) AS search_usd_per_task,
       coalesce(s.search_tokens, 0) AS search_tokens, coalesce(s.search_usd, 0) AS search_usd,
       CASE WHEN s.scope = 'task' THEN c.tokens - s.search_tokens_per_task ELSE c.tokens END AS tokens_search_excluded,
       CASE WHEN s.scope = 'suite' THEN c.tokens + s.search_tokens_per_task ELSE c.tokens END AS tokens_search_amortized,
       CASE WHEN s.scope = 'task' THEN c.cost_usd - s.search_usd_per_task ELSE c.cost_usd END AS usd_search_excluded,
       CASE WHEN s.scope = 'suite' THEN c.cost_usd + s.search_usd_per_task ELSE c.cost_usd END AS usd_search_amortized,
       CASE WHEN s.scope = 'task' THEN c.calls - s.search_calls_per_task ELSE c.calls END AS calls_search_excluded,
       CASE WHEN s.scope = 'suite' THEN c.calls + s.search_calls_per_task ELSE c.calls END AS calls_search_amortized
FROM design_comparison c
LEFT JOIN design_search_cost s ON s.run_id = c.run_id AND s.design = c.design AND s.axis = c.axis
     AND s.axis_value IS NOT DISTINCT FROM c.axis_value
"""



def designer_summary(store: Store, run_id: str, design: str) -> dict[str, float | int | None]:
    """A per-task designer's outcome in a run: tasks, accuracy, tokens and calls per task (its
    ``results`` rows) and the per-task designs it wrote, valid or not (``designs`` rows)."""
    tasks, acc, tokens, calls = store.sql("SELECT count(*), avg(CAST(correct AS DOUBLE)), avg(tokens), avg(calls) "
                                          "FROM results WHERE run_id = ? AND design = ?", [run_id, design])[0]
    n, valid = store.sql("SELECT count(*), count(*) FILTER (WHERE valid) FROM designs "
                         "WHERE run_id = ? AND task_id IS NOT NULL", [run_id])[0]
    return {"tasks": tasks, "accuracy": acc, "tokens_per_task": tokens, "calls_per_task": calls, "designs": n,
            "valid_designs": valid, "valid_rate": (valid / n) if n else None}


__all__ = ["DESIGN_COST_SEARCH", "DESIGN_SEARCH_COST", "DESIGN_VALIDITY", "designer_summary"]
