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


def _ins(store, table: str, **row) -> None:
    cols = ", ".join(row)
    store.con.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(row))})", list(row.values()))


def _one(store, q: str):
    return store.sql(q)[0][0]


def test_superseding_a_per_task_designers_failed_cell_moves_its_search_calls(store) -> None:
    # run r, per-task designer "meta": cell (meta, t1, 0) failed, (meta, t2, 0) ok. Each cell spent search
    # calls (the designer's, purpose 'search', tagged with the cell) and a design call; one suite-wide
    # search call has no task; (meta, t1, 1) and run q's (meta, t1, 0) are other cells.
    _ins(store, "results", run_id="r", design="meta", task_id="t1", seed=0, status="failed", error="boom")
    _ins(store, "results", run_id="r", design="meta", task_id="t2", seed=0, status="ok")
    _ins(store, "results", run_id="r", design="meta", task_id="t1", seed=1, status="ok")
    _ins(store, "results", run_id="q", design="meta", task_id="t1", seed=0, status="failed", error="boom")
    calls = {  # call_id: (run, purpose, task, seed, cost)
        "s1a": ("r", "search", "t1", 0, 0.40), "s1b": ("r", "search", "t1", 0, 0.40), "d1": ("r", "design", "t1", 0, 0.10),
        "n1": ("r", None, "t1", 0, 0.05),  # no purpose: a design call
        "s2": ("r", "search", "t2", 0, 0.40), "d2": ("r", "design", "t2", 0, 0.10),
        "s1-seed1": ("r", "search", "t1", 1, 0.40), "suite": ("r", "search", None, 0, 1.00),
        "route": ("r", "routing", "t1", 0, 0.01),  # not a cell's call: kept
        "q-s1": ("q", "search", "t1", 0, 0.40)}
    for cid, (run, purpose, task, seed, cost) in calls.items():
        _ins(store, "calls", call_id=cid, run_id=run, purpose=purpose, design="meta", task_id=task, seed=seed,
             cost_usd=cost, cache_hit=False, prompt_tokens=10, completion_tokens=2)
    for cid in ("s1a", "s2"):
        _ins(store, "call_messages", run_id="r", call_id=cid, purpose="search", design="meta",
             task_id="t1" if cid == "s1a" else "t2", seed=0, position=0, text_hash=f"h-{cid}")
        _ins(store, "tool_calls", run_id="r", call_id=cid, tool_call_id=f"tc-{cid}", purpose="search", design="meta",
             task_id="t1" if cid == "s1a" else "t2", seed=0, step=0, position=0, tool="search")
        _ins(store, "texts", text_hash=f"h-{cid}", text=cid, chars=len(cid))
    _ins(store, "texts", text_hash="h-orphan", text="nobody's", chars=8)
    assert store.sql("SELECT task_id FROM call_messages ORDER BY call_id") == [("t1",), ("t2",)]

    assert supersede_failed(store, "r") == {"design": 1, "pool": 0}
    moved = {"s1a", "s1b", "d1", "n1"}
    assert {r[0] for r in store.sql("SELECT call_id FROM calls_superseded")} == moved
    assert {r[0] for r in store.sql("SELECT call_id FROM calls")} == set(calls) - moved
    assert _one(store, "SELECT count(*) FROM calls WHERE run_id = 'r' AND purpose = 'search' AND task_id = 't1' "
                       "AND seed = 0") == 0
    assert store.sql("SELECT call_id FROM call_messages_superseded") == [("s1a",)]
    assert store.sql("SELECT call_id FROM call_messages") == [("s2",)]
    assert store.sql("SELECT tool_call_id FROM tool_calls_superseded") == [("tc-s1a",)]
    assert store.sql("SELECT tool_call_id FROM tool_calls") == [("tc-s2",)]
    # the superseded message's text is still referenced (by call_messages_superseded); the orphan is gone
    assert {r[0] for r in store.sql("SELECT text_hash FROM texts")} == {"h-s1a", "h-s2"}
    assert store.sql("SELECT run_id, task_id, seed FROM results WHERE status = 'failed'") == [("q", "t1", 0)]

    # the rerun of (meta, t1, 0) spends its search again: counted once, the first attempt's only as spent
    for cid, cost in (("s1a'", 0.40), ("s1b'", 0.40), ("d1'", 0.10)):
        _ins(store, "calls", call_id=cid, run_id="r", purpose="search" if cid[0] == "s" else "design",
             design="meta", task_id="t1", seed=0, cost_usd=cost, cache_hit=False, prompt_tokens=10, completion_tokens=2)
    _ins(store, "results", run_id="r", design="meta", task_id="t1", seed=0, status="ok")
    assert _one(store, "SELECT count(*) FROM calls WHERE run_id = 'r' AND purpose = 'search' AND task_id = 't1' "
                       "AND seed = 0") == 2
    # counted: s2 .40 + d2 .10 + s1-seed1 .40 + suite 1.00 + route .01 + the rerun .90 = 2.81
    # spent: counted + the superseded .40 + .40 + .10 + .05 = 3.76
    counted, superseded, spent, counted_usd, spent_usd = store.sql(
        "SELECT counted_calls, superseded_calls, spent_calls, counted_usd, spent_usd FROM run_spend WHERE run_id = 'r'")[0]
    assert (counted, superseded, spent) == (8, 4, 12)
    assert counted_usd == pytest.approx(2.81) and spent_usd == pytest.approx(3.76)


