"""The harness end to end on simulated models: cells, pool, curve, metrics views, resume, workers."""

from __future__ import annotations

import itertools
import math
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.harness import RunOptions, run_suite

from clirun import masbench
from simsuite import SUITE, assert_transcripts_consistent, counts, write_suite  # noqa: F401 - shared with other test modules



@pytest.mark.slow
async def test_suite_runs_end_to_end_and_resumes_without_rerunning(tmp_path):
    suite = write_suite(tmp_path)
    s1 = await run_suite(RunOptions(suite=str(suite)))
    n_tasks, designs, k_max = 8, 3, 5
    assert s1.total_cells == n_tasks * (designs + 1) and s1.ran == s1.total_cells and s1.failed == 0
    c = counts(s1.store, s1.run_id)
    assert c["results"] == c["distinct_results"] == n_tasks * designs
    assert c["pool"] == c["distinct_pool"] == n_tasks * k_max
    assert c["pool_calls"] == n_tasks * k_max
    assert c["design_calls"] == c["result_calls"]  # every call a result counts is in the log, and no more
    assert c["calls"] == c["distinct_calls"]
    assert c["curve"] == k_max * 3  # all + depth=1 + depth=2
    s2 = await run_suite(RunOptions(suite=str(suite)))
    assert s2.run_id == s1.run_id and s2.ran == 0 and s2.skipped == s1.total_cells
    assert counts(s2.store, s2.run_id) == c
    s3 = await run_suite(RunOptions(suite=str(suite), new=True))
    assert s3.run_id != s1.run_id and s3.ran == s3.total_cells
    assert s3.stats["cache_hits"] == s3.stats["calls"]  # a new run of the same suite is served by the cache
    con = duckdb.connect(str(s1.store), read_only=True)
    simulated = con.execute("SELECT bool_and(simulated) FROM results").fetchall()[0][0]
    rows = con.execute("SELECT design, n, accuracy FROM design_comparison WHERE run_id = ? AND axis = 'all'",
                       [s1.run_id]).fetchall()
    con.close()
    assert simulated is True
    assert {r[0] for r in rows} == {"cot", "cot-sc[k=3]", "debate"} and all(r[1] == n_tasks for r in rows)


@pytest.mark.slow
async def test_budget_is_never_exceeded_in_a_suite(tmp_path):
    suite = write_suite(tmp_path, name="tight", budget=700, designs="[debate, {design: cot-sc, params: {k: 9}}]", k_max=2)
    s = await run_suite(RunOptions(suite=str(suite)))
    con = duckdb.connect(str(s.store), read_only=True)
    over = con.execute("""SELECT count(*) FROM (SELECT design, task_id, seed, sum(prompt_tokens + completion_tokens) t
                          FROM calls WHERE run_id = ? AND purpose = 'design' GROUP BY ALL) WHERE t > 700""",
                       [s.run_id]).fetchall()[0][0]
    exhausted = con.execute("SELECT count(*) FROM results WHERE run_id = ? AND status = 'budget_exhausted'",
                            [s.run_id]).fetchall()[0][0]
    con.close()
    assert over == 0
    assert exhausted > 0  # the cap really bit


def exact_maj(p: float, weights: list[float], k: int) -> float:
    """Exact maj@k for i.i.d. draws: gold with prob p, wrong answer i with (1-p)·w_i; ties split."""
    probs = [p] + [(1 - p) * w / sum(weights) for w in weights]
    total = 0.0
    for xs in itertools.product(range(k + 1), repeat=len(probs)):
        if sum(xs) != k:
            continue
        pr = math.factorial(k)
        for x, q in zip(xs, probs):
            pr *= q ** x / math.factorial(x)
        top = max(xs)
        if xs[0] == top and top > 0:
            total += pr / sum(1 for x in xs if x == top)
    return total


@pytest.mark.slow
@pytest.mark.parametrize("p", [0.35, 0.6])
async def test_maj_at_k_from_pool_matches_multinomial_expectation(tmp_path, p):
    pct = int(p * 100)
    suite = write_suite(tmp_path, name=f"pool{pct}", model=f"sim/p{pct}", n=150, designs="[cot]", k_max=9)
    s = await run_suite(RunOptions(suite=str(suite)))
    con = duckdb.connect(str(s.store), read_only=True)
    curve = {k: (acc, lo, hi) for k, acc, lo, hi in con.execute(
        "SELECT k, accuracy, ci_lo, ci_hi FROM cot_sc_curve WHERE run_id = ? AND axis = 'all'", [s.run_id]).fetchall()}
    con.close()
    for k in (1, 3, 5, 9):
        acc, lo, hi = curve[k]
        want = exact_maj(p, [0.5, 0.3, 0.2], k)
        slack = 0.01  # bootstrap percentile CIs are slightly narrow at 300 tasks
        assert lo - slack <= want <= hi + slack, (k, acc, lo, hi, want)


