"""The retrieval-recall views against a hand-built store: gold evidence in results, the ids the
cell's tool calls returned in tool_calls, recall = |gold ∩ found| / |gold| per cell and its mean."""

from __future__ import annotations

import json

import pytest

from masbench.store import ResultRow, StoreWriter, ToolCallRow


def _result(task: str, design: str, evidence: list[str] | None, axis_value: int = 2, seed: int = 0) -> ResultRow:
    return ResultRow(run_id="r", design=design, task_id=task, seed=seed, source="search", axis="hops",
                     axis_value=axis_value, status="ok", correct=True,
                     evidence=json.dumps(evidence) if evidence is not None else None)


def _call(task: str, design: str, ids: list[str] | None, step: int, purpose: str = "design", seed: int = 0,
          tool: str = "search", run: str = "r") -> ToolCallRow:
    return ToolCallRow(tool=tool, status="ok", run_id=run, purpose=purpose, design=design, task_id=task, seed=seed,
                       step=step, result_ids=json.dumps(ids) if ids is not None else None)


@pytest.fixture
def filled(store):
    w = StoreWriter(store)
    for row in (
        _result("t1", "react", ["a", "b"]),          # found a (search) and b (read): 1.0
        _result("t2", "react", ["c", "d", "e", "f"], axis_value=4),  # found c only: 0.25
        _result("t3", "react", ["g", "h"]),          # no tool call at all: 0.0
        _result("t4", "react", None),                # no evidence: not a recall cell
        _result("t1", "cot", ["a", "b"]),            # another design, same task: found b: 0.5
        _result("t1", "react", ["a", "b"], seed=1),  # another seed: found nothing relevant: 0.0
    ):
        w.put(row)
    for row in (
        _call("t1", "react", ["x", "a", "y"], 0),
        _call("t1", "react", ["b"], 1, tool="read_document"),
        _call("t1", "react", ["a"], 2),              # a found twice counts once
        _call("t2", "react", ["c", "zz"], 0),
        _call("t2", "react", None, 1),               # a failed call names no ids
        _call("t2", "__pool__", ["d", "e", "f"], 0, purpose="pool"),  # pool calls never count for a design
        _call("t2", "react", ["d", "e"], 0, purpose="pool"),  # keyed as CELL_TABLES keys them: by purpose too
        _call("t4", "react", ["q"], 0),
        _call("t1", "cot", ["b"], 0),
        _call("t1", "react", ["q"], 0, seed=1),
        _call("t2", "react", ["d", "e", "f"], 0, run="r2"),  # another run's calls for the same cell key
    ):
        w.put(row)
    w.flush()
    return store


def test_recall_per_cell(filled) -> None:
    rows = filled.sql("SELECT design, task_id, seed, n_evidence, n_found, recall, n_results, tool_calls "
                      "FROM retrieval_recall_cells ORDER BY design, task_id, seed")
    assert rows == [
        ("cot", "t1", 0, 2, 1, 0.5, 1, 1),
        ("react", "t1", 0, 2, 2, 1.0, 4, 3),
        ("react", "t1", 1, 2, 0, 0.0, 1, 1),
        ("react", "t2", 0, 4, 1, 0.25, 2, 2),
        ("react", "t3", 0, 2, 0, 0.0, 0, 0),
    ]


def test_recall_per_design_and_hop_count(filled) -> None:
    rows = filled.sql("SELECT design, axis, axis_value, n, recall, full_recall FROM retrieval_recall "
                      "WHERE run_id = 'r' ORDER BY design, axis, axis_value NULLS FIRST")
    assert rows == [
        ("cot", "all", None, 1, 0.5, 0.0),
        ("cot", "hops", 2, 1, 0.5, 0.0),
        ("react", "all", None, 4, pytest.approx((1.0 + 0.0 + 0.25 + 0.0) / 4), 0.25),
        ("react", "hops", 2, 3, pytest.approx(1 / 3), pytest.approx(1 / 3)),
        ("react", "hops", 4, 1, 0.25, 0.0),
    ]


def test_no_evidence_anywhere_is_no_rows(store) -> None:
    w = StoreWriter(store)
    w.put(_result("t", "cot", None))
    w.put(_result("u", "cot", []))
    w.put(_call("t", "cot", ["a"], 0))
    w.flush()
    assert store.sql("SELECT count(*) FROM retrieval_recall_cells") == [(0,)]
    assert store.sql("SELECT count(*) FROM retrieval_recall") == [(0,)]