def test_supersede_is_all_or_nothing(store, monkeypatch) -> None:
    _ins(store, "results", run_id="r", design="cot", task_id="t1", seed=0, status="failed", error="boom")
    _ins(store, "calls", call_id="c1", run_id="r", purpose="design", design="cot", task_id="t1", seed=0)
    monkeypatch.setattr(cells, "CELL_TABLES", (*CELL_TABLES, CellTable("no_such_table", (CellRows("design", cells.DESIGN_KEY),))))
    with pytest.raises(Exception, match="no_such_table"):
        supersede_failed(store, "r")
    assert store.sql("SELECT call_id FROM calls") == [("c1",)]  # rolled back: the calls were not moved
    assert _one(store, "SELECT count(*) FROM calls_superseded") == 0
    with pytest.raises(Exception, match="no_such_table"):
        clean_unfinished(store, "r", 2)
    assert _one(store, "SELECT count(*) FROM results") == 1


def test_a_table_left_to_resume_is_not_superseded(store) -> None:
    # designs is keyed by task only (supersede=False): its rows wait for resume's task rule
    _ins(store, "results", run_id="r", design="cot", task_id="t1", seed=0, status="failed", error="boom")
    _ins(store, "designs", design_id="d1", run_id="r", task_id="t1")
    _ins(store, "routing_decisions", decision_id="rd1", run_id="r", design="cot", task_id="t1", seed=0)
    assert supersede_failed(store, "r") == {"design": 1, "pool": 0}
    assert store.sql("SELECT design_id FROM designs") == [("d1",)]
    assert _one(store, "SELECT count(*) FROM routing_decisions") == 0
    assert clean_unfinished(store, "r", 2) == {"calls": 0, "call_messages": 0, "tool_calls": 0, "nodes": 0,
                                               "routing_decisions": 0, "designs": 1, "pool_calls": 0,
                                               "pool_call_messages": 0, "pool_tool_calls": 0, "pool_nodes": 0,
                                               "pool": 0, "orphan_texts": 0}


def test_done_keys_by_kind(store) -> None:
    for design, task, seed in (("cot", "t1", 0), ("cot", "t1", 1), ("sc", "t2", 0)):
        _ins(store, "results", run_id="r", design=design, task_id=task, seed=seed, status="failed" if seed else "ok")
    _ins(store, "results", run_id="q", design="cot", task_id="t9", seed=0, status="ok")
    for task, n in (("full", 2), ("short", 1), ("more", 3)):
        for i in range(n):
            _ins(store, "pool", run_id="r", task_id=task, seed=0, sample_index=i)
    _ins(store, "pool", run_id="q", task_id="qq", seed=0, sample_index=0)
    _ins(store, "pool", run_id="q", task_id="qq", seed=0, sample_index=1)
    keys = cells.done_keys(store, "r", 2)
    assert sorted(keys["design"]) == [("cot", "t1", 0), ("cot", "t1", 1), ("sc", "t2", 0)]  # a failed result is done too
    assert sorted(keys["pool"]) == [("full", 0), ("more", 0)]
    assert sorted(cells.done_keys(store, "r", 3)["pool"]) == [("more", 0)]


