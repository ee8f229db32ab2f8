"""Cost views: token classes per call, call statuses, and counterfactual pricing.

- ``call_classes``: every call with its five disjoint token classes (rows written before the classes
  existed fall back to ``prompt - cached`` fresh and all-visible completion), its cost provenance and
  status.
- ``call_status_counts``: per run, purpose and design: calls by status (``ok``, ``error``,
  ``usage_missing``, ``truncated``, ``empty``), estimated-usage calls, and calls by cost source.
- ``call_reprice``: every call × every named table in ``price_table``, re-priced per class:
  ``(fresh·input + cached·cached_input + write·cache_write + visible·output + reasoning·reasoning) / 1e6``
  with a NULL cached/cache-write price meaning the input price and a NULL reasoning price the output
  price. A table row for the call's own ``model`` wins over the table's ``'*'`` row. A call without
  usage (``usage_missing``) or without a matching row re-prices to NULL and is counted, never 0.
- ``agent_costs``: per run, design and agent (a node's agent, or a program design's agent as its
  calls name it): calls, tokens, USD, their mean per task of the design, and the agent's share of
  the design's tokens — what each agent spent.
- ``run_reprice`` / ``design_reprice``: the sums per run (and design): the cost the run recorded,
  the re-priced cost, both also excluding response-cache hits (``*_spent_usd``), and the calls that
  could not be re-priced.
"""

from __future__ import annotations

CALL_CLASSES = """
SELECT run_id, purpose, design, task_id, seed, node, agent, model_alias, model, call_id, cache_hit,
       coalesce(prompt_fresh_tokens, prompt_tokens - coalesce(cached_tokens, 0)) AS fresh_tokens,
       coalesce(cached_tokens, CASE WHEN prompt_tokens IS NULL THEN NULL ELSE 0 END) AS cached_read_tokens,
       coalesce(cache_write_tokens, CASE WHEN prompt_tokens IS NULL THEN NULL ELSE 0 END) AS cache_write_tokens,
       coalesce(completion_visible_tokens, completion_tokens - coalesce(reasoning_tokens, 0)) AS visible_tokens,
       coalesce(reasoning_tokens, CASE WHEN completion_tokens IS NULL THEN NULL ELSE 0 END) AS reasoning_tokens,
       prompt_tokens, completion_tokens, cost_usd, coalesce(cost_source, 'unrecorded') AS cost_source,
       coalesce(usage_status, 'reported') AS usage_status,
       coalesce(status, CASE WHEN error IS NOT NULL THEN 'error' ELSE 'ok' END) AS status
FROM calls
"""

CALL_STATUS_COUNTS = """
SELECT run_id, purpose, design, count(*) AS calls,
       count(*) FILTER (WHERE status = 'ok') AS ok,
       count(*) FILTER (WHERE status = 'error') AS error,
       count(*) FILTER (WHERE status = 'usage_missing') AS usage_missing,
       count(*) FILTER (WHERE status = 'truncated') AS truncated,
       count(*) FILTER (WHERE status = 'empty') AS empty,
       count(*) FILTER (WHERE usage_status = 'estimated') AS usage_estimated,
       count(*) FILTER (WHERE cost_source = 'unpriced') AS unpriced,
       count(*) FILTER (WHERE cost_source = 'provider-reported') AS provider_reported
FROM call_classes GROUP BY ALL
"""

_PRICE = "CASE WHEN e.model IS NOT NULL THEN e.{c} ELSE s.{c} END AS p_{c}"
_COLS = ("input_usd_per_mtok", "cached_input_usd_per_mtok", "cache_write_usd_per_mtok", "output_usd_per_mtok",
         "reasoning_usd_per_mtok")

CALL_REPRICE = f"""
WITH tables AS (SELECT DISTINCT price_table FROM price_table),
priced AS (
    SELECT c.*, t.price_table, coalesce(e.model, s.model) AS priced_as,
           {', '.join(_PRICE.format(c=c) for c in _COLS)}
    FROM call_classes c CROSS JOIN tables t
    LEFT JOIN price_table e ON e.price_table = t.price_table AND e.model = c.model
    LEFT JOIN price_table s ON s.price_table = t.price_table AND s.model = '*'
)
SELECT * EXCLUDE ({', '.join('p_' + c for c in _COLS)}),
       (fresh_tokens * p_input_usd_per_mtok
        + cached_read_tokens * coalesce(p_cached_input_usd_per_mtok, p_input_usd_per_mtok)
        + cache_write_tokens * coalesce(p_cache_write_usd_per_mtok, p_input_usd_per_mtok)
        + visible_tokens * p_output_usd_per_mtok
        + reasoning_tokens * coalesce(p_reasoning_usd_per_mtok, p_output_usd_per_mtok)) / 1e6 AS repriced_usd
FROM priced
"""

_SUMS = """count(*) AS calls, CAST(sum(fresh_tokens) AS BIGINT) AS fresh_tokens,
       CAST(sum(cached_read_tokens) AS BIGINT) AS cached_read_tokens,
       CAST(sum(cache_write_tokens) AS BIGINT) AS cache_write_tokens,
       CAST(sum(visible_tokens) AS BIGINT) AS visible_tokens, CAST(sum(reasoning_tokens) AS BIGINT) AS reasoning_tokens,
       sum(cost_usd) AS recorded_usd, sum(repriced_usd) AS repriced_usd,
       sum(CASE WHEN cache_hit THEN 0 ELSE cost_usd END) AS recorded_spent_usd,
       sum(CASE WHEN cache_hit THEN 0 ELSE repriced_usd END) AS repriced_spent_usd,
       count(*) FILTER (WHERE repriced_usd IS NULL) AS calls_not_repriced"""

RUN_REPRICE = f"SELECT run_id, price_table, {_SUMS} FROM call_reprice GROUP BY ALL"

DESIGN_REPRICE = f"""SELECT run_id, price_table, purpose, design, {_SUMS},
       count(DISTINCT (task_id, seed)) AS tasks, sum(repriced_usd) / nullif(count(DISTINCT (task_id, seed)), 0)
           AS repriced_usd_per_task
FROM call_reprice GROUP BY ALL"""

__all__ = ["CALL_CLASSES", "CALL_REPRICE", "CALL_STATUS_COUNTS", "DESIGN_REPRICE", "RUN_REPRICE"]


AGENT_COSTS = """
WITH tasks AS (SELECT run_id, design, count(*) AS tasks FROM results GROUP BY ALL),
per AS (
    SELECT run_id, design, coalesce(agent, '(none)') AS agent, count(*) AS calls,
           CAST(coalesce(sum(prompt_tokens), 0) AS BIGINT) AS prompt_tokens,
           CAST(coalesce(sum(completion_tokens), 0) AS BIGINT) AS completion_tokens,
           CAST(coalesce(sum(prompt_tokens + completion_tokens), 0) AS BIGINT) AS tokens,
           coalesce(sum(cost_usd), 0) AS cost_usd
    FROM calls WHERE coalesce(purpose, 'design') IN ('design', 'search') GROUP BY ALL)
SELECT per.*, tasks.tasks, per.calls / tasks.tasks AS calls_per_task, per.tokens / tasks.tasks AS tokens_per_task,
       per.cost_usd / tasks.tasks AS usd_per_task,
       per.tokens / nullif(sum(per.tokens) OVER (PARTITION BY per.run_id, per.design), 0) AS token_share
FROM per JOIN tasks USING (run_id, design)
"""
