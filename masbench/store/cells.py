"""Which tables hold per-cell rows, declared once: :data:`CELL_TABLES` says for every such table
how its rows key to a cell, and both resume (:func:`clean_unfinished`: delete the rows of cells
that never completed) and supersede (:func:`supersede_failed`: move or delete the rows of failed
cells so they run again) read it. A new per-cell table is one :class:`CellTable` entry.

A run has two kinds of cell:

- a **design cell** ``(design, task_id, seed)`` is done when its ``results`` row is
  acknowledged, and failed when that row's status is ``failed``;
- a **pool cell** ``(task_id, seed)`` (the CoT-SC pool of one task) is done when it holds
  ``k_max`` samples in ``pool``, and failed when any of them has an error.

The failed cells of a run are the ``cell_failures`` view (:data:`CELL_FAILURES`), read by
supersede, by the closing summary and by ``masbench status`` alike (:func:`failure_reasons`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict

from .db import Store
from .schema import CONTENT_TABLES

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

POOL_DESIGN = "__cot_pool__"
"""The ``design`` tag of the CoT-SC pool's own rows (``nodes``): they belong to pool cells."""

CellKind = Literal["design", "pool"]

DESIGN_KEY = ("design", "task_id", "seed")
POOL_KEY = ("task_id", "seed")

_DONE: dict[CellKind, str] = {
    "design": "SELECT design, task_id, seed FROM results WHERE run_id = $run",
    "pool": "SELECT task_id, seed FROM pool WHERE run_id = $run GROUP BY ALL HAVING count(*) >= $k_max",
}
"""Each kind's done cells (the rows resume keeps)."""

CELL_FAILURES = """
    SELECT run_id, 'design' AS kind, design, task_id, seed, coalesce(error, 'unknown') AS reason
    FROM results WHERE status = 'failed'
    UNION ALL
    SELECT run_id, 'pool' AS kind, NULL AS design, task_id, seed, min(error) AS reason
    FROM pool WHERE error IS NOT NULL GROUP BY run_id, task_id, seed
"""
"""The ``cell_failures`` view: one row per failed cell of every run, with its reason (a pool
cell's: the first of its samples' errors in sort order)."""

_FAILED: dict[CellKind, str] = {"design": "SELECT design, task_id, seed FROM cell_failures WHERE run_id = $run AND kind = 'design'",
           "pool": "SELECT task_id, seed FROM cell_failures WHERE run_id = $run AND kind = 'pool'"}


@dataclass(frozen=True, slots=True)
class CellRows:
    """The rows of a table that belong to one kind of cell."""

    kind: CellKind
    """Which cells: ``design`` or ``pool``."""
    key: tuple[str, ...]
    """The table's columns naming the cell: the kind's whole key (:data:`DESIGN_KEY`,
    :data:`POOL_KEY`) or a part of it (``("task_id",)`` for a table that only knows the task:
    resume removes its rows once no done cell of the task is left)."""
    where: str = "true"
    """Which rows of the table are this kind's (SQL over the table's columns)."""


@dataclass(frozen=True, slots=True)
class CellTable:
    """A table holding per-cell rows, and what resume and supersede do with them."""

    table: str
    rows: tuple[CellRows, ...]
    """How its rows key to cells (one entry per kind of cell it holds rows of)."""
    done: bool = False
    """It holds the rows that say a cell is done or failed (``results``, ``pool``): resume keeps
    them by the done rule itself, and supersede deletes them last."""
    superseded_to: str | None = None
    """Supersede moves the failed cells' rows here (still spent, no longer counted) instead of
    deleting them."""
    supersede: bool = True
    """Supersede removes the failed cells' rows (False for a table keyed coarser than a cell:
    resume, which runs next, removes them once their task has no result left)."""


_CELL_CALLS = "task_id IS NOT NULL AND "
_CALL_ROWS = (CellRows("design", DESIGN_KEY, _CELL_CALLS + "(coalesce(purpose, 'design') IN ('design', 'search') "
                                                          f"OR (purpose = 'scoring' AND design <> '{POOL_DESIGN}'))"),
              CellRows("pool", POOL_KEY, _CELL_CALLS + f"(purpose = 'pool' OR (purpose = 'scoring' AND design = "
                                                       f"'{POOL_DESIGN}'))"))
"""How a call's rows key to cells (by its purpose): ``calls`` and its transcript's ``call_messages`` alike.
A judge scorer's calls (``scoring``) belong to the cell whose reply they judged (a pool sample's to
the pool cell), so resume and supersede treat them with it."""
CELL_TABLES: tuple[CellTable, ...] = (
    CellTable("calls", _CALL_ROWS, superseded_to="calls_superseded"),
    CellTable("call_messages", _CALL_ROWS, superseded_to="call_messages_superseded"),
    CellTable("tool_calls", _CALL_ROWS, superseded_to="tool_calls_superseded"),
    CellTable("nodes", (CellRows("design", DESIGN_KEY, f"design <> '{POOL_DESIGN}'"),
                        CellRows("pool", POOL_KEY, f"design = '{POOL_DESIGN}'"))),
    CellTable("routing_decisions", (CellRows("design", DESIGN_KEY),)),
    CellTable("designs", (CellRows("design", ("task_id",), "task_id IS NOT NULL"),), supersede=False),
    CellTable("pool", (CellRows("pool", POOL_KEY),), done=True),
    CellTable("results", (CellRows("design", DESIGN_KEY),), done=True),
)
"""Every table with per-cell rows; the tables that mark cells done (``done=True``) come last."""