def test_failure_reasons_cut_at_160_and_order_by_count_then_reason(store) -> None:
    long = "x" * 200
    for i, err in enumerate(["b", "a", long, long + "y", None, "b", "a"]):
        _ins(store, "results", run_id="r", design="cot", task_id=f"t{i}", seed=0,
             status="failed", error=err)
    _ins(store, "results", run_id="q", design="cot", task_id="t0", seed=0, status="failed", error="c")
    # the two long errors share their first 160 characters: one reason of 2 cells; NULL is 'unknown'
    n, reasons = failure_reasons(store, "r", top=4)
    assert n == 7 and reasons == [("a", 2), ("b", 2), ("x" * 160, 2), ("unknown", 1)]
    assert failure_reasons(store, "r") == (7, reasons[:3])
    assert failure_reasons(store, "nobody") == (0, [])


def test_drop_orphans_counts_and_keeps_referenced_texts(store) -> None:
    for h in ("used-msg", "used-sup", "used-tool", "used-tool-sup", "orphan1", "orphan2"):
        _ins(store, "texts", text_hash=h, text=h, chars=len(h))
    _ins(store, "call_messages", run_id="r", call_id="c", position=0, text_hash="used-msg")
    _ins(store, "call_messages", run_id="r", call_id="c", position=1, text_hash=None)  # a NULL reference
    _ins(store, "call_messages_superseded", run_id="r", call_id="c", position=0, text_hash="used-sup")
    _ins(store, "tool_calls", run_id="r", call_id="c", tool_call_id="t", step=0, position=0, text_hash="used-tool")
    _ins(store, "tool_calls_superseded", run_id="r", call_id="c", tool_call_id="u", step=0, position=0,
         text_hash="used-tool-sup")
    assert cells.drop_orphans(store.con) == 2
    assert {r[0] for r in store.sql("SELECT text_hash FROM texts")} == {"used-msg", "used-sup", "used-tool",
                                                                        "used-tool-sup"}
    assert cells.drop_orphans(store.con) == 0


def test_drop_orphans_sums_over_every_content_table(store, monkeypatch) -> None:
    # a second content-addressed table ("blobs", referenced by a "uses" table) next to texts
    store.sql("CREATE TABLE blobs (text_hash VARCHAR PRIMARY KEY)")
    store.sql("CREATE TABLE uses (text_hash VARCHAR)")
    store.sql("INSERT INTO blobs VALUES ('b-used'), ('b-orphan1'), ('b-orphan2'), ('b-orphan3')")
    store.sql("INSERT INTO uses VALUES ('b-used'), (NULL)")
    _ins(store, "texts", text_hash="t-orphan", text="x", chars=1)
    monkeypatch.setattr(cells, "CONTENT_TABLES", {"texts": ("call_messages",), "blobs": ("uses",)})
    assert cells.drop_orphans(store.con) == 1 + 3
    assert store.sql("SELECT text_hash FROM blobs") == [("b-used",)]


def test_clean_unfinished_sums_the_rows_of_one_table_over_its_entries(store, monkeypatch) -> None:
    # one table with two design-cell row sets (by a `part` column): its count is their sum
    store.sql("CREATE TABLE parts (run_id VARCHAR, design VARCHAR, task_id VARCHAR, seed INTEGER, part VARCHAR)")
    monkeypatch.setattr(cells, "CELL_TABLES", (CellTable("parts", (
        CellRows("design", cells.DESIGN_KEY, "part = 'a'"), CellRows("design", cells.DESIGN_KEY, "part = 'b'"))),
        *CELL_TABLES))
    _ins(store, "results", run_id="r", design="cot", task_id="done", seed=0, status="ok")
    for task, part in (("done", "a"), ("flight", "a"), ("flight", "b"), ("flight", "b"), ("flight", "c")):
        store.sql("INSERT INTO parts VALUES ('r', 'cot', ?, 0, ?)", [task, part])
    assert clean_unfinished(store, "r", 2)["parts"] == 1 + 2  # part c is in neither row set: kept
    assert sorted(store.sql("SELECT task_id, part FROM parts")) == [("done", "a"), ("flight", "c")]