@pytest.mark.slow
def test_cli_run_prints_run_id_and_report_command(tmp_path):
    suite = write_suite(tmp_path, name="clirun", n=2, designs="[cot]", k_max=2)
    res = CliRunner().invoke(app, ["run", str(suite)])
    assert res.exit_code == 0, res.output
    assert "report: masbench report" in res.output and "SIMULATED" in res.output
    res = CliRunner().invoke(app, ["run", str(suite), "--model", "default"])
    assert res.exit_code != 0


def _run_cmd(suite: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "masbench.cli", "run", str(suite), *extra]


@pytest.mark.slow
@pytest.mark.waits
def test_killed_mid_run_then_resumed_reaches_same_counts(tmp_path):
    # A reference run to completion in its own store.
    (tmp_path / "ref").mkdir()
    ref_suite = write_suite(tmp_path / "ref", name="slow", model="sim/p60", n=10, designs="[cot, {design: cot-sc, params: {k: 3}}, debate]", k_max=4)
    # the reference and the resumed run in this process (tests/clirun.py): only the killed run needs
    # a process of its own
    ref = masbench("run", str(ref_suite), "--no-cache")
    assert ref.returncode == 0, ref.stderr
    ref_id = ref.stdout.strip().splitlines()[-1]
    want = counts(tmp_path / "ref" / "runs" / "slow.duckdb", ref_id)
    # The same suite with latency, killed mid-way.
    slow = tmp_path / "killed"
    slow.mkdir()
    suite = write_suite(slow, name="slow", model="slowsim", n=10,
                        designs="[cot, {design: cot-sc, params: {k: 3}}, debate]", k_max=4)
    text = suite.read_text().replace("default: slowsim", "default: {id: sim/p60-slow, sim: {accuracy: {default: 0.6}, latency_ms: 300}}")
    suite.write_text(text)
    # one progress line per line, at most one every 5 s (not 10: the wait for the lines below)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "400", "MASBENCH_PROGRESS_INTERVAL_S": "5"}
    proc = subprocess.Popen(_run_cmd(suite, "--no-cache", "--concurrency", "2"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    # Kill on what the run reports, not after a fixed sleep. A progress line is printed after the
    # finished cell's rows are flushed, and lines are >= 5 s apart (300 ms a call at concurrency 2: the
    # run lasts ~30 s, well past the third line) while the writer flushes every
    # 2 s, so every cell counted on one line is in the store once the NEXT line appears.
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()
    total = want["results"] + want["pool"] // 4  # design cells + pool cells (k_max 4 samples each)
    pool_first = want["pool"] // 4  # pool cells are queued first: of pool_first + 4 done cells >= 4 are designs
    try:
        acked, seen = None, []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                assert proc.poll() is None, ("run ended early", seen[-3:])
                continue
            seen.append(line)
            m = re.search(r"(\d+)/(\d+) cells · calls", line)
            if not m:
                continue
            done, tot = int(m[1]), int(m[2])
            assert tot == total and done < total, ("the run finished before it could be killed", line)
            if acked is not None:
                break  # the next line: the cells counted on the earlier one are flushed
            if done >= pool_first + 4:
                acked = done
        assert acked is not None, ("no progress line reached pool_first + 4 cells", seen[-3:])
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    store = slow / "runs" / "slow.duckdb"
    con = duckdb.connect(str(store))
    run_id, status = con.execute("SELECT run_id, status FROM runs").fetchall()[0]
    partial = con.execute("SELECT count(*) FROM results").fetchall()[0][0]
    con.close()
    # strictly partial: some results (at least the acknowledged design cells), not all of them
    assert status == "running"
    assert 0 < acked - pool_first <= partial < want["results"], (acked, partial, want)
    print(f"\nkilled after {acked}/{total} cells reported; the store held {partial}/{want['results']} results")
    # the rest at a higher concurrency (a resume may change it): every remaining cell in flight at once
    res = masbench("run", str(suite), "--no-cache", "--concurrency", "64",
                   env={"COLUMNS": "400", "MASBENCH_PROGRESS_INTERVAL_S": "5"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == run_id  # resumed, not restarted
    got = counts(store, run_id)
    for key in ("results", "distinct_results", "pool", "distinct_pool", "curve", "design_calls", "pool_calls"):
        assert got[key] == want[key], (key, got, want)
    assert got["calls"] == got["distinct_calls"] and got["design_calls"] == got["result_calls"]
    # the transcripts of a killed-and-resumed run: none orphaned or duplicated, every call's kept,
    # as many messages as the uninterrupted run's
    assert_transcripts_consistent(store)
    con = duckdb.connect(str(store), read_only=True)
    bare = con.execute("SELECT count(*) FROM calls c WHERE NOT EXISTS (SELECT 1 FROM call_messages m "
                       "WHERE m.call_id = c.call_id)").fetchall()[0][0]
    n_msgs = con.execute("SELECT count(*) FROM call_messages").fetchall()[0][0]
    con.close()
    con = duckdb.connect(str(tmp_path / "ref" / "runs" / "slow.duckdb"), read_only=True)
    ref_msgs = con.execute("SELECT count(*) FROM call_messages").fetchall()[0][0]
    con.close()
    assert bare == 0 and n_msgs == ref_msgs > 0, (bare, n_msgs, ref_msgs)


@pytest.mark.slow
async def test_workers_shard_and_merge_to_the_same_counts(tmp_path):
    suite = write_suite(tmp_path, name="sharded", n=6, k_max=3)
    one = await run_suite(RunOptions(suite=str(suite), store=tmp_path / "one.duckdb"))
    two = await run_suite(RunOptions(suite=str(suite), store=tmp_path / "two.duckdb", workers=2))
    a, b = counts(one.store, one.run_id), counts(two.store, two.run_id)
    assert a == b
    assert not list((tmp_path / "parts").glob("*.duckdb"))  # parts merged and removed


@pytest.mark.slow
async def test_routed_agent_in_a_suite_logs_decisions_with_outcomes(tmp_path):
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "routed-solver.yaml").write_text(
        "name: routed-solver\nmodel: {route: arith-pool, lambda: 0.1}\nprompt: |\n  {question}\n"
        "  End with \"Answer: <final answer>\".\nmax_tokens: 256\n")
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines" / "routed.yaml").write_text(
        "name: routed\nkind: baseline\nnodes:\n  solve: {agent: routed-solver}\noutput: solve\n")
    suite = write_suite(tmp_path, name="routedsuite", n=5, designs="[routed]", k_max=2)
    s = await run_suite(RunOptions(suite=str(suite), lib=[tmp_path]))
    con = duckdb.connect(str(s.store), read_only=True)
    n, with_outcome, models, designs = con.execute(
        "SELECT count(*), count(outcome), count(DISTINCT chosen), min(design) FROM routing_decisions WHERE run_id = ?",
        [s.run_id]).fetchall()[0]
    routed_models = {r[0] for r in con.execute(
        "SELECT DISTINCT model FROM calls WHERE run_id = ? AND design = 'routed'", [s.run_id]).fetchall()}
    con.close()
    assert n == 10 and with_outcome == 10 and designs == "routed"
    assert routed_models and all(m.startswith("sim/") for m in routed_models)
    assert routed_models <= {"sim/tiny", "sim/mathy", "sim/frontier"}


@pytest.mark.slow
async def test_suite_can_list_the_meta_designer_and_its_search_is_logged(tmp_path):
    suite = write_suite(tmp_path, name="metasuite", n=2, k_max=2, budget=6000,
                        designs="[cot, {design: meta-designer, params: {max_rounds: 1}}]")
    s = await run_suite(RunOptions(suite=str(suite)))
    assert s.failed == 0
    con = duckdb.connect(str(s.store), read_only=True)
    q = lambda sql: con.execute(sql, [s.run_id]).fetchall()  # noqa: E731
    results = q("SELECT design, count(*) FROM results WHERE run_id = ? GROUP BY 1 ORDER BY 1")
    designs = q("SELECT count(*), count(DISTINCT task_id) FROM designs WHERE run_id = ?")[0]
    search = q("SELECT count(*) FROM calls WHERE run_id = ? AND purpose = 'search'")[0][0]
    spent = q("""SELECT max(t) FROM (SELECT task_id, seed, sum(prompt_tokens + completion_tokens) t FROM calls
                 WHERE run_id = ? AND design LIKE 'meta-designer%' GROUP BY ALL)""")[0][0]
    con.close()
    assert results == [("cot", 4), ("meta-designer[max_rounds=1]", 4)]
    assert designs[0] >= 4 and designs[1] == 4  # every task got (and logged) its own designs
    assert search > 0
    assert spent <= 6000  # the suite budget caps the designer's search and its runs together
