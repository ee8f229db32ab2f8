"""Every row record has exactly the columns of its table in the migrated schema."""

import pytest

from masbench.store import ROWS, CallRow, Store, StoreWriter


@pytest.mark.parametrize("table", sorted(ROWS))
def test_record_columns_equal_the_schema(table):
    store = Store()
    assert set(ROWS[table].columns()) == set(store.columns(table)), table


def test_superseded_calls_keep_the_calls_columns():
    store = Store()
    assert set(store.columns("calls_superseded")) == set(CallRow.columns()) | {"superseded_at"}


def test_a_wrong_column_fails_where_the_row_is_built():
    with pytest.raises(TypeError):
        CallRow(call_id="c", promt_tokens=3)  # type: ignore[call-arg]


def test_put_writes_a_record():
    store = Store()
    w = StoreWriter(store)
    w.put(CallRow(call_id="c1", run_id="r", prompt_tokens=7, usage_status="reported"))
    w.flush()
    assert store.sql("SELECT call_id, run_id, prompt_tokens, completion_tokens FROM calls") == [("c1", "r", 7, None)]
