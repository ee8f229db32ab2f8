"""masbench.harness.judge_check over hand-built stores (no simulated run: milliseconds): which
``judge_agreement`` row is kept, what is stored in ``judge_checks`` beside it, and how
:func:`judge_check` runs the suite and reads the scale back.

The expected numbers are counted by hand off the rows written below: agreement, false pass and
false fail are shares of the cells listed; self-consistency of a k = 2 reply is 1 when both
samples agree and 0 when they split; the Wilson bounds are recomputed here from the textbook formula;
the judge's cost sums the scoring calls of the run only."""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from masbench.harness import RunOptions
from masbench.harness import judge_check as jc
from masbench.harness.judge_check import CHECK_COLUMNS, record_check
from masbench.harness.suite_run import RunSummary
from masbench.store import Store, StoreWriter

Z = 1.959963984540054  # the 97.5% normal quantile


def wilson(x: int, n: int) -> tuple[float, float]:
    """The Wilson 95% interval of x successes in n (Wilson 1927)."""
    p = x / n
    centre = p + Z * Z / (2 * n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + Z * Z / n)), min(1.0, (centre + half) / (1 + Z * Z / n))


Cell = tuple[str, str, bool, bool, list[float | None]]
"""(design, task, rule_correct, the judge's verdict, its samples)"""

# run "chk", judge jj on sim/grader, k = 2
CHK: list[Cell] = [("cot", "t1", True, True, [1.0, 1.0]),      # agree
       ("cot", "t2", True, False, [0.0, None]),    # false fail; one unread sample
       ("cot", "t3", False, True, [1.0, 1.0]),     # false pass
       ("cot", "t4", False, False, [1.0, 0.0]),    # agree (1 of 2 is no majority); the samples split
       ("debate", "t4", False, False, [0.0, 0.0])]  # agree
# a second judge of the same run, on fewer cells: not the one recorded
OTHER_JUDGE: list[Cell] = [("cot", "t1", True, True, [1.0, 1.0])]
# another run in the same store, with more cells than chk: never mixed in
OTHER_RUN: list[Cell] = [("cot", f"u{i}", True, True, [1.0, 1.0]) for i in range(8)]


def _results(w: StoreWriter, run: str, judge: str, cells: list[Cell],
             k: int = 2) -> None:
    for design, task, rule, ok, samples in cells:
        passes = sum(1 for s in samples if s is not None and s >= 0.5)
        w.add("results", {"run_id": run, "design": design, "task_id": task, "seed": 0, "correct": ok, "gold": "g",
                          "status": "ok", "judge": judge, "judge_model": "sim/grader", "judge_samples": k,
                          "judge_passes": passes, "judge_value": passes / k, "rule_correct": rule, "simulated": True,
                          "detail": json.dumps({"judge": {"agent": judge, "samples": samples}})})


def _call(w: StoreWriter, run: str, purpose: str, design: str, prompt: int, completion: int, usd: float) -> None:
    w.add("calls", {"call_id": f"{run}-{design}-{prompt}", "run_id": run, "purpose": purpose, "design": design,
                    "task_id": "t1", "seed": 0, "agent": "jj", "prompt_tokens": prompt, "completion_tokens": completion,
                    "cost_usd": usd, "cache_hit": False, "simulated": True})


def _store(path: Path, config: dict[str, Any] | None = None) -> Store:
    s = Store(path)
    cfg = json.dumps(config if config is not None else {"judge": {"scale": "graded"}})
    for run, suite in (("chk", "arith.judge-check"), ("big", "arith.judge-check"), ("k1", "plain"),
                       ("none", "arith.judge-check")):
        s.sql("INSERT INTO runs(run_id, suite, status, config) VALUES (?, ?, 'finished', ?)", [run, suite, cfg])
    w = StoreWriter(s)
    _results(w, "chk", "jj", CHK)
    _results(w, "chk", "other", OTHER_JUDGE)
    _results(w, "big", "jj", OTHER_RUN)
    k1: list[Cell] = [("cot", "t1", True, True, [1.0]), ("cot", "t2", False, True, [1.0])]
    _results(w, "k1", "jj", k1, k=1)
    # judge scoring calls of chk in two designs: 3 calls, (10+5) + (20+5) + (7+3) = 50 tokens, $0.35
    _call(w, "chk", "scoring", "cot", 10, 5, 0.1)
    _call(w, "chk", "scoring", "cot", 20, 5, 0.2)
    _call(w, "chk", "scoring", "debate", 7, 3, 0.05)
    _call(w, "chk", "design", "cot", 1000, 500, 5.0)  # a design's own call: not the judge's cost
    _call(w, "big", "scoring", "cot", 99, 1, 9.0)      # another run's judge
    w.close()
    return s


