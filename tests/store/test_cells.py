"""The per-cell table list: every entry names real columns; resume and supersede both read it, so
a new per-cell table is one entry; the failed cells (design and pool) are one view."""

from __future__ import annotations

import pytest

import masbench.store.cells as cells
from masbench.store import CELL_TABLES, CellRows, CellTable, StoreWriter, clean_unfinished, failure_reasons
from masbench.store import supersede_failed


def test_every_entry_keys_real_columns(store) -> None:
    for ct in CELL_TABLES:
        cols = set(store.columns(ct.table))
        for rows in ct.rows:
            assert set(rows.key) <= cols, (ct.table, rows.key)
            store.sql(f"SELECT count(*) FROM {ct.table} WHERE {rows.where}")  # its filter is valid SQL
        if ct.superseded_to:
            assert cols <= set(store.columns(ct.superseded_to))
    assert [ct.table for ct in CELL_TABLES if ct.done] == ["pool", "results"]
    assert all(ct.done for ct in CELL_TABLES[-2:])  # the done-marking tables come last


def test_a_new_per_cell_table_is_one_entry(store, monkeypatch) -> None:
    # a transcripts table keyed like nodes: resume and supersede handle it once it is listed
    store.sql("CREATE TABLE transcripts (run_id VARCHAR, design VARCHAR, task_id VARCHAR, seed INTEGER, text VARCHAR)")
    monkeypatch.setattr(cells, "CELL_TABLES", (CellTable("transcripts", (
        CellRows("design", cells.DESIGN_KEY, f"design <> '{cells.POOL_DESIGN}'"),
        CellRows("pool", cells.POOL_KEY, f"design = '{cells.POOL_DESIGN}'"))), *CELL_TABLES))
    w = StoreWriter(store)
    w.add("results", {"run_id": "r", "design": "cot", "task_id": "ok", "seed": 0, "status": "ok"})
    w.add("results", {"run_id": "r", "design": "cot", "task_id": "bad", "seed": 0, "status": "failed", "error": "x"})
    for i in range(2):
        w.add("pool", {"run_id": "r", "task_id": "full", "seed": 0, "sample_index": i})
    w.flush()
    for design, task in (("cot", "ok"), ("cot", "bad"), ("cot", "flight"), (cells.POOL_DESIGN, "full"),
                         (cells.POOL_DESIGN, "partial")):
        store.sql("INSERT INTO transcripts VALUES ('r', ?, ?, 0, 't')", [design, task])
    store.sql("INSERT INTO transcripts VALUES ('other', 'cot', 'flight', 0, 't')")
    assert supersede_failed(store, "r") == {"design": 1, "pool": 0}
    assert clean_unfinished(store, "r", 2)["transcripts"] == 1  # (cot, flight, 0): no result
    assert clean_unfinished(store, "r", 2)["pool_transcripts"] == 0  # partial went with the first clean
    left = sorted(store.sql("SELECT run_id, task_id FROM transcripts"))
    assert left == [("other", "flight"), ("r", "full"), ("r", "ok")]


@pytest.mark.parametrize("top", [1, 3])
def test_failure_reasons_count_design_and_pool_cells(store, top) -> None:
    w = StoreWriter(store)
    for i, err in enumerate(["boom", "boom", None]):
        w.add("results", {"run_id": "r", "design": "cot", "task_id": f"t{i}", "seed": 0,
                          "status": "failed" if err else "ok", "error": err})
    for j, err in enumerate(["pool b", "pool a", None]):  # one pool cell, two errored samples: one failed cell
        w.add("pool", {"run_id": "r", "task_id": "p", "seed": 0, "sample_index": j, "error": err})
    w.flush()
    n, reasons = failure_reasons(store, "r", top)
    assert n == 3 and reasons == [("boom", 2), ("pool a", 1)][:top]
    assert store.sql("SELECT kind, count(*) FROM cell_failures WHERE run_id = 'r' GROUP BY ALL ORDER BY 1") == [
        ("design", 2), ("pool", 1)]


def test_cell_failures_rows_name_their_cell(view_db) -> None:
    con = view_db.make("cell_failures")
    view_db.insert(con, "results", dict(run_id="r", design="a", task_id="t1", seed=2, status="failed"),
                   dict(run_id="r", design="a", task_id="t2", seed=0, status="ok"))
    view_db.insert(con, "pool", *[dict(run_id="r", task_id="p", seed=3, sample_index=i, error=e)
                                  for i, e in enumerate(["b", "a", None])])
    got = view_db.rows(con, "SELECT * FROM cell_failures ORDER BY kind")
    # the design cell without an error text says 'unknown'; the pool cell's reason is its errors' first in order
    assert got == [dict(run_id="r", kind="design", design="a", task_id="t1", seed=2, reason="unknown"),
                   dict(run_id="r", kind="pool", design=None, task_id="p", seed=3, reason="a")]
