"""Program designs under the harness's run machinery: worker processes (one metering endpoint per
worker) and a run killed with SIGKILL mid-way then resumed (the counts of an uninterrupted run, no
duplicate calls, the same calls as the uninterrupted run's: a program's seeds are derived from its
cell, so its rerun cells make the same requests)."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from masbench.harness import RunOptions, run_suite

from program_fixtures import SOLVER_CRITIC, q, write_program, write_suite
from simsuite import assert_transcripts_consistent, counts

PROGRAM = """
    name: solver-critic
    kind: program
    entry: sc_runs:solve
    agents: [solver, critic]
"""

CALLS = ("SELECT design, task_id, seed, agent, sample_index, prompt_tokens, completion_tokens FROM calls "
         "WHERE run_id = ? AND purpose = 'design' ORDER BY ALL")


def _library(root: Path, model: str, n: int = 8) -> Path:
    write_program(root, "sc_runs", SOLVER_CRITIC, PROGRAM)
    suite = write_suite(root, "runs", "[cot, solver-critic]", n=n)
    suite.write_text(suite.read_text().replace("{default: sim/p60}", "{default: %s}" % model))
    return suite


@pytest.mark.slow
async def test_program_designs_run_on_worker_processes_like_in_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
    local = _library(tmp_path / "local", "sim/p60")
    s1 = await run_suite(RunOptions(suite=str(local), lib=[str(tmp_path / "local")], cache=False))
    workers = _library(tmp_path / "workers", "sim/p60")
    s2 = await run_suite(RunOptions(suite=str(workers), lib=[str(tmp_path / "workers")], cache=False, workers=2))
    assert s2.failed == 0 and s2.ran == s1.ran
    c1, c2 = counts(s1.store, s1.run_id), counts(s2.store, s2.run_id)
    assert c2 == c1 and c2["calls"] == c2["distinct_calls"]
    assert q(s2.store, CALLS, [s2.run_id]) == q(s1.store, CALLS, [s1.run_id])
    pids = q(s2.store, "SELECT count(DISTINCT agent) FROM nodes WHERE run_id = ? AND op = 'program'", [s2.run_id])
    assert pids == [(2,)]


@pytest.mark.slow
@pytest.mark.waits
def test_a_killed_run_with_program_designs_resumes_to_the_uninterrupted_counts(tmp_path):
    slow = "{id: sim/p60-slow, sim: {accuracy: {default: 0.6}, latency_ms: 600}}"
    ref_root, killed_root = tmp_path / "ref", tmp_path / "killed"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "400", "MASBENCH_PROGRESS_INTERVAL_S": "0.5",
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    ref_suite = _library(ref_root, slow)
    ref = subprocess.run([sys.executable, "-m", "masbench.cli", "run", str(ref_suite), "--no-cache", "--concurrency",
                          "8", "--lib", str(ref_root)], cwd=ref_root, env=env, capture_output=True, text=True,
                         timeout=600)
    assert ref.returncode == 0, ref.stderr
    ref_id = ref.stdout.strip().splitlines()[-1]
    want = counts(ref_root / "runs" / "runs.duckdb", ref_id)
    suite = _library(killed_root, slow)
    cmd = [sys.executable, "-m", "masbench.cli", "run", str(suite), "--no-cache", "--concurrency", "2",
           "--lib", str(killed_root)]
    proc = subprocess.Popen(cmd, cwd=killed_root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr or []], daemon=True).start()
    total = want["results"] + want["pool"] // 2  # design cells + pool cells (k_max 2)
    try:
        acked, deadline = None, time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                assert proc.poll() is None, "the run ended before it could be killed"
                continue
            m = re.search(r"(\d+)/(\d+) cells · calls", line)
            if not m:
                continue
            done = int(m[1])
            assert int(m[2]) == total and done < total, ("finished before the kill", line)
            if acked is not None:
                break  # the next line: the cells counted on the earlier one are flushed
            if done >= want["pool"] // 2 + 4:  # the pool cells go first, then some program cells
                acked = done
        assert acked is not None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    store = killed_root / "runs" / "runs.duckdb"
    run_id, status = q(store, "SELECT run_id, status FROM runs")[0]
    partial = q(store, "SELECT count(*) FROM results")[0][0]
    assert status == "running" and 0 < partial < want["results"]
    res = subprocess.run([*cmd[:-4], "--concurrency", "16", "--lib", str(killed_root)], cwd=killed_root, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == run_id  # resumed, not restarted
    got = counts(store, run_id)
    for key in ("results", "distinct_results", "pool", "distinct_pool", "design_calls", "pool_calls", "curve"):
        assert got[key] == want[key], (key, got, want)
    assert got["calls"] == got["distinct_calls"] and got["design_calls"] == got["result_calls"]
    assert_transcripts_consistent(store)
    # the program's calls are the uninterrupted run's: same cells, same seeds, same tokens
    assert q(store, CALLS, [run_id]) == q(ref_root / "runs" / "runs.duckdb", CALLS, [ref_id])
