"""One design of one run against one design of another run (or of the same run): their cells
paired by task and seed, as SQL over the store (formulas in docs/metrics.md, "Runs against runs").

The two sides may live in two store files: the second is attached to the first's connection
read-only (:func:`attached`) and its tables are read through its catalog name, so the pairing is
one query whichever file each side is in.

- :func:`cells_sql` — every (task, seed) cell of either side with ``match``: ``matched``,
  ``only in A``, ``only in B`` or ``gold differs`` (the same task id with another gold answer:
  not the same task); both sides' correctness ``y_a`` / ``y_b`` (a failed cell counts as wrong,
  as in ``design_pair_diffs``), ``diff = y_b − y_a``, both costs in the unit asked, and for the
  viewer's A-vs-B grid the gold, both answers and both token counts.
- :data:`TASKS` — the matched cells averaged over each task's seeds (the unit the paired test
  flips: seeds are clustered by task, as within a run).
- :data:`SUMMARY` — n tasks and cells, both accuracies, both mean costs per cell, the cost ratio
  B / A and the paired 95% interval of the per-task cost difference, ``same_cost`` by the rule the
  marginal-utility table uses (:data:`~.metrics.SAME_COST_FLOOR` or the interval holds 0).
- :data:`UNMATCHED` — per kind of mismatch: cells, tasks and the first task ids (reported, left out).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .db import Store
from .metrics import SAME_COST_FLOOR, _t975

UNITS = ("tokens", "calls", "usd", "budget")
"""Cost units a pair's cost ratio can be read in (``budget``: each run's budget basis)."""

_UNIT_COLUMN = {"tokens": "tokens", "calls": "calls", "usd": "cost_usd", "budget": "budget_spent"}

MATCHED = "matched"
ONLY_A = "only in A"
ONLY_B = "only in B"
GOLD_DIFFERS = "gold differs"


@dataclass(frozen=True)
class Side:
    """One side of a pair: a design of a run, in the store's own file or an attached one."""

    run: str
    """Run id."""
    design: str
    """Design label (``results.design``)."""
    catalog: str = ""
    """The attached store's catalog name ('' for the store's own file)."""

    def table(self, name: str) -> str:
        """``name`` qualified by this side's catalog."""
        return f"{self.catalog}.{name}" if self.catalog else name


@contextmanager
def attached(store: Store, path: str | Path, alias: str = "runs_b") -> Iterator[str]:
    """Attach the store file ``path`` read-only to ``store``'s connection as ``alias`` (yielded),
    detached again on exit. ``alias`` is ours, never user text."""
    if not alias.isidentifier():
        raise ValueError(f"not a catalog name: {alias!r}")
    quoted = str(Path(path)).replace("'", "''")
    with store.lock:
        store.con.execute(f"ATTACH '{quoted}' AS {alias} (READ_ONLY)")
    try:
        yield alias
    finally:
        with store.lock:
            store.con.execute(f"DETACH {alias}")


def cells_sql(a: Side, b: Side, unit: str = "tokens") -> str:
    """The ``cells`` relation of a pair (parameters ``$run_a``, ``$design_a``, ``$run_b``, ``$design_b``)."""
    if unit not in _UNIT_COLUMN:
        raise ValueError(f"unknown cost unit {unit!r} (units: {', '.join(UNITS)})")
    col = _UNIT_COLUMN[unit]

    def side(s: Side, run: str, design: str) -> str:
        return (f"SELECT task_id, seed, gold, CAST(coalesce(correct, false) AS DOUBLE) AS y, status, "
                f"CAST({col} AS DOUBLE) AS cost, budget_basis, answer, tokens FROM {s.table('results')} "
                f"WHERE run_id = ${run} AND design = ${design}")

    return f"""
    WITH a AS ({side(a, 'run_a', 'design_a')}), b AS ({side(b, 'run_b', 'design_b')})
    SELECT coalesce(a.task_id, b.task_id) AS task_id, coalesce(a.seed, b.seed) AS seed,
           CASE WHEN b.task_id IS NULL THEN '{ONLY_A}' WHEN a.task_id IS NULL THEN '{ONLY_B}'
                WHEN a.gold IS DISTINCT FROM b.gold THEN '{GOLD_DIFFERS}' ELSE '{MATCHED}' END AS match,
           a.y AS y_a, b.y AS y_b, b.y - a.y AS diff, a.status AS status_a, b.status AS status_b,
           a.cost AS cost_a, b.cost AS cost_b, a.budget_basis AS basis_a, b.budget_basis AS basis_b,
           coalesce(a.gold, b.gold) AS gold, a.answer AS answer_a, b.answer AS answer_b,
           a.tokens AS tokens_a, b.tokens AS tokens_b
    FROM a FULL JOIN b ON a.task_id = b.task_id AND a.seed = b.seed
    """


