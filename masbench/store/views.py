"""SQL views over the store. Aggregates live here, never in Python loops over rows.

Later issues add views (marginal utility, Pareto, CoT-SC curve) by appending to ``VIEWS``.
"""

from __future__ import annotations

VIEWS: dict[str, str] = {
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
               sum(cached_tokens) AS cached_tokens, sum(cost_usd) AS cost_usd,
               sum(CASE WHEN cache_hit THEN 0 ELSE cost_usd END) AS spent_usd,
               avg(latency_s) AS mean_latency_s, sum(attempts) AS attempts,
               count(*) FILTER (WHERE error IS NOT NULL) AS errors,
               count(*) FILTER (WHERE cache_hit) AS cache_hits, bool_or(simulated) AS simulated
        FROM calls GROUP BY ALL
    """,
}
"""View name → SELECT body. Created (or replaced) every time a store is opened for writing."""


def register_view(name: str, sql: str) -> None:
    """Add a view (used by modules that own a metric)."""
    VIEWS[name] = sql


def create_views(con) -> None:
    for name, body in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {body}")
