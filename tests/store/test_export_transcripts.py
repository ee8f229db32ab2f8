"""A per-run Parquet export carries that run's transcripts whole: its call_messages (and superseded
ones) and exactly the texts they reference — texts have no run id of their own."""

from __future__ import annotations

import duckdb

from masbench.store import MessageRow, StoreWriter, TextRow, export_parquet, start_run, text_hash


def _message(run: str, call: str, text: str, table_rows: list, direction: str = "input") -> None:
    table_rows.append(TextRow(text_hash=text_hash(text), text=text, chars=len(text)))
    table_rows.append(MessageRow(call_id=call, direction=direction, position=0, text_hash=text_hash(text), run_id=run,
                                 role="user" if direction == "input" else "assistant"))


def test_a_run_export_holds_only_the_texts_its_messages_reference(store, tmp_path):
    for run in ("a", "b"):
        start_run(store, run, "s", {}, {}, simulated=True, transcripts="full")
    recs: list = []
    _message("a", "a1", "shared prompt", recs)
    _message("a", "a1", "a's reply", recs, "output")
    _message("b", "b1", "shared prompt", recs)
    _message("b", "b1", "b's own", recs, "output")
    w = StoreWriter(store)
    for r in recs:
        w.put(r)
    w.flush()
    store.sql("INSERT INTO call_messages_superseded BY NAME SELECT 'a' AS run_id, 'a0' AS call_id, 'input' AS "
              "direction, 0 AS position, ? AS text_hash, 1.0 AS superseded_at", [text_hash("a's old try")])
    store.sql("INSERT INTO texts VALUES (?, 'a''s old try', 11)", [text_hash("a's old try")])
    assert store.sql("SELECT count(*) FROM texts")[0][0] == 4  # the shared prompt once
    files = export_parquet(store, tmp_path / "a", run_id="a")
    texts = {t for t, in duckdb.sql(f"SELECT text FROM '{files['texts']}'").fetchall()}
    assert texts == {"shared prompt", "a's reply", "a's old try"}
    assert duckdb.sql(f"SELECT DISTINCT run_id FROM '{files['call_messages']}'").fetchall() == [("a",)]
    assert duckdb.sql(f"SELECT transcripts FROM '{files['runs']}'").fetchall() == [("full",)]
    every = export_parquet(store, tmp_path / "all")
    assert duckdb.sql(f"SELECT count(*) FROM '{every['texts']}'").fetchall()[0][0] == 4
