"""The batched writer: records turned into columns a batch at once, dicts by name, mixed batches
in order, wrong columns named, a failed flush keeps its rows."""

import pytest

from masbench.store import CallRow, PoolRow, Store, StoreWriter
from masbench.store.rows import TextRow


def test_records_of_several_tables_in_one_flush():
    store = Store()
    w = StoreWriter(store, flush_rows=10_000)
    for i in range(3):
        w.put(CallRow(call_id=f"c{i}", run_id="r", prompt_tokens=i * 10, cost_usd=None, status="ok"))
        w.put(PoolRow(run_id="r", task_id=f"t{i}", seed=0, sample_index=i, answer=str(i), correct=i == 1))
    assert w.flush() == 6
    assert store.sql("SELECT call_id, prompt_tokens, cost_usd, status FROM calls ORDER BY call_id") == [
        ("c0", 0, None, "ok"), ("c1", 10, None, "ok"), ("c2", 20, None, "ok")]
    assert store.sql("SELECT task_id, sample_index, answer, correct FROM pool ORDER BY task_id") == [
        ("t0", 0, "0", False), ("t1", 1, "1", True), ("t2", 2, "2", False)]
    assert w.written == {"calls": 3, "pool": 3}


def test_records_and_dicts_of_one_table_mix():
    store = Store()
    w = StoreWriter(store, flush_rows=10_000)
    w.put(CallRow(call_id="a", run_id="r", prompt_tokens=1))
    w.add("calls", {"call_id": "b", "run_id": "r", "completion_tokens": 2})
    w.put(CallRow(call_id="c", run_id="r", prompt_tokens=3))
    w.flush()
    assert store.sql("SELECT call_id, prompt_tokens, completion_tokens FROM calls ORDER BY call_id") == [
        ("a", 1, None), ("b", None, 2), ("c", 3, None)]


def test_content_rows_are_kept_once():
    store = Store()
    w = StoreWriter(store, flush_rows=10_000)
    w.put(TextRow(text_hash="h1", text="hello", chars=5))
    w.flush()
    w.put(TextRow(text_hash="h1", text="hello", chars=5))
    w.put(TextRow(text_hash="h2", text="bye", chars=3))
    w.flush()
    assert store.sql("SELECT text_hash, text, chars FROM texts ORDER BY text_hash") == [("h1", "hello", 5),
                                                                                       ("h2", "bye", 3)]


def test_an_unknown_dict_column_is_named_and_the_rows_kept():
    store = Store()
    w = StoreWriter(store, flush_rows=10_000)
    w.put(CallRow(call_id="a", run_id="r"))
    w.add("calls", {"call_id": "b", "promt_tokens": 3})
    with pytest.raises(KeyError, match="promt_tokens"):
        w.flush()
    assert store.sql("SELECT count(*) FROM calls") == [(0,)]  # rolled back
    assert w._pending == 2  # both rows back in the buffer, nothing dropped


def test_a_full_batch_flushes_on_its_own():
    store = Store()
    w = StoreWriter(store, flush_rows=4)
    for i in range(9):
        w.put(CallRow(call_id=f"c{i}", run_id="r"))
    assert store.sql("SELECT count(*) FROM calls") == [(8,)]  # two batches of 4; the ninth waits
    w.close()
    assert store.sql("SELECT count(*) FROM calls") == [(9,)]
