"""The report's tool lines against a hand-built store: the ``tool_usage`` view counts a run's tool
calls by status (the pool's apart), and the report says them and each design's retrieval recall —
and says nothing for a run that called no tool."""

from __future__ import annotations

import json

from masbench.report import data
from masbench.store import ResultRow, StoreWriter, ToolCallRow


def _call(status: str, purpose: str = "design", design: str = "react", task: str = "t1", latency: float = 0.01,
          truncated: bool = False, ids: list[str] | None = None) -> ToolCallRow:
    return ToolCallRow(tool="search", status=status, run_id="r", purpose=purpose, design=design, task_id=task, seed=0,
                       step=0, latency_s=latency, bytes_out=100, truncated=truncated,
                       result_ids=json.dumps(ids) if ids is not None else None)


def test_tool_usage_counts_by_status_and_the_report_says_it(store):
    w = StoreWriter(store)
    for row in (_call("ok", ids=["a"]), _call("ok", task="t2", truncated=True, latency=0.03), _call("invalid_args"),
                _call("unknown_tool"), _call("not_allowed"), _call("error"), _call("refused"),
                _call("ok", purpose="pool", design="__cot_pool__")):
        w.put(row)
    w.put(ResultRow(run_id="r", design="react", task_id="t1", seed=0, status="ok", correct=True,
                    evidence=json.dumps(["a", "b"])))
    w.flush()
    got = store.sql("SELECT purpose, tool_calls, cells, ok, invalid_args, unknown_tool, not_allowed, error, refused, "
                    "truncated, bytes_out FROM tool_usage WHERE run_id = 'r' ORDER BY purpose")
    assert got == [("design", 7, 2, 2, 1, 1, 1, 1, 1, 1, 700), ("pool", 1, 1, 1, 0, 0, 0, 0, 0, 0, 100)]
    lines = data.tool_lines(store, "r")
    assert lines[0].startswith("tool calls: 7 — 2 ok, 1 invalid arguments, 2 unknown or not allowed, 1 raised, "
                               "1 refused")
    assert "1 results cut to their cap" in lines[0] and "mean tool latency 12.9 ms" in lines[0]
    assert lines[1].endswith("react 50.0% (all found in 0% of 1 cells)")


def test_a_run_without_tool_calls_gets_no_tool_lines(store):
    w = StoreWriter(store)
    w.put(ResultRow(run_id="r", design="cot", task_id="t1", seed=0, status="ok", correct=True))
    w.flush()
    assert data.tool_lines(store, "r") == []
