"""Engines as one registered kind, and the run-wide rate limits on the local engines (one process
and --workers 2): windows measured from the calls' timestamps in the store, in-flight counted by
the OpenAI-compatible server itself. (The ray engine: test_engine_ray.py.)"""

from __future__ import annotations

import sys

import pytest

from enginesuite import WINDOW_S, call_points, limited_suite, most_in_window, run_past_a_429
from masbench.harness import RunOptions, run_suite
from masbench.harness.engine import EngineContext, EngineUnavailable, engine_class
from masbench.registry import ENGINES, RegistryError

ENGINES_RUN = [("local", 1), ("processes", 2)]


def test_the_three_engines_are_registered_and_unknown_ones_refused():
    assert {"local", "processes", "ray"} <= set(ENGINES.names())
    assert engine_class(RunOptions(suite="x")).__name__ == "LocalEngine"
    assert engine_class(RunOptions(suite="x", workers=2)).__name__ == "ProcessEngine"
    with pytest.raises(RegistryError, match="unknown engine 'spark'"):
        engine_class(RunOptions(suite="x", engine="spark"))


def test_ray_engine_without_ray_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(EngineUnavailable, match=r"pip install 'masbench-eval\[ray\]'"):
        engine_class(RunOptions(suite="x", engine="ray"))


def test_an_unknown_ray_mode_is_refused_naming_the_modes():
    with pytest.raises(EngineUnavailable, match=r"--ray-mode 'threads': choose one of tasks, actors"):
        engine_class(RunOptions(suite="x", engine="ray", ray_mode="threads"))


def test_the_response_cache_sits_beside_the_store(tmp_path):
    ctx = EngineContext(RunOptions(suite="x"), None, "r", None, tmp_path / "runs" / "q.duckdb",  # type: ignore[arg-type]
                        True, 1, None, None, None)  # type: ignore[arg-type]
    assert ctx.cache_path == tmp_path / "runs" / "q.cache.sqlite"


@pytest.mark.slow
@pytest.mark.waits
@pytest.mark.parametrize("engine,workers", ENGINES_RUN)
async def test_rpm_holds_in_every_window_across_workers(tmp_path, engine, workers):
    # rpm 6000 over a 0.6-s window: at most 60 in any 0.6 s and 10 in any 0.1 s (enginesuite.WINDOW_S)
    model = f"{{id: sim/p60, rpm: 6000, rate_window_s: {WINDOW_S:g}}}"
    suite = limited_suite(tmp_path, "rpm", model, n=40)
    s = await run_suite(RunOptions(suite=str(suite), engine=engine, workers=workers))
    pts = call_points(s.store, s.run_id)
    assert len(pts) == 160 and s.failed == 0
    reqs = [(t, 1.0) for t, _, _ in pts]
    assert most_in_window(reqs, WINDOW_S) <= 60
    assert most_in_window(reqs, WINDOW_S / 6) <= 10
    span = max(t for t, _ in reqs) - min(t for t, _ in reqs)
    assert span >= (160 - 10) / 100 - 0.01  # at most 100 a second: it could not have been faster


@pytest.mark.slow
@pytest.mark.waits
@pytest.mark.parametrize("engine,workers", ENGINES_RUN)
async def test_tpm_holds_in_every_window_across_workers(tmp_path, engine, workers):
    model = f"{{id: sim/p60, tpm: 600000, rate_window_s: {WINDOW_S:g}}}"  # 6,000 per 0.6 s, 1,000 per 0.1 s
    suite = limited_suite(tmp_path, "tpm", model, n=30)
    s = await run_suite(RunOptions(suite=str(suite), engine=engine, workers=workers))
    pts = call_points(s.store, s.run_id)
    assert len(pts) == 120 and s.failed == 0
    toks = [(t, float(n)) for t, _, n in pts]
    total = sum(n for _, n in toks)
    assert most_in_window(toks, WINDOW_S) <= 6_000
    assert most_in_window(toks, WINDOW_S / 6) <= 1_000
    span = max(t for t, _ in toks) - min(t for t, _ in toks)
    assert span >= (total - 1_000) / 10_000 - 0.01


@pytest.mark.slow
@pytest.mark.waits
@pytest.mark.parametrize("engine,workers", ENGINES_RUN)
async def test_max_in_flight_seen_by_the_server(tmp_path, http_server, monkeypatch, engine, workers):
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test-not-a-secret")
    srv = http_server(latency_ms=30, prompt_tokens=20, completion_tokens=5, reply="Answer: 3")
    model = (f"{{id: openai/fake-model, api_base: '{srv.base_url}', api_key_env: MASBENCH_TEST_KEY, price: 0, "
             f"concurrency: 16, max_in_flight: 4}}")
    suite = limited_suite(tmp_path, "inflight", model, n=20)
    s = await run_suite(RunOptions(suite=str(suite), engine=engine, workers=workers))
    assert srv.stats.requests == 80 and s.failed == 0
    assert srv.stats.open_max == 4  # never 5 open at once; and the cap was reached (16 per process would be)


@pytest.mark.slow
@pytest.mark.waits
async def test_a_429_pauses_every_worker_until_its_retry_after(tmp_path, http_server, monkeypatch):
    # the first 3 requests are answered 429 with Retry-After: 2 (a provider's quota hit); the
    # parent's limiter then holds both workers' next requests for 2 s (server-side timestamps)
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test-not-a-secret")
    await run_past_a_429(tmp_path, http_server, engine="processes")


@pytest.mark.parametrize("engine,workers,held", [("local", 1, 6), ("processes", 2, 0)])
async def test_a_sharded_driver_holds_no_task_while_its_workers_run(tmp_path, monkeypatch, engine, workers, held):
    # the workers prepare the suite themselves: the driver keeps each task's group, not the task
    seen: list[tuple[int, int]] = []
    cls = ENGINES[engine]
    original = cls.run

    async def watched(self, cells):
        seen.append((len(self.ctx.prep.tasks), len(cells)))
        await original(self, cells)

    monkeypatch.setattr(cls, "run", watched)
    suite = limited_suite(tmp_path, "held", "sim/medium", n=3)  # 6 tasks: 6 cot cells + 6 pool cells
    s = await run_suite(RunOptions(suite=str(suite), engine=engine, workers=workers))
    assert seen == [(held, 12)] and s.failed == 0
    import duckdb

    con = duckdb.connect(str(s.store), read_only=True)
    # the curve still found every task's group: one curve row per group (all, depth 1, depth 2) and k
    groups = con.execute("SELECT count(DISTINCT (axis, axis_value)) FROM cot_sc_curve WHERE run_id = ?",
                         [s.run_id]).fetchall()[0][0]
    con.close()
    assert groups == 3


def test_trim_gives_back_what_glibc_holds_or_says_it_cannot():
    from masbench.harness.memory import trim

    assert trim() is sys.platform.startswith("linux")  # glibc here; elsewhere a no-op that says so
