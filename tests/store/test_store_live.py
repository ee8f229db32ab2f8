"""A store readable while a run writes it, with both processes real: `masbench status` and
`masbench runs` from another process (this test's) during a run in a subprocess, a second writer refused with one line, and
SIGKILL of the writer at random moments still resuming to the counts of an uninterrupted run
(issue 13)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import clirun
from clirun import Ran
from simsuite import counts, write_suite

pytestmark = [pytest.mark.slow, pytest.mark.waits]  # a `masbench run` in a subprocess, watched and killed

ENV = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "250"}
SLOW = "default: {{id: sim/p60-slow, sim: {{accuracy: {{default: 0.6}}, latency_ms: {ms}}}}}"


def masbench(*args: str) -> Ran:
    """``masbench ARGS`` in this process (tests/clirun.py): only the run that is watched and killed
    needs a process of its own; the reference run, ``status``, ``runs`` and the refused second writer
    read or write the store as any other process would, without a fresh interpreter each."""
    return clirun.masbench(*args, env={"COLUMNS": ENV["COLUMNS"]})


def slow_suite(d: Path, n: int = 8, latency_ms: int = 60) -> Path:
    """The suite of these tests; ``latency_ms`` only changes how long a run takes, never its rows."""
    d.mkdir(parents=True, exist_ok=True)
    suite = write_suite(d, name="live", model="slowsim", n=n, designs="[cot, debate]", k_max=3)
    suite.write_text(suite.read_text().replace("default: slowsim", SLOW.format(ms=latency_ms)))
    return suite


def start(suite: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "masbench.cli", "run", str(suite), "--no-cache",
                             "--concurrency", "2", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV)


def reference(tmp_path: Path, n: int = 8) -> dict:
    suite = slow_suite(tmp_path / "ref", n)
    res = masbench("run", str(suite), "--no-cache", "--concurrency", "8")
    assert res.returncode == 0, res.stderr
    return counts(tmp_path / "ref" / "runs" / "live.duckdb", res.stdout.strip().splitlines()[-1])


def test_status_and_runs_read_the_store_while_a_run_writes_it_and_a_second_writer_is_refused(tmp_path):
    want = reference(tmp_path, n=4)
    # slow enough (~4x the reference's latency: ~10 s for these 4-per-value tasks) that a second `masbench
    # run` and `masbench runs` still find the run going on a loaded 2-core machine (at 60 ms and twice
    # the tasks the run could finish first: the test then failed on main's code too)
    suite = slow_suite(tmp_path / "live", n=4, latency_ms=250)
    store = tmp_path / "live" / "runs" / "live.duckdb"
    proc = start(suite)
    try:
        while not store.exists() and proc.poll() is None:
            time.sleep(0.1)
        seen: list[str] = []
        second = None
        while proc.poll() is None and len(seen) < 4:
            st = masbench("status", "--store", str(store))
            assert st.returncode == 0, st.stderr
            if "· running" in st.stdout:
                seen.append(st.stdout)
                if second is None:
                    second = masbench("run", str(suite), "--no-cache")
                    ls = masbench("runs", "--store", str(store))
                    assert ls.returncode == 0 and "running" in ls.stdout, ls.stderr
        out, errs = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, errs
    assert seen, "the run finished before status could watch it"
    assert any("cells " in s and " calls " in s and "$" in s for s in seen)
    done = [int(s.split("cells ")[1].split("/")[0]) for s in seen]
    assert done == sorted(done) and done[-1] < want["results"] + want["pool"] // 3  # live, not final
    assert second is not None and second.returncode == 2, second.stderr
    lines = [ln for ln in second.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and str(store) in lines[0] and f"pid {proc.pid}" in lines[0]
    got = counts(store, out.strip().splitlines()[-1])
    for k in ("results", "distinct_results", "pool", "distinct_pool", "design_calls", "pool_calls", "curve"):
        assert got[k] == want[k], (k, got, want)


def test_sigkill_at_random_moments_still_resumes_to_identical_counts(tmp_path):
    want = reference(tmp_path, n=6)
    suite = slow_suite(tmp_path / "killed", n=6)
    store = tmp_path / "killed" / "runs" / "live.duckdb"
    rng = random.Random(13)
    kills = 0
    for _ in range(3):
        proc = start(suite)
        time.sleep(rng.uniform(3.0, 6.0))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
    assert kills >= 1
    res = masbench("run", str(suite), "--no-cache", "--concurrency", "8")
    assert res.returncode == 0, res.stderr
    got = counts(store, res.stdout.strip().splitlines()[-1])
    for k in ("results", "distinct_results", "pool", "distinct_pool", "design_calls", "pool_calls", "curve"):
        assert got[k] == want[k], (k, got, want)
    assert got["calls"] == got["distinct_calls"] and got["design_calls"] == got["result_calls"]