TASKS = """
SELECT task_id, count(*) AS seeds, avg(y_a) AS y_a, avg(y_b) AS y_b, avg(diff) AS diff,
       avg(cost_a) AS cost_a, avg(cost_b) AS cost_b
FROM cells WHERE match = 'matched' GROUP BY task_id ORDER BY task_id
"""
"""Per task (seeds averaged) over the matched cells, in task order."""

SUMMARY = f"""
WITH t AS ({TASKS}), s AS (
    SELECT count(*) AS n_tasks, CAST(sum(seeds) AS INTEGER) AS n_cells,
           sum(y_a * seeds) / sum(seeds) AS acc_a, sum(y_b * seeds) / sum(seeds) AS acc_b,
           sum(cost_a * seeds) / sum(seeds) AS cost_a, sum(cost_b * seeds) / sum(seeds) AS cost_b,
           avg(cost_b - cost_a) AS m, stddev_samp(cost_b - cost_a) AS sd, count(cost_b - cost_a) AS n_c
    FROM t)
SELECT n_tasks, n_cells, acc_a, acc_b, cost_a, cost_b, cost_b / nullif(cost_a, 0) AS cost_ratio,
       m - {_t975('n_c - 1')} * sd / sqrt(n_c) AS cost_diff_ci_lo,
       m + {_t975('n_c - 1')} * sd / sqrt(n_c) AS cost_diff_ci_hi,
       CASE WHEN cost_a IS NULL OR cost_b IS NULL THEN NULL
            WHEN cost_a = cost_b THEN true
            WHEN abs(cost_b - cost_a) < {SAME_COST_FLOOR} * cost_a THEN true
            ELSE coalesce(m - {_t975('n_c - 1')} * sd / sqrt(n_c) <= 0
                          AND m + {_t975('n_c - 1')} * sd / sqrt(n_c) >= 0, false) END AS same_cost
FROM s
"""
"""One row: the pair's n, accuracies, mean costs per cell, cost ratio B / A and whether the costs
are the same within noise (the rule of ``design_comparison.same_cost_*``)."""

UNMATCHED = """
SELECT match, count(*) AS cells, count(DISTINCT task_id) AS tasks,
       list(DISTINCT task_id ORDER BY task_id)[1:5] AS first_tasks
FROM cells WHERE match <> 'matched' GROUP BY match ORDER BY match
"""
"""Per kind of mismatch: cells, tasks and the first five task ids."""


@dataclass(frozen=True)
class Unmatched:
    """Cells of one side that have no partner on the other (reported, left out of the test)."""

    kind: str
    """``only in A``, ``only in B`` or ``gold differs``."""
    cells: int
    """(task, seed) cells."""
    tasks: int
    """Distinct tasks among them."""
    first_tasks: list[str]
    """The first five task ids."""


def _params(a: Side, b: Side) -> dict[str, Any]:
    return {"run_a": a.run, "design_a": a.design, "run_b": b.run, "design_b": b.design}


