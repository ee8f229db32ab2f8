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
    order: str = "task_id"
    """What orders a cell's rows after its keys."""


CURVE_READ = FamilyRead(("axis_value", "design"), ("seeds", "diff", "cost", "sample_cost", "slope"),
                        ("unit", "position", "k_match", "k_max"))
COT_READ = FamilyRead(("axis_value", "design"), ("seeds", "diff_cot", "cot_is_design"), ("unit",))
PAIR_READ = FamilyRead(("axis_value", "design_a", "design_b"), ("diff",), (), task_codes=True, order="task_id, diff")


def _read_cells(store: Store, view: Callable[[str], str], read: FamilyRead, where: str, params: dict[str, Any],
                slices: list[tuple[str, str | None]]) -> Cells:
    """One Holm family's cells from a paired view, read a slice of tasks at a time (``view(cells)``:
    the view's SELECT for those cells) as numpy arrays; DuckDB's working memory is one slice's.

    Held until the family is tested: per cell, its ``per_row`` columns (8 bytes a value: ≈ 40
    bytes a task and cell against the curve, 24 against CoT, 16 a task, seed and pair between
    designs) and its first row's ``first`` values. Cells come in the order a frame's
    ``groupby(sort=True, dropna=False)`` gives them (a NULL axis value last), each as a frame of
    its rows in task order (the order the tests draw signs in), made when it is tested."""
    import pandas as pd  # deferred, as in _base

    chunks: dict[tuple, list[dict[str, np.ndarray]]] = {}
    firsts: dict[tuple, dict[str, Any]] = {}
    task = ["dense_rank() OVER (ORDER BY task_id) AS task_id"] if read.task_codes else []
    cols = ", ".join([*read.keys, *read.per_row, *read.first, *task])
    for i, (lo, hi) in enumerate(slices):
        args = {**params, "lo": lo} | ({} if hi is None else {"hi": hi})
        got = store.arrays(f"SELECT {cols} FROM ({view(slice_condition(hi is None))}) WHERE {where} "
                           f"ORDER BY {', '.join(read.keys)}, {read.order}", args)
        n = len(got[read.keys[0]])
        if not n:
            continue
        if read.task_codes:  # a task's code: its rank in the slice, after every earlier slice's
            got["task_id"] = np.asarray(got["task_id"], np.int64) + i * (1 << 32)
        starts = _cell_starts([got[k] for k in read.keys], n)
        for s, e in zip(starts, [*starts[1:], n]):
            key = tuple(_key_value(got[k], s) for k in read.keys)
            part = {c: _column(got[c][s:e], c) for c in (*read.per_row, *(["task_id"] if read.task_codes else []))}
            chunks.setdefault(key, []).append(part)
            firsts.setdefault(key, {c: _key_value(got[c], s) for c in read.first})
        del got
    keys = sorted(chunks, key=_key_order)

    def frames() -> Iterator[pd.DataFrame]:
        for k in keys:
            parts = chunks.pop(k)
            rows = {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
            del parts
            n = len(next(iter(rows.values())))
            for c, v in firsts[k].items():
                rows[c] = np.full(n, np.nan) if v is None or v is pd.NA else np.full(n, v, dtype=object if isinstance(
                    v, str) else None)
            yield pd.DataFrame(rows)

    return keys, frames()


def _cell_starts(keys: list[np.ndarray], n: int) -> list[int]:
    """The rows where a new cell starts (the rows are ordered by the key columns)."""
    change = np.zeros(n, bool)
    change[0] = True
    for col in keys:
        if isinstance(col, np.ma.MaskedArray):
            mask = np.ma.getmaskarray(col)
            change[1:] |= mask[1:] != mask[:-1]
            col = np.asarray(col.filled(0))
        change[1:] |= col[1:] != col[:-1]
    return np.flatnonzero(change).tolist()


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


@contextmanager
def _lean_reads(store: Store) -> Iterator[None]:
    """DuckDB settings while the families are read: one thread (a thread keeps its own share of a
    join's and an aggregate's tables) and no insertion order kept (every read has its ORDER BY).
    Measured on a 100,000-task store: the first family's query 41.6 → 29.6 s, 630 → 585 MB."""
    with store.lock:
        threads, order = store.sql("SELECT current_setting('threads'), current_setting('preserve_insertion_order')")[0]
        store.sql("SET threads = 1")
        store.sql("SET preserve_insertion_order = false")
        try:
            yield
        finally:
            store.sql(f"SET threads = {int(threads)}")
            store.sql(f"SET preserve_insertion_order = {'true' if order else 'false'}")
