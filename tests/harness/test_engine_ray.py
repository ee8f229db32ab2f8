"""The ray engine on a local Ray cluster started by the test session (127.0.0.1, 2 CPUs, no
dashboard): the same simulated suite gives the same rows as one process and --workers 2; a Ray
worker killed mid-run, and separately the driver, end (after the rerun) with the counts of an
uninterrupted run; the rate limits hold across the Ray workers. Skipped only when ray is not
installed (the `ray` extra)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Ray replaces a loopback node address by the machine's own unless told it is one machine: the
# session's cluster (and the drivers the tests start, which inherit this) stay on 127.0.0.1.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray")

from enginesuite import (WINDOW_S, call_points, engine_free_rows, limited_suite, most_in_window,  # noqa: E402
                         run_past_a_429)
from masbench.harness import RunOptions, run_suite  # noqa: E402
from masbench.store import live_path  # noqa: E402
from simsuite import counts, write_suite  # noqa: E402

SIM_AT = "{{id: sim/slow, sim: {{accuracy: {{default: 0.6}}, latency_ms: {ms}}}}}"
"""The tests' simulated model at ``ms`` a call (latency changes how long a run takes, never its rows)."""

SLOW = SIM_AT.format(ms=120)
"""Slow enough (120 ms a call, 2 cells in flight per worker: a worker's part of the run lasts ~4 s, its
kill comes after 3 of its ~30 cells) that a run is still going when a test kills a part of it."""

SLOWER = SIM_AT.format(ms=500)
"""For the killed driver: its run must still be going, a third of its cells to do, once both its parts
have committed cells (beside a CPU hog a worker's first flush took 3.7 s; at 250 ms a call the run
was then nearly over once, and the wait for that moment timed out)."""


@pytest.fixture(scope="session")
def ray_cluster():
    """One local Ray for the whole session (starting Ray takes seconds): its GCS address."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    address = ray.get_runtime_context().gcs_address
    assert address.startswith("127.0.0.1:"), address
    yield address
    ray.shutdown()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _live_shards(store: Path, ready, timeout: float = 120.0) -> dict:
    """The run's live file once ``ready(doc)`` holds."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            doc = json.loads(live_path(store).read_text())
        except (OSError, ValueError):
            doc = None
        if doc and ready(doc):
            return doc
        await asyncio.sleep(0.1)
    raise AssertionError("the run never reported the progress waited for")


