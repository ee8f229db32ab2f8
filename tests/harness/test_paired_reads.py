"""A family read a slice of tasks at a time (masbench/harness/paired_reads.py): the same cells, in the
same order and with the same rows, whatever the slices; set aside in a temporary file that is closed
(so deleted) once the cells are read or the reader stops."""

from __future__ import annotations

import tempfile
from typing import Any, cast

import duckdb
import numpy as np
import pandas as pd
import pytest

import masbench.harness.paired_reads as paired_reads
from masbench.harness.paired_reads import COT_READ, CURVE_READ, PAIR_READ, _read_cells


class Con:
    """The one method the reads use (``arrays``) on a real DuckDB holding ``frame`` as table ``v``."""

    def __init__(self, frame: pd.DataFrame):
        self.con = duckdb.connect()
        self.con.register("frame", frame)
        self.con.execute("CREATE TABLE v AS SELECT * FROM frame")
        self.queries = 0

    def arrays(self, q: str, params: Any = None) -> dict[str, Any]:
        self.queries += 1
        return self.con.execute(q, params or []).fetchnumpy()


def view(cells: str) -> str:
    return f"SELECT * FROM v WHERE {cells}"


IDS = [f"t{i:02d}" for i in range(7)]


def _curve_frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for value in (None, 2, 1):  # a NULL axis value: its cells come last
        for design in ("y", "x"):
            for t in IDS[::-1]:  # stored out of order: the reads order them
                rows.append(dict(run_id="r", axis="all", axis_value=value, design=design, unit="tokens", task_id=t,
                                 seeds=int(rng.integers(1, 4)), diff=float(rng.normal()), cost=float(rng.normal(5)),
                                 sample_cost=None if t == "t03" else float(rng.normal(2)), slope=0.25,
                                 position="within" if design == "x" else "below", k_match=1.5, k_max=4,
                                 cot_is_design=None if t == "t01" else t < "t04", diff_cot=float(rng.normal())))
    f = pd.DataFrame(rows)
    f["axis_value"] = f["axis_value"].astype("Int32")
    return f


def _slices(size: int) -> list[tuple[str, str | None]]:
    firsts = IDS[::size]
    return list(zip(firsts, [*firsts[1:], None]))


def _read(con: Con, read, size: int, where: str = "axis = $axis") -> tuple[list[tuple], list[pd.DataFrame]]:
    keys, frames = _read_cells(cast(Any, con), view, read, where, {"run_id": "r", "axis": "all"}, _slices(size))
    return keys, list(frames)


@pytest.mark.parametrize("read", [CURVE_READ, COT_READ])
def test_cells_are_the_same_whatever_the_slices(read):
    con = Con(_curve_frame())
    keys, whole = _read(con, read, len(IDS))
    assert keys == [(1, "x"), (1, "y"), (2, "x"), (2, "y"), (pd.NA, "x"), (pd.NA, "y")]
    for size in (1, 2, 3):
        got_keys, got = _read(con, read, size)
        assert got_keys == keys
        for a, b in zip(got, whole):
            pd.testing.assert_frame_equal(a, b)
    # each cell: its tasks in order, its first row's values repeated, a NULL as NaN (or as true)
    f = _curve_frame()
    for (value, design), frame in zip(keys, whole):
        cell = f[(f["design"] == design) & (f["axis_value"].isna() if value is pd.NA else f["axis_value"] == value)]
        cell = cell.sort_values("task_id")
        assert list(frame.columns) == [*read.per_row, *read.first]
        if read is CURVE_READ:
            assert frame["diff"].tolist() == cell["diff"].tolist()
            assert np.isnan(frame["sample_cost"].iloc[3]) and frame["seeds"].dtype == np.int64
            assert set(frame["position"]) == {"within" if design == "x" else "below"}
        else:
            assert frame["cot_is_design"].tolist() == [t < "t04" or t == "t01" for t in IDS]


def test_pairs_carry_their_task_as_a_code_that_counts_on_across_slices():
    rows = [dict(run_id="r", axis="all", axis_value=None, design_a="a", design_b="b", task_id=t, seed=s,
                 diff=float(d)) for t in IDS for s, d in ((0, 1.0), (1, -1.0), (2, 0.0))]
    f = pd.DataFrame(rows)
    f["axis_value"] = f["axis_value"].astype("Int32")
    con = Con(f)
    _, (one,) = _read(con, PAIR_READ, len(IDS))
    _, (many,) = _read(con, PAIR_READ, 2)
    assert one["diff"].tolist() == [-1.0, 0.0, 1.0] * len(IDS)  # a task's seeds by their difference
    assert one["task_id"].tolist() == [i + 1 for i in range(len(IDS)) for _ in range(3)]
    # one code a task whichever slice it came in, and the tasks in the same order
    codes = many["task_id"].to_numpy()
    assert len(set(codes)) == len(IDS) and (np.diff(codes) >= 0).all()
    assert many["diff"].tolist() == one["diff"].tolist()


def test_the_file_is_closed_when_the_cells_are_read_or_the_reader_stops(monkeypatch):
    files: list[Any] = []
    make = tempfile.TemporaryFile

    def recorded(*a, **kw):
        files.append(make(*a, **kw))
        return files[-1]

    monkeypatch.setattr(paired_reads.tempfile, "TemporaryFile", recorded)
    con = Con(_curve_frame())
    _read(con, CURVE_READ, 2)
    assert len(files) == 1 and files[0].closed
    keys, frames = _read_cells(cast(Any, con), view, CURVE_READ, "axis = $axis", {"run_id": "r", "axis": "all"},
                               _slices(2))
    next(frames)
    assert not files[1].closed
    cast(Any, frames).close()  # the reader stopped after one cell (a generator)
    assert files[1].closed
    # a family with no rows: no cell
    assert _read(con, CURVE_READ, 2, "axis = $axis AND design = 'none'") == ([], [])