def drop_orphans(con: "DuckDBPyConnection") -> int:
    """Delete the rows of content-addressed tables (:data:`~.schema.CONTENT_TABLES`) that no row
    references any more (run inside the caller's transaction, after it deleted per-cell rows)."""
    n = 0
    for table, refs in CONTENT_TABLES.items():
        used = " UNION ALL ".join(f"SELECT text_hash FROM {r} WHERE text_hash IS NOT NULL" for r in refs)
        n += int(con.execute(f"DELETE FROM {table} WHERE text_hash NOT IN ({used})").fetchall()[0][0])
    return n


def _bind(sql: str, run_id: str, k_max: int = 0) -> tuple[str, dict[str, object]]:
    """The query and the named parameters (``$run``, ``$k_max``) it uses."""
    return sql, {k: v for k, v in (("run", run_id), ("k_max", k_max)) if f"${k}" in sql}


def _in(rows: CellRows, cells: str, alias: str = "t") -> str:
    """``EXISTS`` a cell of ``cells`` (a SELECT of the kind's key columns) matching the row's key."""
    on = " AND ".join(f"k.{c} = {alias}.{c}" for c in rows.key)
    return f"EXISTS (SELECT 1 FROM ({cells}) k WHERE {on})"


def clean_unfinished(store: Store, run_id: str, k_max: int) -> dict[str, int]:
    """Delete the rows of cells that never completed (design cells without a result; pool cells
    with fewer than ``k_max`` samples), so resumed cells leave no duplicates. Returns rows deleted
    per table and kind (``calls``, ``nodes``, ``pool_calls``, ``pool``, …)."""
    counts: dict[str, int] = {}
    with store.transaction() as con:
        for ct in CELL_TABLES:
            for rows in ct.rows:
                if ct.done and rows.kind == "design":  # a results row is the done mark itself
                    continue
                sql, params = _bind(f"DELETE FROM {ct.table} t WHERE t.run_id = $run AND ({rows.where}) "
                                      f"AND NOT {_in(rows, _DONE[rows.kind])}", run_id, k_max)
                n = int(con.execute(sql, params).fetchall()[0][0])
                name = ct.table if rows.kind == "design" or ct.done else f"pool_{ct.table}"
                counts[name] = counts.get(name, 0) + n
        if any(counts.values()):
            counts["orphan_texts"] = drop_orphans(con)
    return counts


def supersede_failed(store: Store, run_id: str) -> dict[str, int]:
    """Move the rows of failed cells to their ``superseded_to`` table or delete them, in one
    transaction; the cells then run again like ones never run. Returns the cells superseded by
    kind."""
    with store.transaction() as con:
        n = {k: int(con.execute(*_bind(f"SELECT count(*) FROM ({q})", run_id)).fetchall()[0][0])
             for k, q in _FAILED.items()}
        for ct in CELL_TABLES:  # the done-marking tables last: the failed cells are read from them
            if not ct.supersede:
                continue
            for rows in ct.rows:
                where = f"t.run_id = $run AND ({rows.where}) AND {_in(rows, _FAILED[rows.kind])}"
                if ct.superseded_to:
                    con.execute(*_bind(f"INSERT INTO {ct.superseded_to} BY NAME SELECT *, "
                                         f"epoch(current_timestamp) AS superseded_at FROM {ct.table} t "
                                         f"WHERE {where}", run_id))
                con.execute(*_bind(f"DELETE FROM {ct.table} t WHERE {where}", run_id))
        if any(n.values()):
            drop_orphans(con)
    return n


class DoneKeys(TypedDict):
    """The done cells of a run by kind, as key tuples."""

    design: list[tuple[str, str, int]]
    """(design, task_id, seed): :data:`DESIGN_KEY`."""
    pool: list[tuple[str, int]]
    """(task_id, seed): :data:`POOL_KEY`."""


def done_keys(store: Store, run_id: str, k_max: int) -> DoneKeys:
    """The done cells of a run by kind, as key tuples (:data:`DESIGN_KEY` / :data:`POOL_KEY`)."""
    return DoneKeys(design=store.sql(*_bind(_DONE["design"], run_id, k_max)),
                    pool=store.sql(*_bind(_DONE["pool"], run_id, k_max)))


def failure_reasons(store: Store, run_id: str, top: int = 3) -> tuple[int, list[tuple[str, int]]]:
    """(failed cells of the run — design and pool cells —, the ``top`` most frequent reasons with
    their cell counts). The one reading behind the closing summary and ``masbench status``."""
    rows = store.sql("SELECT left(reason, 160) AS reason, count(*) AS n FROM cell_failures WHERE run_id = ? "
                     "GROUP BY 1 ORDER BY n DESC, reason", [run_id])
    return sum(int(n) for _, n in rows), [(r, int(n)) for r, n in rows[:top]]


__all__ = ["CELL_FAILURES", "CELL_TABLES", "DESIGN_KEY", "POOL_DESIGN", "POOL_KEY", "CellRows", "CellTable",
           "DoneKeys", "clean_unfinished", "drop_orphans", "done_keys", "failure_reasons", "supersede_failed"]
