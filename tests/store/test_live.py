"""The live file of a running run (what `masbench status` shows of a sharded run whose rows are not
merged yet, with the rate limiter's windows), and a part merged once even if its file outlives the
merge."""

from __future__ import annotations

from dataclasses import dataclass

from typer.testing import CliRunner

from masbench.cli import app
from masbench.store import LiveBoard, Store, StoreWriter, describe_snapshot, live_path, merge_into, read_live


@dataclass
class _Counters:
    total: int = 40
    done: int = 17
    skipped: int = 5
    failed: int = 2


LIMITS = {"sim/x": {"limits": {"rpm": 600, "tpm": None, "max_in_flight": 4, "window_s": 60.0}, "requests": 512,
                    "tokens": 0, "open": 3, "waits": 9, "pauses": 1, "paused_s": 2.0}}


def test_status_reads_the_live_file_of_a_running_run(tmp_path) -> None:
    path = tmp_path / "s.duckdb"
    st = Store(path)
    st.sql("INSERT INTO runs(run_id, suite, status, total_cells) VALUES ('r', 's', 'running', 40)")
    st.close()
    board = LiveBoard(path, "r", "ray", 2)
    board.write(_Counters(), {"calls": 1234, "prompt_tokens": 1000, "completion_tokens": 500, "limits": "text"},
                LIMITS, {0: {"done": 10, "failed": 1, "saved": 8, "pid": 42, "stats": {}}}, force=True)
    doc = read_live(path, "r")
    assert doc is not None and doc["shards"] == {"0": {"done": 10, "failed": 1, "saved": 8, "pid": 42}}
    assert read_live(path, "other") is None  # another run's file is not this run's status
    r = CliRunner().invoke(app, ["status", "r", "--store", str(path)])
    assert r.exit_code == 0, r.output
    assert "live (ray, 2 worker(s)" in r.output and "cells 17/40 · failed 2 · calls 1,234 · tokens 1,500" in r.output
    assert "rate limits: sim/x: 512/600 req, 3/4 open, held 2s per 60s" in r.output
    board.remove()
    assert not live_path(path).exists()
    r = CliRunner().invoke(app, ["status", "r", "--store", str(path)])
    assert "live" not in r.output


def test_describe_snapshot_prorates_a_short_window() -> None:
    snap = {"m": {"limits": {"rpm": 6000, "tpm": 600000, "max_in_flight": None, "window_s": 6.0}, "requests": 80,
                  "tokens": 9000, "open": 0, "paused_s": 0}}
    assert describe_snapshot(snap) == "m: 80/600 req, 9,000/60,000 tok per 6s"


def test_a_part_is_merged_once(tmp_path) -> None:
    part = Store(tmp_path / "part.duckdb")
    w = StoreWriter(part)
    for i in range(3):
        w.add("calls", {"run_id": "r", "call_id": f"c{i}", "purpose": "design", "design": "cot", "task_id": "t",
                        "seed": 0})
    w.add("results", {"run_id": "r", "design": "cot", "task_id": "t", "seed": 0, "status": "ok"})
    w.flush()
    part.close()
    target = Store(tmp_path / "main.duckdb")
    assert merge_into(target, tmp_path / "part.duckdb")["calls"] == 3
    assert merge_into(target, tmp_path / "part.duckdb") == {}  # the driver died before deleting it: not again
    assert target.sql("SELECT count(*) FROM calls")[0][0] == 3
    assert target.sql("SELECT count(*) FROM results")[0][0] == 1
    target.close()
