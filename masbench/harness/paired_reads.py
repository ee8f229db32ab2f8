"""How the paired tests read a run's Holm families (:mod:`.paired_tests`): the run's tasks cut
into slices, each family's cells fetched a slice at a time as numpy arrays (no pandas frame of the
family), set aside in a temporary file and handed over one cell frame at a time, in the order a
frame's ``groupby`` gives them; the run's matched points computed once for every slice."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

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
    order: str = "task_id"
    """What orders a cell's rows after its keys."""


CURVE_READ = FamilyRead(("axis_value", "design"), ("seeds", "diff", "cost", "sample_cost", "slope"),
                        ("unit", "position", "k_match", "k_max"))
COT_READ = FamilyRead(("axis_value", "design"), ("seeds", "diff_cot", "cot_is_design"), ("unit",))
PAIR_READ = FamilyRead(("axis_value", "design_a", "design_b"), ("diff",), (), task_codes=True, order="task_id, diff")


def _read_cells(store: Store, view: Callable[[str], str], read: FamilyRead, where: str, params: dict[str, Any],
                slices: list[tuple[str, str | None]]) -> Cells:
    """One Holm family's cells from a paired view (``view(cells)``: the view's SELECT for those
    cells), each handed over as a frame of its rows in task order (the order the tests draw signs
    in), in the order a frame's ``groupby(sort=True, dropna=False)`` gives them (a NULL axis value
    last).

    The family is read a slice of tasks at a time (DuckDB's working memory is one slice's); each
    slice's cells are appended to an anonymous temporary file as raw arrays (``per_row`` columns,
    8 bytes a value: ≈ 40 bytes a task and cell against the curve) and read back one cell at a
    time when it is tested. The driver holds one slice's rows, then one cell's, and per cell its
    key, its first row's ``first`` values and where its parts lie in the file: nothing per task.
    (A DuckDB temporary table in the file's place peaked 5 MB higher on a 100,000-task store, and
    the memory it took stayed with the process after the table was dropped.)"""
    task = ["dense_rank() OVER (ORDER BY task_id) AS task_id"] if read.task_codes else []
    cols = ", ".join([*read.keys, *read.per_row, *read.first, *task])
    rows_of = [*read.per_row, *(["task_id"] if read.task_codes else [])]
    spill = tempfile.TemporaryFile(prefix="masbench-paired-")
    parts: dict[tuple, list[tuple[int, int]]] = {}
    firsts: dict[tuple, dict[str, Any]] = {}
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
            parts.setdefault(key, []).append((spill.tell(), e - s))
            for c in rows_of:
                spill.write(_column(got[c][s:e], c).tobytes())
            firsts.setdefault(key, {c: _key_value(got[c], s) for c in read.first})
        del got
    keys = sorted(parts, key=_key_order)
    return keys, _frames(spill, rows_of, parts, firsts, keys)


def _frames(spill: IO[bytes], rows_of: list[str], parts: dict[tuple, list[tuple[int, int]]],
            firsts: dict[tuple, dict[str, Any]], keys: list[tuple]) -> Iterator[pd.DataFrame]:
    """Each cell's frame, read back from the ``spill`` file, in ``keys``' order (the file is
    closed, so deleted, after the last or when the reader stops)."""
    import pandas as pd  # deferred, as in _base

    with spill:
        for k in keys:
            chunks: dict[str, list[np.ndarray]] = {c: [] for c in rows_of}
            for offset, n in parts.pop(k):
                spill.seek(offset)
                for c in rows_of:
                    dtype = _dtype(c)
                    chunks[c].append(np.frombuffer(spill.read(n * dtype.itemsize), dtype))
            rows = {c: np.concatenate(v) for c, v in chunks.items()}
            del chunks
            n = len(rows[rows_of[0]])
            for c, v in firsts.pop(k).items():
                rows[c] = np.full(n, np.nan) if v is None or v is pd.NA else np.full(n, v, dtype=object if isinstance(
                    v, str) else None)
            frame = pd.DataFrame(rows)
            del rows  # the frame copied them: one copy of the cell while it is tested
            yield frame
            del frame


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


def _dtype(name: str) -> np.dtype:
    """A ``per_row`` column's type once read (:func:`_column`)."""
    return np.dtype(np.int64 if name in ("seeds", "task_id") else bool if name == "cot_is_design" else float)


def _column(col: np.ndarray, name: str) -> np.ndarray:
    """A slice of a fetched column as its own array of :func:`_dtype`: NULL as NaN (as in a pandas
    frame), ``seeds`` and task codes as integers, a NULL ``cot_is_design`` as true (``all()``
    skips it)."""
    if name == "cot_is_design":
        return np.ma.filled(col, True).astype(bool) if isinstance(col, np.ma.MaskedArray) else np.array(col, bool)
    if name in ("seeds", "task_id"):
        return np.array(col, np.int64)
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
computed once instead of once a slice (each slice's query re-read the whole run's results for
them; on a 100,000-task store the phase's CPU moved only 125 → 123 s: its slice queries are ≈ 37
CPU-s of it, the sign-flip statistics the rest)."""


@contextmanager
def _lean_reads(store: Store, run_id: str) -> Iterator[None]:
    """While the families are read: the run's matched points in :data:`MATCHED_TABLE`, and DuckDB
    on one thread (a thread keeps its own share of a join's and an aggregate's tables) with no
    insertion order kept (every read has its ORDER BY). Measured on a 100,000-task store: the
    first family's query 41.6 → 29.6 s, 630 → 585 MB. The matched points are dropped after."""
    with store.lock:
        threads, order = store.sql("SELECT current_setting('threads'), current_setting('preserve_insertion_order')")[0]
        store.sql("SET threads = 1")
        store.sql("SET preserve_insertion_order = false")
        try:
            store.sql(f"CREATE OR REPLACE TEMP TABLE {MATCHED_TABLE.removeprefix('temp.')} AS "
                      f"SELECT * FROM ({paired_matches()}) WHERE run_id = ?", [run_id])
            yield
        finally:
            store.sql(f"DROP TABLE IF EXISTS {MATCHED_TABLE}")
            store.sql(f"SET threads = {int(threads)}")
            store.sql(f"SET preserve_insertion_order = {'true' if order else 'false'}")