def test_the_check_row_of_the_run_by_hand(tmp_path: Path) -> None:
    s = _store(tmp_path / "s.duckdb")
    before = time.time()
    row = record_check(s, "chk", "graded")
    after = time.time()
    assert row is not None and list(row) == list(CHECK_COLUMNS)
    ts = row.pop("ts")
    assert before <= ts <= after
    # 5 cells on 4 tasks; agree 3 of 5; rule fails 3, judge passed 1 of them; rule passes 2, judge failed 1.
    # self-consistency and unanimity: 4 of 5 replies' two samples agree; unread: 1 sample of 10
    expected = {"run_id": "chk", "suite": "arith", "judge": "jj", "judge_model": "sim/grader", "scale": "graded",
                "k": 2, "n_checked": 5, "n_tasks": 4, "agreement": 0.6, "n_rule_fail": 3, "false_pass": 1 / 3,
                "n_rule_pass": 2, "false_fail": 0.5, "self_consistency": 0.8, "unanimous": 0.8, "unparsed": 0.1,
                "judge_calls": 3, "judge_tokens": 50, "judge_usd": 0.35, "simulated": True}
    for name, (x, n) in {"agreement": (3, 5), "false_pass": (1, 3), "false_fail": (1, 2)}.items():
        expected[f"{name}_lo"], expected[f"{name}_hi"] = wilson(x, n)
    assert row == {c: pytest.approx(v) if isinstance(v, float) else v for c, v in expected.items()}
    stored = s.df("SELECT * FROM judge_checks").to_dict("records")
    assert len(stored) == 1 and stored[0] == {**{c: pytest.approx(v) if isinstance(v, float) else v
                                                 for c, v in expected.items()}, "ts": pytest.approx(ts)}
    s.close()


def test_a_recheck_replaces_the_runs_row_only(tmp_path: Path) -> None:
    s = _store(tmp_path / "s.duckdb")
    big = record_check(s, "big", "pass-fail")
    assert big is not None and big["n_checked"] == 8 and big["judge_calls"] == 1 and big["judge_usd"] == 9.0
    record_check(s, "chk", "pass-fail")
    record_check(s, "chk", "pairwise")  # the same run again: its row replaced, big's kept
    assert s.sql("SELECT run_id, scale, n_checked FROM judge_checks ORDER BY run_id") == [
        ("big", "pass-fail", 8), ("chk", "pairwise", 5)]
    s.close()


def test_no_checked_reply_stores_nothing_and_missing_figures_are_null(tmp_path: Path) -> None:
    s = _store(tmp_path / "s.duckdb")
    assert record_check(s, "none", "pass-fail") is None
    assert s.sql("SELECT count(*) FROM judge_checks") == [(0,)]
    # k = 1: no self-consistency (NULL in the view); no scoring calls recorded: no judge cost (NULL)
    row = record_check(s, "k1", "pass-fail")
    assert row is not None and row["suite"] == "plain" and row["n_checked"] == 2 and row["agreement"] == 0.5
    assert row["self_consistency"] is None and row["judge_usd"] is None and row["unanimous"] == 1.0
    assert s.sql("SELECT self_consistency, judge_usd, false_pass FROM judge_checks") == [(None, None, 1.0)]
    s.close()


def _fake_run(tmp_path: Path, config: dict[str, Any], seen: list[Any]):
    path = tmp_path / "s.duckdb"
    _store(path, config).close()

    async def run_suite(opts: RunOptions, display: Any = None) -> RunSummary:
        seen.append((opts, display))
        return RunSummary(run_id="chk", store=path, total_cells=5, skipped=0, ran=5, failed=0, wall_s=0.0,
                          status="finished", cleaned={}, stats={}, simulated=True)

    return run_suite


def test_judge_check_runs_the_suite_in_one_local_process_and_records_its_scale(tmp_path, monkeypatch) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(jc, "run_suite", _fake_run(tmp_path, {"judge": {"scale": "graded"}}, seen))
    opts = RunOptions(suite="x.yaml", engine="ray", workers=4, judge="jj")
    display = object()
    res = asyncio.run(jc.judge_check(opts, display))
    # the options as given, but a judge check, on the local engine with one worker
    assert seen == [(replace(opts, judge_check=True, engine="local", workers=1), display)]
    assert res.summary.run_id == "chk" and res.row is not None
    assert res.row["scale"] == "graded" and res.row["n_checked"] == 5
    s = Store(tmp_path / "s.duckdb")
    assert s.sql("SELECT run_id, scale FROM judge_checks") == [("chk", "graded")]
    s.close()


def test_judge_check_defaults_to_pass_fail_when_the_run_names_no_scale(tmp_path, monkeypatch) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(jc, "run_suite", _fake_run(tmp_path, {"judge": {"agent": "jj"}}, seen))
    res = asyncio.run(jc.judge_check(RunOptions(suite="x.yaml")))
    assert seen[0][1] is None and res.row is not None and res.row["scale"] == "pass-fail"
