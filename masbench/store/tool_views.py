"""Tool use as a SQL view: what a run's tool calls came to, per design.

``tool_usage``: per (run, purpose, design): ``tool_calls``, ``cells`` (distinct (task, seed) that
called a tool), the count per status (``ok``, ``invalid_args``, ``unknown_tool``, ``not_allowed``,
``error``, ``refused``), ``truncated`` (results cut to the tool's cap), ``mean_latency_s`` and
``bytes_out`` (UTF-8 bytes of the full results). The design cells' rows and the CoT-SC pool's
(``purpose = 'pool'``) stay apart.
"""

from __future__ import annotations

TOOL_USAGE = """
SELECT run_id, purpose, design, count(*) AS tool_calls, count(DISTINCT (task_id, seed)) AS cells,
       count(*) FILTER (status = 'ok') AS ok,
       count(*) FILTER (status = 'invalid_args') AS invalid_args,
       count(*) FILTER (status = 'unknown_tool') AS unknown_tool,
       count(*) FILTER (status = 'not_allowed') AS not_allowed,
       count(*) FILTER (status = 'error') AS error,
       count(*) FILTER (status = 'refused') AS refused,
       count(*) FILTER (truncated) AS truncated,
       avg(latency_s) AS mean_latency_s, coalesce(sum(bytes_out), 0) AS bytes_out
FROM tool_calls GROUP BY run_id, purpose, design
"""

__all__ = ["TOOL_USAGE"]
