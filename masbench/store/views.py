"""SQL views over the store. Aggregates live here, never in Python loops over rows.

:data:`VIEWS` lists every view, in creation order (a view may read the ones before it); the
metric and design-search views are lazy entries in the modules that document them.
"""

from __future__ import annotations

import hashlib

from ..registry import Registry

VIEWS: Registry[str] = Registry("view", {
    "run_summary": """
        SELECT r.run_id, r.suite, r.status, r.created_at, r.finished_at, r.simulated,
               (SELECT count(*) FROM results x WHERE x.run_id = r.run_id) AS results,
               (SELECT count(*) FROM calls c WHERE c.run_id = r.run_id) AS calls,
               (SELECT CAST(coalesce(sum(c.prompt_tokens + c.completion_tokens), 0) AS BIGINT) FROM calls c WHERE c.run_id = r.run_id) AS tokens,
               (SELECT coalesce(sum(c.cost_usd), 0) FROM calls c WHERE c.run_id = r.run_id) AS cost_usd,
               (SELECT count(*) FROM calls c WHERE c.run_id = r.run_id AND c.error IS NOT NULL) AS failed_calls
        FROM runs r
    """,
    "call_usage": """
        SELECT run_id, purpose, design, model, count(*) AS calls,
               sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
               sum(cached_tokens) AS cached_tokens, sum(cache_write_tokens) AS cache_write_tokens,
               sum(reasoning_tokens) AS reasoning_tokens, sum(cost_usd) AS cost_usd,
               sum(CASE WHEN cache_hit THEN 0 ELSE cost_usd END) AS spent_usd,
               avg(latency_s) AS mean_latency_s, sum(attempts) AS attempts,
               count(*) FILTER (WHERE error IS NOT NULL) AS errors,
               count(*) FILTER (WHERE cache_hit) AS cache_hits, bool_or(simulated) AS simulated,
               count(*) FILTER (WHERE status = 'usage_missing') AS usage_missing,
               count(*) FILTER (WHERE status = 'truncated') AS truncated,
               count(*) FILTER (WHERE status = 'empty') AS empty,
               string_agg(DISTINCT cost_source, ',') AS cost_sources
        FROM calls GROUP BY ALL
    """,
    "call_classes": "masbench.store.cost_views:CALL_CLASSES",
    "call_status_counts": "masbench.store.cost_views:CALL_STATUS_COUNTS",
    "call_reprice": "masbench.store.cost_views:CALL_REPRICE",
    "run_reprice": "masbench.store.cost_views:RUN_REPRICE",
    "design_reprice": "masbench.store.cost_views:DESIGN_REPRICE",
    "agent_costs": "masbench.store.cost_views:AGENT_COSTS",
    "run_spend": """
        WITH c AS (
            SELECT run_id, false AS superseded, prompt_tokens, completion_tokens, cost_usd, cache_hit FROM calls
            UNION ALL
            SELECT run_id, true, prompt_tokens, completion_tokens, cost_usd, cache_hit FROM calls_superseded)
        SELECT run_id,
               count(*) FILTER (WHERE NOT superseded) AS counted_calls,
               count(*) FILTER (WHERE superseded) AS superseded_calls,
               count(*) AS spent_calls,
               coalesce(sum(cost_usd) FILTER (WHERE NOT superseded), 0) AS counted_usd,
               coalesce(sum(cost_usd) FILTER (WHERE NOT cache_hit), 0) AS spent_usd,
               coalesce(sum(cost_usd) FILTER (WHERE superseded AND NOT cache_hit), 0) AS superseded_usd,
               CAST(coalesce(sum(prompt_tokens + completion_tokens) FILTER (WHERE NOT superseded), 0) AS BIGINT)
                   AS counted_tokens,
               CAST(coalesce(sum(prompt_tokens + completion_tokens), 0) AS BIGINT) AS spent_tokens
        FROM c GROUP BY run_id
    """,
    "cell_failures": "masbench.store.cells:CELL_FAILURES",
    "design_metrics": "masbench.store.metrics:DESIGN_METRICS",
    "design_comparison": "masbench.store.metrics:DESIGN_COMPARISON",
    "paired_diffs": "masbench.store.paired:PAIRED_DIFFS",
    "paired_task_diffs": "masbench.store.paired:PAIRED_TASK_DIFFS",
    "paired_summary": "masbench.store.paired:PAIRED_SUMMARY",
    "design_pair_diffs": "masbench.store.paired:DESIGN_PAIR_DIFFS",
    "design_validity": "masbench.store.design_views:DESIGN_VALIDITY",
    "design_search_cost": "masbench.store.design_views:DESIGN_SEARCH_COST",
    "design_cost_search": "masbench.store.design_views:DESIGN_COST_SEARCH",
    "retrieval_recall_cells": "masbench.store.recall:RECALL_CELLS",
    "retrieval_recall": "masbench.store.recall:RETRIEVAL_RECALL",
    "tool_usage": "masbench.store.tool_views:TOOL_USAGE",
    "sequential_decisions": "masbench.store.sequential:SEQUENTIAL_DECISIONS",
    "sequential_run_saving": "masbench.store.sequential:SEQUENTIAL_RUN_SAVING",
    "design_task_outcomes": "masbench.store.outcomes:DESIGN_TASK_OUTCOMES",
    "routing_choices": "masbench.store.outcomes:ROUTING_CHOICES",
    "judge_usage": "masbench.store.judge_views:JUDGE_USAGE",
    "judge_agreement": "masbench.store.judge_views:JUDGE_AGREEMENT",
})
"""View name → SELECT body. Created (or replaced) when a store is opened for writing and its views differ from these."""


def register_view(name: str, sql: str) -> None:
    """Add (or replace) a view; it is created after the ones already listed."""
    VIEWS.add(name, sql, replace=True)


_STAMP = "masbench views "
"""Start of the comment each view carries: this prefix and the digest of the whole list it was made from."""


def views_digest() -> str:
    """A digest of every listed view's name and body, in order (changes when any view does)."""
    h = hashlib.blake2b(digest_size=12)
    for name, body in VIEWS.items():
        h.update(f"{name}\0{body}\0".encode())
    return h.hexdigest()


def create_views(con) -> None:
    """(Re)create every listed view on a DuckDB connection, unless the file already holds exactly
    these views (each stamped, in a comment, with the digest of the list that made it). Recreating
    the 25 views took ~85 ms of every write-open of a store; reading the stamps takes ~5 ms."""
    stamp = _STAMP + views_digest()
    names = list(VIEWS)
    held = dict(con.execute("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal AND "
                            "view_name IN (SELECT unnest(?::VARCHAR[]))", [names]).fetchall())
    if len(held) == len(names) and all(c == stamp for c in held.values()):
        return
    for name, body in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {body}")
        con.execute(f"COMMENT ON VIEW {name} IS '{stamp}'")


def ensure_views(store) -> None:
    """(Re)create every listed view on an open :class:`~masbench.store.Store`."""
    with store.lock:
        create_views(store.con)
