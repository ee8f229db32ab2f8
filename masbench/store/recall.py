"""Retrieval recall as SQL views: how much of a task's gold evidence its cell's tools surfaced.

A design cell's *found* ids are the union of ``tool_calls.result_ids`` of its tool calls (the
documents its searches returned and its reads opened; design-cell purposes only, so the CoT-SC
pool's calls never count for a design). Its gold ids are ``results.evidence`` (the task's
``meta["evidence"]``, stored by the harness). Cells whose task has no evidence are left out.

- ``retrieval_recall_cells``: per (run, design, task, seed): ``n_evidence``, ``n_found`` (gold ids
  among the found ones), ``recall = n_found / n_evidence``, ``n_results`` (distinct ids found),
  ``tool_calls``.
- ``retrieval_recall``: per run, design and group (``axis = 'all'`` and the task's axis and axis
  value, or its source when it has none, as in ``design_metrics``): ``n`` cells, mean ``recall``,
  ``full_recall`` (share of cells that found every gold document), mean ``tool_calls``.
"""

from __future__ import annotations

RECALL_CELLS = """
WITH gold AS (
    SELECT run_id, design, task_id, seed, source, axis, axis_value,
           list_distinct(CAST(json_extract_string(evidence, '$[*]') AS VARCHAR[])) AS gold
    FROM results
    WHERE json_array_length(evidence) > 0  -- NULL evidence: NULL, which WHERE drops
), found AS (
    SELECT run_id, design, task_id, seed, count(*) AS tool_calls,
           list_distinct(flatten(list(coalesce(CAST(json_extract_string(result_ids, '$[*]') AS VARCHAR[]),
                                               CAST([] AS VARCHAR[]))))) AS ids
    FROM tool_calls
    WHERE task_id IS NOT NULL AND coalesce(purpose, 'design') IN ('design', 'search')
    GROUP BY run_id, design, task_id, seed
)
SELECT g.run_id, g.design, g.task_id, g.seed, g.source, g.axis, g.axis_value,
       len(g.gold) AS n_evidence,
       len(list_intersect(g.gold, coalesce(f.ids, CAST([] AS VARCHAR[])))) AS n_found,
       CAST(n_found AS DOUBLE) / n_evidence AS recall,
       coalesce(len(f.ids), 0) AS n_results, coalesce(f.tool_calls, 0) AS tool_calls
FROM gold g LEFT JOIN found f
  ON f.run_id = g.run_id AND f.design = g.design AND f.task_id = g.task_id AND f.seed = g.seed
"""

RETRIEVAL_RECALL = """
WITH base AS (
    SELECT run_id, design, 'all' AS axis, CAST(NULL AS INTEGER) AS axis_value, recall,
           n_found = n_evidence AS complete, tool_calls FROM retrieval_recall_cells
    UNION ALL
    SELECT run_id, design, coalesce(axis, source), axis_value, recall, n_found = n_evidence, tool_calls
    FROM retrieval_recall_cells
)
SELECT run_id, design, axis, axis_value, count(*) AS n, avg(recall) AS recall,
       avg(CAST(complete AS DOUBLE)) AS full_recall, avg(tool_calls) AS tool_calls
FROM base GROUP BY ALL
"""