def _with_cells(a: Side, b: Side, unit: str, body: str) -> str:
    return f"WITH cells AS ({cells_sql(a, b, unit)}) SELECT * FROM ({body})"


def pair_tasks(store: Store, a: Side, b: Side, unit: str = "tokens") -> list[tuple[str, int, float]]:
    """(task id, seeds, mean of y_b − y_a over them) for every matched task, in task order."""
    rows = store.sql(_with_cells(a, b, unit, f"SELECT task_id, seeds, diff FROM ({TASKS}) ORDER BY task_id"), _params(a, b))
    return [(str(t), int(s), float(d)) for t, s, d in rows]


def pair_summary(store: Store, a: Side, b: Side, unit: str = "tokens") -> dict[str, Any]:
    """The :data:`SUMMARY` row as a dict."""
    with store.lock:
        cur = store.con.execute(_with_cells(a, b, unit, SUMMARY), _params(a, b))
        cols = [d[0] for d in cur.description or []]
        row = cur.fetchone()
    return dict(zip(cols, row or [None] * len(cols)))


def unmatched(store: Store, a: Side, b: Side) -> list[Unmatched]:
    """What does not pair, by kind (empty when every cell of both sides pairs)."""
    rows = store.sql(_with_cells(a, b, "tokens", UNMATCHED), _params(a, b))
    return [Unmatched(str(k), int(c), int(t), [str(x) for x in first]) for k, c, t, first in rows]


def bases(store: Store, side: Side) -> list[str]:
    """The budget bases a side's cells were recorded on (one for any run of one suite)."""
    return [str(r[0]) for r in store.sql(f"SELECT DISTINCT budget_basis FROM {side.table('results')} "
                                         "WHERE run_id = ? AND design = ? AND budget_basis IS NOT NULL ORDER BY 1",
                                         [side.run, side.design])]


def run_designs(store: Store, run: str, catalog: str = "") -> list[str]:
    """A run's design labels (sorted); empty for a run with no results or no such run."""
    t = f"{catalog}.results" if catalog else "results"
    return [str(r[0]) for r in store.sql(f"SELECT DISTINCT design FROM {t} WHERE run_id = ? ORDER BY 1", [run])]


def run_exists(store: Store, run: str, catalog: str = "") -> bool:
    """Whether the store (or the attached one) has the run."""
    t = f"{catalog}.runs" if catalog else "runs"
    return bool(store.sql(f"SELECT 1 FROM {t} WHERE run_id = ?", [run]))


def run_header(store: Store, run: str, catalog: str = "") -> tuple | None:
    """(suite, status, created_at, finished_at, models JSON, simulated) of a run, simulated if the
    run says so or any of its results does; None for no such run."""
    runs = f"{catalog}.runs" if catalog else "runs"
    results = f"{catalog}.results" if catalog else "results"
    rows = store.sql(f"""SELECT suite, status, created_at, finished_at, models,
                                coalesce(simulated, false) OR EXISTS (SELECT 1 FROM {results} x
                                                                     WHERE x.run_id = r.run_id AND x.simulated)
                         FROM {runs} r WHERE run_id = ?""", [run])
    return tuple(rows[0]) if rows else None


def run_config_json(store: Store, run: str, catalog: str = "") -> Any:
    """A run's stored config (``runs.config``), or None."""
    t = f"{catalog}.runs" if catalog else "runs"
    rows = store.sql(f"SELECT config FROM {t} WHERE run_id = ?", [run])
    return rows[0][0] if rows else None


__all__ = ["GOLD_DIFFERS", "MATCHED", "ONLY_A", "ONLY_B", "SUMMARY", "Side", "TASKS", "UNITS", "UNMATCHED", "Unmatched",
           "attached", "bases", "cells_sql", "pair_summary", "pair_tasks", "run_config_json", "run_header", "run_designs",
           "run_exists", "unmatched"]
