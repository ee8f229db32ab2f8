"""How the paired tests read a run's Holm families (:mod:`.paired_tests`): the run's tasks cut
into slices, each family's cells fetched a slice at a time as numpy arrays (no pandas frame of the
family) and handed over one cell frame at a time, in the order a frame's ``groupby`` gives them."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..store import Store
from ..store.paired import paired_matches

if TYPE_CHECKING:  # pandas is imported where frames are made: a worker process never needs it
    import pandas as pd

Cells = tuple[list[tuple], Iterator["pd.DataFrame"]]
"""One Holm family's cells: their keys in ``groupby(sort=True, dropna=False)`` order, and their
rows (each cell's frame, in task order) in the same order, read one at a time."""



PAIRED_CHUNK_TASKS = 5_000
"""Tasks per query when a family is read: DuckDB joins one slice of the run's tasks at a time, so
its working memory is one slice's (measured ≈ 5.6 KB per task when a family was one query),
whatever the run's size; the driver keeps of the family only the numbers the tests read, as
numpy arrays (:func:`_read_cells`), and makes one cell's frame at a time."""


def task_slices(store: Store, run_id: str, size: int | None = None) -> list[tuple[str, str | None]]:
    """The run's task ids cut into slices of ``size`` (default :data:`PAIRED_CHUNK_TASKS`), in
    DuckDB's string order: each slice's first id and the next slice's (None for the last)."""
    firsts = [t for (t,) in store.sql(
        "SELECT task_id FROM (SELECT task_id, row_number() OVER (ORDER BY task_id) - 1 AS i "
        "FROM (SELECT DISTINCT task_id FROM results WHERE run_id = ?)) WHERE i % ? = 0 ORDER BY task_id",
        [run_id, size or PAIRED_CHUNK_TASKS])]
    return list(zip(firsts, [*firsts[1:], None]))


def slice_condition(last: bool) -> str:
    """The cells of one slice of a run's tasks (named parameters ``run_id``, ``lo``, ``hi``)."""
    return "run_id = $run_id AND task_id >= $lo" + ("" if last else " AND task_id < $hi")


@dataclass(frozen=True)
class FamilyRead:
    """How one Holm family's cells are read from a paired view, a slice of tasks at a time."""

    keys: tuple[str, ...]
    """The columns naming a cell (the axis value first)."""
    per_row: tuple[str, ...]
    """Numeric columns the tests read row by row (kept as float arrays, ``seeds`` as integers)."""
    first: tuple[str, ...]
    """Columns read from a cell's first row only (repeated over its rows in the cell's frame)."""
    task_codes: bool = False
    """Whether a cell's rows carry their task as an integer ``task_id`` (for a per-task mean)."""
    order: str = ""
    """What orders a cell's rows after their task (a task with several rows: its seeds)."""


CURVE_READ = FamilyRead(("axis_value", "design"), ("seeds", "diff", "cost", "sample_cost", "slope"),
                        ("unit", "position", "k_match", "k_max"))
COT_READ = FamilyRead(("axis_value", "design"), ("seeds", "diff_cot", "cot_is_design"), ("unit",))
PAIR_READ = FamilyRead(("axis_value", "design_a", "design_b"), ("diff",), (), task_codes=True, order="diff")


FAMILY_TABLE = "paired_family"
"""The prefix of the temporary tables a family's rows are gathered in (DuckDB's, under its memory
limit): one a family read, numbered, dropped when its cells are read (or when the reads end)."""

_families_read = itertools.count()


def _read_cells(store: Store, view: Callable[[str], str], read: FamilyRead, where: str, params: dict[str, Any],
                slices: list[tuple[str, str | None]]) -> Cells:
    """One Holm family's cells from a paired view (``view(cells)``: the view's SELECT for those
    cells), each handed over as a frame of its rows in task order (the order the tests draw signs
    in), in the order a frame's ``groupby(sort=True, dropna=False)`` gives them (a NULL axis value
    last).

    The family's rows are gathered a slice of tasks at a time into a temporary DuckDB table (under
    DuckDB's memory limit, spilling to disk), so DuckDB's working memory is one slice's; then each
    cell's rows are fetched from it when the cell is tested. The driver holds one cell's numbers
    (its ``per_row`` columns, 8 bytes a value: ≈ 40 bytes a task against the curve) and the cells'
    keys, whatever the family's size."""
    cols = ", ".join([*read.keys, *read.per_row, *read.first, "dense_rank() OVER (ORDER BY task_id) + $code AS task"])
    table = f"temp.{FAMILY_TABLE}_{next(_families_read)}"
    with store.lock:
        for i, (lo, hi) in enumerate(slices):  # a task's code: its rank in the slice, after every earlier slice's
            args = {**params, "lo": lo, "code": i << 32} | ({} if hi is None else {"hi": hi})
            select = f"SELECT {cols} FROM ({view(slice_condition(hi is None))}) WHERE {where}"
            store.sql(f"CREATE TEMP TABLE {table.removeprefix('temp.')} AS {select}" if i == 0
                      else f"INSERT INTO {table} {select}", args)
        got = store.arrays(f"SELECT DISTINCT {', '.join(read.keys)} FROM {table}") if slices else {}
    keys = sorted((tuple(_key_value(got[k], i) for k in read.keys) for i in range(len(got.get(read.keys[0], ())))),
                  key=_key_order)
    if not keys and slices:
        store.sql(f"DROP TABLE IF EXISTS {table}")
    return keys, _frames(store, read, table, keys)


def _frames(store: Store, read: FamilyRead, table: str, keys: list[tuple]) -> Iterator[pd.DataFrame]:
    """Each cell's frame from the family's ``table``, in ``keys``' order; the table is dropped
    after the last (or when the reader stops early)."""
    import pandas as pd  # deferred, as in _base

    same = " AND ".join(f"{k} IS NOT DISTINCT FROM ${k}" for k in read.keys)
    rows_of = [*read.per_row, *(["task_id"] if read.task_codes else [])]
    order = ", ".join(["task", *([read.order] if read.order else [])])
    try:
        for key in keys:
            args = {k: None if v is pd.NA else v for k, v in zip(read.keys, key)}
            got = store.arrays(f"SELECT {', '.join([*read.per_row, *(['task AS task_id'] if read.task_codes else [])])} "
                               f"FROM {table} WHERE {same} ORDER BY {order}", args)
            rows = {c: _column(got[c], c) for c in rows_of}
            del got
            n = len(rows[rows_of[0]])
            if read.first:
                first = store.arrays(f"SELECT {', '.join(read.first)} FROM {table} WHERE {same} "
                                     f"ORDER BY {order} LIMIT 1", args)
                for c in read.first:
                    v = _key_value(first[c], 0)
                    rows[c] = np.full(n, np.nan) if v is None or v is pd.NA else np.full(n, v, dtype=object if isinstance(
                        v, str) else None)
            yield pd.DataFrame(rows)
    finally:
        store.sql(f"DROP TABLE IF EXISTS {table}")


def _key_value(col: np.ndarray, i: int) -> Any:
    """Row ``i`` of a column as a frame's ``groupby`` names it: ``pd.NA`` for NULL, Python scalars."""
    import pandas as pd  # deferred, as in _base

    if isinstance(col, np.ma.MaskedArray) and np.ma.getmaskarray(col)[i]:
        return pd.NA
    v = col[i]
    return v.item() if isinstance(v, np.generic) else v


def _column(col: np.ndarray, name: str) -> np.ndarray:
    """A slice of a fetched column as its own array: NULL as NaN (as in a pandas frame), ``seeds``
    and task codes as integers, a NULL ``cot_is_design`` as true (``all()`` skips it)."""
    if name in ("seeds", "task_id"):
        return np.array(col, np.int64)
    if name == "cot_is_design":
        return np.ma.filled(col, True).astype(bool) if isinstance(col, np.ma.MaskedArray) else np.array(col, bool)
    return np.ma.filled(np.ma.asarray(col, float), np.nan) if isinstance(col, np.ma.MaskedArray) \
        else np.array(col, float)


def _key_order(key: tuple) -> tuple:
    """A cell key's place in ``groupby(sort=True, dropna=False)`` order: a NULL axis value last."""
    import pandas as pd  # deferred, as in _base

    v = key[0]
    return ((1, 0) if v is pd.NA else (0, v), *key[1:])


def _by_value(axis: str, cells: Cells) -> Iterator[Cells]:
    """A family's cells cut into Holm families as :func:`_families` cuts a frame: for ``axis =
    'all'`` one per axis value (keys start with it, in order), else all of them."""
    keys, frames = cells
    if axis != "all":
        yield keys, frames
        return
    for _, same in itertools.groupby(keys, key=lambda k: _key_order(k)[0]):
        yield list(same), frames


def _first_key(axis: str, unit: str, keys: list[tuple], first: tuple | None) -> tuple | None:
    """The smaller of ``first`` and the smallest (axis, axis_value, design, unit) of a family's
    cells (``keys``: (axis value, design)), in ``ORDER BY ALL`` order (a NULL axis value last)."""
    for key in keys:
        k = (axis, *_key_order(key), unit)
        first = k if first is None or k < first else first
    return first


MATCHED_TABLE = "temp.paired_matched"
"""Where the reads keep the run's matched points (:func:`~masbench.store.paired.paired_matches`),
computed once instead of once a slice (each slice's query re-read the whole run's results: on a
100,000-task store ≈ 150 CPU-s of the phase's 170)."""


@contextmanager
def _lean_reads(store: Store, run_id: str) -> Iterator[None]:
    """While the families are read: the run's matched points in :data:`MATCHED_TABLE`, and DuckDB
    on one thread (a thread keeps its own share of a join's and an aggregate's tables) with no
    insertion order kept (every read has its ORDER BY). Measured on a 100,000-task store: the
    first family's query 41.6 → 29.6 s, 630 → 585 MB. Every temporary table is dropped after."""
    with store.lock:
        threads, order = store.sql("SELECT current_setting('threads'), current_setting('preserve_insertion_order')")[0]
        store.sql("SET threads = 1")
        store.sql("SET preserve_insertion_order = false")
        try:
            store.sql(f"CREATE OR REPLACE TEMP TABLE {MATCHED_TABLE.removeprefix('temp.')} AS "
                      f"SELECT * FROM ({paired_matches()}) WHERE run_id = ?", [run_id])
            yield
        finally:
            for (t,) in store.sql("SELECT table_name FROM duckdb_tables() WHERE temporary AND (table_name = ? "
                                  "OR starts_with(table_name, ?))",
                                  [MATCHED_TABLE.removeprefix("temp."), FAMILY_TABLE + "_"]):
                store.sql(f"DROP TABLE IF EXISTS temp.{t}")
            store.sql(f"SET threads = {int(threads)}")
            store.sql(f"SET preserve_insertion_order = {'true' if order else 'false'}")