@pytest.mark.slow
async def test_the_same_suite_gives_the_same_rows_on_every_engine(tmp_path, ray_cluster):
    suite = write_suite(tmp_path, name="same", n=6, k_max=5)
    runs = {}
    for name, engine, workers, mode in (("one", "local", 1, None), ("two", "processes", 2, None),
                                        ("ray", "ray", 2, "tasks"), ("actors", "ray", 2, "actors")):
        s = await run_suite(RunOptions(suite=str(suite), store=tmp_path / f"{name}.duckdb", engine=engine,
                                       workers=workers, ray_mode=mode))
        assert s.failed == 0 and s.ran == s.total_cells
        runs[name] = engine_free_rows(s.store, s.run_id)
    assert runs["one"]["results"] and runs["one"]["pool"] and runs["one"]["curve"] and runs["one"]["paired"]
    assert runs["ray"] == runs["one"]
    assert runs["actors"] == runs["one"]
    assert runs["two"] == runs["one"]
    assert not list((tmp_path / "parts").glob("*.duckdb"))  # every part merged and removed


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The counts of the slow suite run start to end in one process."""
    tmp = tmp_path_factory.mktemp("whole")
    suite = write_suite(tmp, name="slow", n=10, k_max=3, model=SLOW, designs="[cot, {design: cot-sc, params: {k: 3}}]")
    s = asyncio.run(run_suite(RunOptions(suite=str(suite))))
    return counts(s.store, s.run_id)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["tasks", "actors"])
async def test_a_killed_ray_worker_is_rerun_and_the_run_ends_whole(tmp_path, ray_cluster, uninterrupted, mode):
    suite = write_suite(tmp_path, name="slow", n=10, k_max=3, model=SLOW,
                        designs="[cot, {design: cot-sc, params: {k: 3}}]")
    store = tmp_path / "runs" / "slow.duckdb"
    run = asyncio.ensure_future(run_suite(RunOptions(suite=str(suite), engine="ray", workers=2, concurrency=2,
                                                     ray_mode=mode)))
    doc = await _live_shards(store, lambda d: any((m.get("done") or 0) >= 3 and m.get("pid")
                                                  for m in d["shards"].values()))
    i, victim = next((i, m) for i, m in doc["shards"].items() if (m.get("done") or 0) >= 3)
    os.kill(victim["pid"], signal.SIGKILL)
    s = await run
    assert s.status == "finished" and s.failed == 0
    assert counts(s.store, s.run_id) == uninterrupted
    again = await run_suite(RunOptions(suite=str(suite), engine="ray", workers=2, ray_mode=mode))
    assert again.run_id == s.run_id and again.ran == 0  # nothing was left to do


@pytest.mark.slow
async def test_a_killed_driver_leaves_parts_the_rerun_merges_once(tmp_path, ray_cluster, uninterrupted):
    suite = write_suite(tmp_path, name="slow", n=10, k_max=3, model=SLOWER,
                        designs="[cot, {design: cot-sc, params: {k: 3}}]")
    store = tmp_path / "runs" / "slow.duckdb"

    def parts_hold_rows(d: dict) -> bool:
        # every part has committed cells (its writer flushed: `saved`, not just `done` — a first flush
        # beside a CPU hog took 3.7 s, and a kill before it left the parts empty), and a third of the
        # run still to do (the file is up to 1 s old: the kill must not come after the run's end)
        shards = d["shards"].values()
        return (len(shards) == 2 and all((m.get("saved") or 0) >= 1 for m in shards)
                and d["done"] < d["total"] * 2 // 3)

    driver = subprocess.Popen([sys.executable, "-m", "masbench.cli", "run", str(suite), "--engine", "ray",
                               "--workers", "2", "--concurrency", "2", "--address", ray_cluster], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        doc = await _live_shards(store, parts_hold_rows)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    assert doc["done"] < doc["total"]  # killed mid-run
    saved = sum(m["saved"] for m in doc["shards"].values())
    pids = [m["pid"] for m in doc["shards"].values() if m.get("pid")]
    t0 = time.monotonic()
    while any(_alive(p) for p in pids) and time.monotonic() - t0 < 30:  # Ray ends a dead driver's tasks
        await asyncio.sleep(0.2)
    assert list((tmp_path / "runs" / "parts").glob("*.duckdb"))  # the killed run's parts, not merged yet
    s = await run_suite(RunOptions(suite=str(suite), engine="ray", workers=2))
    assert s.skipped >= saved >= 2 and s.failed == 0  # every cell a part had committed is kept, not rerun
    assert counts(s.store, s.run_id) == uninterrupted


@pytest.mark.slow
async def test_rate_limits_hold_across_ray_workers(tmp_path, ray_cluster, http_server, monkeypatch):
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test-not-a-secret")
    srv = http_server(latency_ms=20, prompt_tokens=20, completion_tokens=5, reply="Answer: 3")
    # the tests' scale (enginesuite.WINDOW_S): ≤ 60 requests in any 0.6 s and 10 in any 0.1 s; ≤ 900
    # tokens in any 0.6 s and 150 in any 0.1 s; never 5 open at once
    model = (f"{{id: openai/fake-model, api_base: '{srv.base_url}', api_key_env: MASBENCH_TEST_KEY, price: 0, "
             f"rpm: 6000, tpm: 90000, max_in_flight: 4, rate_window_s: {WINDOW_S:g}}}")
    # 80 calls: at 25 tokens each, twice what 0.6 s admits, and a burst of them would pass 10 in 0.1 s
    suite = limited_suite(tmp_path, "limits", model, n=20)
    s = await run_suite(RunOptions(suite=str(suite), engine="ray", workers=2))
    pts = call_points(s.store, s.run_id)
    assert len(pts) == 80 == srv.stats.requests and s.failed == 0
    reqs = [(t, 1.0) for t, _, _ in pts]
    toks = [(t, float(n)) for t, _, n in pts]
    assert most_in_window(reqs, WINDOW_S) <= 60 and most_in_window(reqs, WINDOW_S / 6) <= 10
    assert most_in_window(toks, WINDOW_S) <= 900 and most_in_window(toks, WINDOW_S / 6) <= 150
    assert 1 <= srv.stats.open_max <= 4  # (the rates bind first here; the cap binds in test_engines.py)


@pytest.mark.slow
async def test_a_429_pauses_every_ray_worker_until_its_retry_after(tmp_path, ray_cluster, http_server, monkeypatch):
    # as test_engines.py's, through the coordinator actor: both Ray workers hold for the Retry-After
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test-not-a-secret")
    await run_past_a_429(tmp_path, http_server, engine="ray")
