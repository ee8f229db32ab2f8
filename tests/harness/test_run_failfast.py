"""Fail fast on a misconfigured model, rerun failed cells on resume, and an honest exit code —
against our fault-injecting OpenAI-compatible server over real HTTP (issue 13)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clirun import Ran, masbench
from masbench.harness import RunOptions, run_suite
from masbench.harness.failures import RunAborted

SUITE = """name: {name}
models:
  default: {{id: openai/fake-model, api_base: "{base}", api_key_env: {key_env}, max_attempts: 2,
             input_usd_per_mtok: 1.0, output_usd_per_mtok: 2.0}}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: {n}, seed: 3}}
designs: [cot]
cot_sc: {{k_max: 2, bootstrap: 50}}
budget: {{per_task_tokens: 20000}}
concurrency: 8
store: {store}
"""
KEY = "MASBENCH_I13_KEY"


def suite(tmp: Path, srv, n: int = 2, name: str = "ff") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    p = tmp / f"{name}.yaml"
    p.write_text(SUITE.format(name=name, base=srv.base_url, key_env=KEY, n=n, store=tmp / "s.duckdb"))
    return p


def cli(path: Path, *extra: str, key: bool = True) -> Ran:
    """``masbench run PATH --no-cache EXTRA`` in this process, with or without the key set."""
    return masbench("run", str(path), "--no-cache", *extra, env={KEY: "sk-test-not-a-secret" if key else None})


def counts(store: Path) -> dict[str, int]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        q = lambda s: con.execute(s).fetchall()[0][0]  # noqa: E731
        return {"results": q("SELECT count(*) FROM results"),
                "distinct_results": q("SELECT count(DISTINCT (design, task_id, seed)) FROM results"),
                "failed": q("SELECT count(*) FROM results WHERE status = 'failed'"),
                "pool": q("SELECT count(*) FROM pool"),
                "distinct_pool": q("SELECT count(DISTINCT (task_id, seed, sample_index)) FROM pool"),
                "pool_errors": q("SELECT count(*) FROM pool WHERE error IS NOT NULL"),
                "calls": q("SELECT count(*) FROM calls"),
                "distinct_calls": q("SELECT count(DISTINCT call_id) FROM calls"),
                "result_calls": q("SELECT coalesce(sum(calls), 0) FROM results"),
                "design_calls": q("SELECT count(*) FROM calls WHERE purpose = 'design'"),
                "nodes": q("SELECT count(*) FROM nodes"),
                "curve": q("SELECT count(*) FROM cot_sc_curve")}
    finally:
        con.close()


@pytest.mark.slow
def test_no_key_fails_fast_then_the_fixed_rerun_reruns_exactly_the_failed_cells(tmp_path, http_server):
    srv = http_server(prompt_tokens=20, completion_tokens=5)
    ref = cli(suite(tmp_path / "ref", srv))
    assert ref.returncode == 0, ref.stderr
    want = counts(tmp_path / "ref" / "s.duckdb")
    srv.reset_stats()

    path = suite(tmp_path / "run", srv)
    bad = cli(path, key=False)
    assert bad.returncode == 3, bad.stderr
    errors = [ln for ln in bad.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and KEY in errors[0] and "'default'" in errors[0] and "openai/fake-model" in errors[0]
    assert srv.stats.requests <= 1  # one model: at most one call spent (here none: the key is checked first)
    store = tmp_path / "run" / "s.duckdb"
    con = duckdb.connect(str(store), read_only=True)
    status, reason = con.execute("SELECT status, reason FROM runs").fetchone()
    con.close()
    assert status == "failed" and KEY in reason

    fixed = cli(path)
    assert fixed.returncode == 0, fixed.stderr
    got = counts(store)
    for k in ("results", "distinct_results", "pool", "distinct_pool", "design_calls", "nodes", "curve"):
        assert got[k] == want[k], (k, got, want)
    assert got["failed"] == got["pool_errors"] == 0
    assert got["calls"] == got["distinct_calls"] and got["design_calls"] == got["result_calls"]
    con = duckdb.connect(str(store), read_only=True)
    superseded = con.execute("SELECT count(*) FROM calls_superseded").fetchone()[0]
    spend = con.execute("SELECT counted_calls, superseded_calls, spent_calls FROM run_spend").fetchone()
    con.close()
    assert superseded >= 1 and spend == (got["calls"], superseded, got["calls"] + superseded)


@pytest.mark.slow
async def test_a_401_aborts_after_one_request_and_marks_the_run_failed(tmp_path, http_server, monkeypatch):
    monkeypatch.setenv(KEY, "sk-test-not-a-secret")
    srv = http_server(fail_rate=1.0, fail_kinds=("401",))
    path = suite(tmp_path, srv, n=3)
    with pytest.raises(RunAborted) as info:
        await run_suite(RunOptions(suite=str(path), cache=False))
    assert "'default'" in str(info.value) and KEY in str(info.value) and "\n" not in str(info.value)
    assert srv.stats.requests == 1
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "failed"
    con.close()


async def test_the_same_bad_request_on_many_cells_is_systemic(tmp_path, http_server, monkeypatch):
    monkeypatch.setenv(KEY, "sk-test-not-a-secret")
    srv = http_server(fail_rate=1.0, fail_kinds=("400",))
    with pytest.raises(RunAborted, match="same bad request on 5 distinct cells"):
        await run_suite(RunOptions(suite=str(suite(tmp_path, srv, n=5)), cache=False))


@pytest.mark.slow
def test_a_bad_request_of_one_input_stays_a_cell_failure_and_exit_code_says_so(tmp_path, http_server):
    srv = http_server(fail_rate=0.08, fail_kinds=("400",), seed=11)
    path = suite(tmp_path, srv, n=3)
    res = cli(path, "--no-retry-failed")
    assert res.returncode == 1, res.stderr
    assert "failed cell(s)" in res.stderr and "× BadRequestError" in res.stderr
    got = counts(tmp_path / "s.duckdb")
    assert got["failed"] + got["pool_errors"] >= 1
    again = cli(path, "--no-retry-failed", "--allow-failures")  # keeps the failed cells, exits 0
    assert again.returncode == 0, again.stderr
    assert counts(tmp_path / "s.duckdb") == got


@pytest.mark.slow
async def test_with_workers_a_misconfigured_model_aborts_every_worker(tmp_path, http_server, monkeypatch):
    monkeypatch.delenv(KEY, raising=False)
    srv = http_server()
    with pytest.raises(RunAborted, match=KEY):
        await run_suite(RunOptions(suite=str(suite(tmp_path, srv, n=3)), cache=False, workers=2))
    assert srv.stats.requests == 0
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "failed"
    con.close()
    assert not list((tmp_path / "parts").glob("*.duckdb"))  # parts merged, nothing left behind


@pytest.mark.slow
def test_doctor_makes_one_call_per_model_and_names_what_to_set(tmp_path, http_server):
    srv = http_server()
    path = suite(tmp_path, srv)
    bad = masbench("doctor", str(path), env={KEY: None})
    assert bad.returncode == 3 and KEY in bad.stdout and "misconfigured" in bad.stdout, bad.stdout + bad.stderr
    good = masbench("doctor", str(path), env={KEY: "sk-test-not-a-secret"})
    assert good.returncode == 0 and "default (openai/fake-model): ok" in good.stdout, good.stdout + good.stderr
    assert srv.stats.requests == 1
