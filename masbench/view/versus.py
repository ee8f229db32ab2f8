"""The A-vs-B grid: design A of one run against design B of the same run or of another run (of
the same store), their cells paired by task and seed as ``masbench compare --a … --b …`` pairs
them (:func:`masbench.store.run_pairs.cells_sql`): how many tasks A gets right where B is wrong
and the reverse (the discordant cells the paired test counts), a page of either list with both
answers, each linked to its trace and to the side-by-side page, what did not pair, and the paired
test of B − A in the words of ``compare``. All SQL; a page of :data:`PAGE_SIZE` rows at a time."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..harness.paired_tests import stats_spec_of
from ..harness.run_compare import compare_runs
from ..report.run_compare import verdict_line
from ..store import Store
from ..store.run_pairs import Side, Unmatched, cells_sql, unmatched
from .grid import GRID_TEXT, PAGE_SIZE

SIDES = {"a": ("A right, B wrong", "y_a = 1 AND y_b = 0"), "b": ("B right, A wrong", "y_b = 1 AND y_a = 0")}
"""``side`` → (its title, the SQL predicate over a matched ``cells`` row)."""

RULE = ("Cells are paired by task id and seed (a cell whose task id carries another gold answer does not pair); a "
        "failed cell counts as wrong, as in the paired test. A right, B wrong and the reverse are the discordant "
        "cells the test of B − A counts (exact McNemar, clustered by task).")

_COUNTS = """
SELECT count(*) FILTER (WHERE y_a = 1 AND y_b = 0), count(*) FILTER (WHERE y_b = 1 AND y_a = 0),
       count(*) FILTER (WHERE y_a = 1 AND y_b = 1), count(*) FILTER (WHERE y_a = 0 AND y_b = 0), count(*)
FROM cells WHERE match = 'matched'
"""

_ROWS = """
SELECT task_id, seed, left(gold, {text}), left(answer_a, {text}), length(answer_a) > {text}, left(answer_b, {text}),
       length(answer_b) > {text}, tokens_a, tokens_b, count(*) OVER () AS total
FROM cells WHERE match = 'matched' AND {where}
ORDER BY task_id, seed LIMIT $limit OFFSET $offset
"""


@dataclass
class Counts:
    """Matched cells by outcome."""

    a_only: int = 0
    """A right, B wrong."""
    b_only: int = 0
    """B right, A wrong."""
    both_right: int = 0
    """Both right."""
    both_wrong: int = 0
    """Both wrong."""
    matched: int = 0
    """Every matched cell."""


@dataclass
class VersusRow:
    """One discordant (task, seed) cell."""

    task: str
    """Task id."""
    seed: int
    """Seed."""
    gold: str | None
    """The gold answer (shortened)."""
    answer_a: str | None
    """A's answer (shortened)."""
    cut_a: bool
    """A's answer was shortened."""
    answer_b: str | None
    """B's answer (shortened)."""
    cut_b: bool
    """B's answer was shortened."""
    tokens_a: int | None
    """A's tokens on the cell."""
    tokens_b: int | None
    """B's tokens on the cell."""


@dataclass
class VersusPage:
    """What the A-vs-B page shows."""

    counts: Counts
    """Matched cells by outcome."""
    rows: list[VersusRow]
    """The page's cells of the side asked."""
    total: int
    """Cells of that side in all pages."""
    pages: int
    """Pages in all."""
    unmatched: list[Unmatched] = field(default_factory=list)
    """What did not pair, by kind."""
    test: str = ""
    """The paired test of B − A and its verdict, in ``compare``'s words ('' when nothing pairs)."""


def _params(a: Side, b: Side, **kw: object) -> dict[str, object]:
    return {"run_a": a.run, "design_a": a.design, "run_b": b.run, "design_b": b.design, **kw}


def versus_page(store: Store, a: Side, b: Side, side: str, page: int) -> VersusPage:
    """Page ``page`` (1-based) of the cells of ``side`` (:data:`SIDES`), with the counts and the test."""
    cells = f"WITH cells AS ({cells_sql(a, b)}) "
    n = store.sql(cells + _COUNTS, _params(a, b))[0]
    counts = Counts(*(int(x or 0) for x in n))
    got = store.sql(cells + _ROWS.format(text=GRID_TEXT, where=SIDES[side][1]),
                    _params(a, b, limit=PAGE_SIZE, offset=(max(page, 1) - 1) * PAGE_SIZE))
    rows = [VersusRow(str(t), int(s), g, aa, bool(ca), ab, bool(cb), ta, tb) for t, s, g, aa, ca, ab, cb, ta, tb, _ in got]
    total = counts.a_only if side == "a" else counts.b_only
    test = ""
    if counts.matched:
        cfg = store.sql("SELECT config FROM runs WHERE run_id = ?", [a.run])
        raw = cfg[0][0] if cfg else None
        spec = stats_spec_of(json.loads(raw) if isinstance(raw, str) else raw)
        test = verdict_line(compare_runs(store, [(a, b)], spec)[0])
    return VersusPage(counts, rows, total, max(1, -(-total // PAGE_SIZE)), unmatched(store, a, b), test)


def design_pairs(designs: list[str]) -> list[tuple[str, str]]:
    """Every pair of a run's designs, in the run's design order."""
    return [(x, y) for i, x in enumerate(designs) for y in designs[i + 1:]]


def other_runs(store: Store, run: str, limit: int = 5) -> list[tuple[str, str]]:
    """(another run, a design label it shares with ``run``) for the newest ``limit`` other runs
    of the store that share one: the same design in two runs (a model swap, v1 against v2)."""
    return [(str(r), str(d)) for r, d in store.sql("""
        WITH mine AS (SELECT DISTINCT design FROM results WHERE run_id = $run),
        shared AS (SELECT r.run_id, min(r.design) AS design FROM results r SEMI JOIN mine USING (design)
                   WHERE r.run_id <> $run GROUP BY r.run_id)
        SELECT s.run_id, s.design FROM shared s JOIN runs USING (run_id)
        ORDER BY runs.created_at DESC NULLS LAST, s.run_id LIMIT $limit""", {"run": run, "limit": limit})]


__all__ = ["Counts", "RULE", "SIDES", "VersusPage", "VersusRow", "design_pairs", "other_runs", "versus_page"]
