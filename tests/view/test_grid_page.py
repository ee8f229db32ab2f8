"""The grid's pages over a hand-built store, every expected value worked out by hand below: which
cells each of the status filters (budget-exhausted, failed, truncated) and the design choice
select, the page arithmetic at a page size of 2 (the last page short, a page past the end still
tells the total), the cut of a long answer, the pool's tally per row, and the order of the design
columns (the suite's order first, then the order results were first written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from masbench.store import ResultRow, Store, StoreWriter
from masbench.view import grid as gridmod
from masbench.view.grid import GRID_TEXT, designs, grid_page

RUN = "grid-run"
# (design, task, correct, status, answer, ts); design "b" writes first, "a" second, "c" last
CELLS = [
    ("b", "t0", True, "ok", "7", 1.0),
    ("a", "t0", False, "ok", "x" * (GRID_TEXT + 1), 2.0),  # one character too long: cut
    ("b", "t1", False, "budget_exhausted", None, 3.0),
    ("a", "t1", True, "ok", "y" * GRID_TEXT, 4.0),  # exactly GRID_TEXT characters: not cut
    ("b", "t2", False, "failed", None, 5.0),
    ("a", "t2", False, "degraded", "3", 6.0),
    ("b", "t3", True, "ok", "9", 7.0),
    ("a", "t3", True, "budget_exhausted", "9", 8.0),
    ("c", "t4", False, "ok", "1", 9.0),
]
# design calls cut at their token cap, per (design, task): 2 on (a, t0), 1 on (b, t3);
# a truncated pool call and an ok design call on (b, t1) do not count
TRUNCATED = [("a", "t0", "design", "truncated"), ("a", "t0", "design", "truncated"), ("b", "t3", "design", "truncated"),
             ("b", "t1", "pool", "truncated"), ("b", "t1", "design", "ok")]
# pool samples per task: (n, of which right)
POOL = {"t0": (3, 2), "t1": (2, 0)}


def _store(path: Path, config: dict | None = None) -> Store:
    st = Store(path)
    st.sql("INSERT INTO runs(run_id, suite, status, config) VALUES (?, 'hand', 'finished', ?)",
           [RUN, json.dumps(config) if config is not None else None])
    w = StoreWriter(st)
    for d, t, ok, status, answer, ts in CELLS:
        w.put(ResultRow(run_id=RUN, design=d, task_id=t, seed=0, correct=ok, status=status, answer=answer,
                        gold="7", tokens=10, calls=1, ts=ts))
    for i, (d, t, purpose, status) in enumerate(TRUNCATED):
        w.add("calls", {"run_id": RUN, "call_id": f"c{i}", "purpose": purpose, "design": d, "task_id": t, "seed": 0,
                        "status": status})
    for t, (n, right) in POOL.items():
        for i in range(n):
            w.add("pool", {"run_id": RUN, "task_id": t, "seed": 0, "sample_index": i, "correct": i < right})
    w.close()
    return st


@pytest.fixture
def st(tmp_path: Path):
    s = _store(tmp_path / "g.duckdb")
    yield s
    s.close()


def _hits(page) -> set[tuple[str, str]]:
    return {(d, r.task) for r in page.rows for d, c in r.cells.items() if c["hit"]}


def test_each_status_filter_selects_its_cells_and_shows_the_whole_row(st: Store) -> None:
    # budget: (b, t1) and (a, t3); failed: (b, t2) only ("degraded" is not failed);
    # truncated: (a, t0) with 2 cut calls and (b, t3) with 1 (a pool call or an ok call is no cut design call)
    assert _hits(grid_page(st, RUN, "budget", None, 1)) == {("b", "t1"), ("a", "t3")}
    assert _hits(grid_page(st, RUN, "failed", None, 1)) == {("b", "t2")}
    trunc = grid_page(st, RUN, "truncated", None, 1)
    assert _hits(trunc) == {("a", "t0"), ("b", "t3")}
    by = {(d, r.task): c for r in trunc.rows for d, c in r.cells.items()}
    assert (by[("a", "t0")]["n_truncated"], by[("b", "t3")]["n_truncated"], by[("b", "t0")]["n_truncated"]) == (2, 1, 0)
    # a matching row shows every design's cell of that task, the ones that do not match too
    assert {r.task: sorted(r.cells) for r in trunc.rows} == {"t0": ["a", "b"], "t3": ["a", "b"]}
    assert trunc.total == 2 and trunc.pages == 1


def test_a_design_decides_alone_when_chosen(st: Store) -> None:
    # wrong cells: (a, t0), (b, t1), (b, t2), (a, t2), (c, t4); of design b only: t1, t2
    assert [r.task for r in grid_page(st, RUN, "wrong", "b", 1).rows] == ["t1", "t2"]
    assert [r.task for r in grid_page(st, RUN, "wrong", None, 1).rows] == ["t0", "t1", "t2", "t4"]


def test_pages_of_two_rows(st: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gridmod, "PAGE_SIZE", 2)
    # "all": 5 tasks -> pages of 2, 2, 1 (ceil(5 / 2) = 3)
    pages = [grid_page(st, RUN, "all", None, p) for p in (1, 2, 3)]
    assert [[r.task for r in p.rows] for p in pages] == [["t0", "t1"], ["t2", "t3"], ["t4"]]
    assert {(p.total, p.pages) for p in pages} == {(5, 3)}
    # page 0 and negative pages are page 1
    assert [r.task for r in grid_page(st, RUN, "all", None, 0).rows] == ["t0", "t1"]
    # past the end: no rows, but the real total and page count (4 wrong tasks: 2 pages)
    past = grid_page(st, RUN, "wrong", None, 9)
    assert (past.rows, past.total, past.pages) == ([], 4, 2)
    # of design b only: 2 wrong tasks, 1 page
    past_b = grid_page(st, RUN, "wrong", "b", 5)
    assert (past_b.rows, past_b.total, past_b.pages) == ([], 2, 1)
    # a filter nothing matches: no rows, 0 tasks, still one (empty) page
    none = grid_page(st, RUN, "failed", "a", 1)
    assert (none.rows, none.total, none.pages) == ([], 0, 1)


def test_a_cells_fields_the_cut_and_the_pool_tally(st: Store) -> None:
    rows = {r.task: r for r in grid_page(st, RUN, "all", None, 1).rows}
    t0, t1 = rows["t0"], rows["t1"]
    assert (t0.seed, t0.gold, t0.pool_n, t0.pool_right) == (0, "7", 3, 2)
    assert (t1.pool_n, t1.pool_right) == (2, 0) and (rows["t3"].pool_n, rows["t3"].pool_right) == (None, None)
    a0 = t0.cells["a"]
    assert a0["answer"] == "x" * GRID_TEXT and a0["answer_cut"] is True
    assert t1.cells["a"]["answer"] == "y" * GRID_TEXT and t1.cells["a"]["answer_cut"] is False
    assert t0.cells["b"] == {"correct": True, "status": "ok", "answer": "7", "answer_cut": False, "tokens": 10,
                             "cost_usd": None, "calls": 1, "sc_k": None, "sc_acc": None, "n_truncated": 0,
                             "hit": True}
    assert (t1.cells["b"]["status"], t1.cells["b"]["correct"], t1.cells["b"]["answer_cut"]) == \
        ("budget_exhausted", False, None)


def test_design_columns_follow_the_suite_then_first_results(tmp_path: Path) -> None:
    # no config: the order results were first written (b at ts 1, a at 2, c at 9)
    st = _store(tmp_path / "plain.duckdb")
    try:
        assert designs(st, RUN) == ["b", "a", "c"]
    finally:
        st.close()
    # a suite that lists c then a: those first, in its order; b (not in it) after them
    suite = {"name": "hand", "tasks": [{"generator": "masbench.arith", "name": "x", "values": [1], "n": 1, "seed": 0}],
             "designs": [{"design": "cot-tiny", "label": "c"}, {"design": "cot-tiny", "label": "a"}]}
    st = _store(tmp_path / "suite.duckdb", suite)
    try:
        assert designs(st, RUN) == ["c", "a", "b"]
    finally:
        st.close()
    # a suite whose two designs share a label (design_entries refuses it): the written order
    bad = dict(suite, designs=[{"design": "cot-tiny", "label": "a"}, {"design": "cot-tiny", "label": "a"}])
    st = _store(tmp_path / "bad.duckdb", bad)
    try:
        assert designs(st, RUN) == ["b", "a", "c"]
    finally:
        st.close()


def test_the_first_page_past_the_end_still_tells_the_total(st: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gridmod, "PAGE_SIZE", 2)
    # "failed": (b, t2) only -> 1 task, 1 page; page 2 is the first one past the end: no rows, yet the
    # real total (1), not the 0 an empty page counts
    past = grid_page(st, RUN, "failed", None, 2)
    assert (past.rows, past.total, past.pages) == ([], 1, 1)
    # "all": 5 tasks -> 3 pages; page 4 is the first past the end
    past = grid_page(st, RUN, "all", None, 4)
    assert (past.rows, past.total, past.pages) == ([], 5, 3)
