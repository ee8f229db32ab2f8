"""The design × task grid: one row per (task, seed), one column per design, a page of
:data:`PAGE_SIZE` rows at a time, chosen by a filter of :mod:`.filters`. All SQL: the page's rows
are selected, counted and fetched in one query (LIMIT/OFFSET over the matching tasks), however
large the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..harness.cells import design_entries
from ..store import Store, suite_config
from .filters import FILTERS

PAGE_SIZE = 100
"""Tasks (rows) per grid page."""

GRID_TEXT = 60
"""Characters of an answer shown in a grid cell (the trace page shows it whole)."""

CELLS = """
WITH unit AS (
    SELECT coalesce(any_value(unit) FILTER (WHERE is_verdict), 'tokens') AS u FROM paired_tests
    WHERE run_id = $run AND against = 'curve'),
ks AS (SELECT DISTINCT k FROM cot_sc_task_curve WHERE run_id = $run),
pt AS (SELECT design, any_value(k_match) AS k_match FROM paired_tests
       WHERE run_id = $run AND against = 'curve' AND axis = 'all' AND unit = (SELECT u FROM unit) GROUP BY design),
matched AS (  -- the stored k nearest the design's k_match (ties to the smaller k)
    SELECT pt.design, pt.k_match, arg_min(ks.k, abs(ks.k - pt.k_match) * 1e6 + ks.k) AS k
    FROM pt CROSS JOIN ks WHERE pt.k_match IS NOT NULL GROUP BY pt.design, pt.k_match),
tr AS (SELECT design, task_id, seed, count(*) AS n FROM calls
       WHERE run_id = $run AND purpose = 'design' AND status = 'truncated' GROUP BY ALL),
cells AS (
    SELECT r.design, r.task_id, r.seed, r.correct, r.status, r.answer, r.gold, r.tokens, r.cost_usd, r.calls,
           m.k AS sc_k, c.accuracy AS sc_acc, coalesce(tr.n, 0) AS n_truncated
    FROM results r
    LEFT JOIN matched m ON m.design = r.design
    LEFT JOIN cot_sc_task_curve c ON c.run_id = r.run_id AND c.task_id = r.task_id AND c.seed = r.seed AND c.k = m.k
    LEFT JOIN tr ON tr.design = r.design AND tr.task_id = r.task_id AND tr.seed = r.seed
    WHERE r.run_id = $run)
"""
"""The ``cells`` relation every filter's predicate reads (see :mod:`.filters`)."""

_PAGE = CELLS + """,
hit AS (SELECT task_id, seed, list(design) AS hits FROM cells
        WHERE ({where}) AND ($design IS NULL OR design = $design) GROUP BY task_id, seed),
page AS (SELECT task_id, seed, hits, count(*) OVER () AS total FROM hit
         ORDER BY task_id, seed LIMIT $limit OFFSET $offset),
pool AS (SELECT p.task_id, p.seed, count(*) AS n, count(*) FILTER (WHERE p.correct) AS n_right FROM pool p
         SEMI JOIN page USING (task_id, seed) WHERE p.run_id = $run GROUP BY ALL)
SELECT page.task_id, page.seed, page.total, c.design, c.correct, c.status, left(c.answer, {text}) AS answer,
       length(c.answer) > {text} AS answer_cut, left(c.gold, {text}) AS gold, c.tokens, c.cost_usd, c.calls,
       c.sc_k, c.sc_acc, c.n_truncated, list_contains(page.hits, c.design) AS hit, pool.n AS pool_n,
       pool.n_right AS pool_right
FROM page JOIN cells c USING (task_id, seed) LEFT JOIN pool USING (task_id, seed)
ORDER BY page.task_id, page.seed, c.design
"""

_HITS = CELLS + """,
hit AS (SELECT DISTINCT task_id, seed FROM cells WHERE ({where}) AND ($design IS NULL OR design = $design))
SELECT count(*) FROM hit
"""
"""The matching tasks in all pages (asked when a page past the end has no row to carry the total)."""

_DESIGNS = "SELECT design FROM results WHERE run_id = ? GROUP BY design ORDER BY min(ts) NULLS LAST, design"

_MATCHED = CELLS + " SELECT design, k_match, k FROM matched ORDER BY design"


@dataclass
class GridRow:
    """One (task, seed) row of a grid page: its cells by design, the pool's tally."""

    task: str
    """Task id."""
    seed: int
    """Seed."""
    gold: str | None = None
    """The gold answer (shortened)."""
    pool_n: int | None = None
    """CoT-SC pool samples of the cell."""
    pool_right: int | None = None
    """Of which correct."""
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Design label → that design's cell (correct, status, answer, tokens, …, ``hit``: it matches the filter)."""


@dataclass
class GridPage:
    """A page of the grid."""

    rows: list[GridRow]
    """The page's task rows."""
    total: int
    """Matching tasks in all pages."""
    pages: int
    """Pages in all."""


def designs(store: Store, run: str) -> list[str]:
    """The run's design labels: in the suite's order, then any other in the order it first wrote a result."""
    got = [r[0] for r in store.sql(_DESIGNS, [run])]
    suite, _ = suite_config(store, run)
    try:
        order = [e.label for e in design_entries(suite)] if suite is not None else []
    except ValueError:
        order = []
    rank = {d: i for i, d in enumerate(order)}
    return sorted(got, key=lambda d: (rank.get(d, len(rank)), got.index(d)))


def grid_page(store: Store, run: str, filter: str, design: str | None, page: int) -> GridPage:
    """Page ``page`` (1-based) of the grid of ``run`` under ``filter`` (``design``: only its cells decide)."""
    f = FILTERS[filter]
    keys = {"run": run, "design": design}
    got = store.sql(_PAGE.format(where=f.where, text=GRID_TEXT),
                    keys | {"limit": PAGE_SIZE, "offset": (max(page, 1) - 1) * PAGE_SIZE})
    rows: dict[tuple[str, int], GridRow] = {}
    total = 0
    for (task, seed, total, d, correct, status, answer, cut, gold, tokens, cost, calls, sc_k, sc_acc, n_trunc, hit,
         pool_n, pool_right) in got:
        row = rows.setdefault((task, seed), GridRow(task, seed, gold, pool_n, pool_right))
        row.cells[d] = {"correct": correct, "status": status, "answer": answer, "answer_cut": cut, "tokens": tokens,
                        "cost_usd": cost, "calls": calls, "sc_k": sc_k, "sc_acc": sc_acc, "n_truncated": n_trunc,
                        "hit": hit}
    if not got and page > 1:  # past the end: report the real total
        total = store.sql(_HITS.format(where=f.where), keys)[0][0]
    total = int(total)
    return GridPage(list(rows.values()), total, max(1, -(-total // PAGE_SIZE)))


def matched_k(store: Store, run: str) -> list[tuple[str, float | None, int | None]]:
    """(design, k_match, the stored k it rounds to) for every design of the run with a paired test."""
    return [(r[0], r[1], r[2]) for r in store.sql(_MATCHED, {"run": run})]


__all__ = ["CELLS", "GRID_TEXT", "GridPage", "GridRow", "PAGE_SIZE", "designs", "grid_page", "matched_k"]
