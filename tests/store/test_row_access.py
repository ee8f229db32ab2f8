"""A record reads like a row by column name (``row["node"]``, ``"node" in row``) — and only by its
own columns; a sink that is handed a record of another table refuses it."""

from __future__ import annotations

import pytest

from masbench.store import NodeRow, PoolRow, StoreWriter


def test_a_record_is_read_by_column(store) -> None:
    row = NodeRow(run_id="r", node="n", calls=2)
    assert row["node"] == "n" and row["calls"] == 2 and row["error"] is None
    assert "node" in row and "purpose" not in row and "TABLE" not in row
    with pytest.raises(KeyError, match="nodes: no column 'purpose'"):
        row["purpose"]


def test_a_sink_takes_records_of_its_table_and_fills_its_extra_columns(store) -> None:
    w = StoreWriter(store)
    sink = w.sink("nodes", {"run_id": "r-extra", "design": "d"})
    sink(NodeRow(node="a"))
    sink(NodeRow(run_id="own", node="b"))  # a value the record set wins over the extra one
    with pytest.raises(TypeError, match="row of pool, not of nodes"):
        sink(PoolRow(run_id="r", task_id="t", seed=0, sample_index=0))
    w.flush()
    assert sorted(store.sql("SELECT node, run_id, design FROM nodes")) == [("a", "r-extra", "d"), ("b", "own", "d")]
