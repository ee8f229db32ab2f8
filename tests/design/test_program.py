"""Program designs run as designs of a suite: every call through the metering endpoint (real HTTP on
127.0.0.1, the ``openai`` SDK), recorded, budgeted and attributed like a YAML design's."""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from masbench.cli import app

from masbench.harness import RunOptions, run_suite
from masbench.testing.openai_server import FakeOpenAIServer

from program_fixtures import ECHO_META, LOOPER, RAISER, SLEEPER, SOLVER_CRITIC, SYNC_SDK, q, write_program, write_suite


def _opts(suite, root, **kw) -> RunOptions:
    return RunOptions(suite=str(suite), lib=[str(root)], **kw)


@pytest.mark.slow
async def test_a_program_design_is_run_recorded_and_judged_like_a_design(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_program(tmp_path, "sc_prog", SOLVER_CRITIC, """
        name: solver-critic
        kind: program
        entry: sc_prog:solve
        agents: [solver, critic]
        timeout_s: 60
    """)
    suite = write_suite(tmp_path, "sc", "[cot, solver-critic]")
    s = await run_suite(_opts(suite, tmp_path))
    assert s.failed == 0
    res = q(s.store, "SELECT status, calls, tokens, prompt_tokens, completion_tokens, answer FROM results "
                     "WHERE run_id = ? AND design = 'solver-critic' ORDER BY task_id", [s.run_id])
    assert len(res) == 4 and all(r[0] == "ok" and r[1] == 2 and r[5] for r in res)
    by_task = q(s.store, "SELECT r.task_id, r.tokens, sum(c.prompt_tokens + c.completion_tokens), count(*) "
                         "FROM results r JOIN calls c USING (run_id, design, task_id, seed) "
                         "WHERE r.run_id = ? AND r.design = 'solver-critic' GROUP BY ALL", [s.run_id])
    assert all(t == c and n == 2 for _, t, c, n in by_task)  # the result counts exactly its calls
    agents = q(s.store, "SELECT agent, node, count(*) FROM calls WHERE run_id = ? AND design = 'solver-critic' "
                        "GROUP BY ALL ORDER BY agent", [s.run_id])
    assert agents == [("critic", "critic", 4), ("solver", "solver", 4)]
    nodes = q(s.store, "SELECT agent, op, sum(calls), sum(tokens) FROM nodes WHERE run_id = ? "
                       "AND design = 'solver-critic' GROUP BY ALL ORDER BY agent", [s.run_id])
    calls_by_agent = q(s.store, "SELECT agent, sum(prompt_tokens + completion_tokens) FROM calls WHERE run_id = ? "
                                "AND design = 'solver-critic' GROUP BY ALL ORDER BY agent", [s.run_id])
    assert [(a, op, n) for a, op, n, _ in nodes] == [("critic", "program", 4), ("solver", "program", 4)]
    assert [(a, t) for a, _, _, t in nodes] == calls_by_agent
    texts = q(s.store, "SELECT count(*) FROM call_messages m JOIN calls c USING (call_id) "
                       "WHERE c.design = 'solver-critic'")
    assert texts[0][0] >= 8 * 2  # every call's messages and reply are in its transcript
    cmp = q(s.store, "SELECT design, n FROM design_comparison WHERE run_id = ? AND axis = 'all' ORDER BY design",
            [s.run_id])
    assert ("solver-critic", 4) in cmp
    # compare --by-agent: what each agent spent, from the agent_costs view
    view = q(s.store, "SELECT design, agent, calls, tokens, tasks, token_share FROM agent_costs WHERE run_id = ? "
                      "ORDER BY design, agent", [s.run_id])
    assert [(d, a, n, t) for d, a, n, t, _, _ in view if d == "solver-critic"] == [
        ("solver-critic", a, 4, t) for a, t in calls_by_agent]
    assert abs(sum(sh for d, *_, sh in view if d == "solver-critic") - 1) < 1e-9
    out = CliRunner().invoke(app, ["compare", "--store", str(s.store), "--by-agent"], env={"COLUMNS": "200"}).output
    assert "cost by agent" in out and all(f"│ {a} " in out for a in ("solver", "critic", "cot-solver"))
    s2 = await run_suite(_opts(suite, tmp_path))  # resumed: nothing left to run
    assert s2.run_id == s.run_id and s2.ran == 0


@pytest.mark.slow
async def test_the_tokens_stored_are_what_the_backend_served(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_program(tmp_path, "sc_prog_http", SOLVER_CRITIC, """
        name: solver-critic
        kind: program
        entry: sc_prog_http:solve
        agents: [solver, critic]
    """)
    async with FakeOpenAIServer(latency_ms=2) as srv:
        monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test")
        suite = write_suite(tmp_path, "served", "[solver-critic]", model="openai/fake")
        s = await run_suite(_opts(suite, tmp_path, api_base={"default": srv.base_url}, free=["default"]))
        served = (srv.stats.requests, srv.stats.prompt_tokens, srv.stats.completion_tokens)
    stored = q(s.store, "SELECT count(*), sum(prompt_tokens), sum(completion_tokens) FROM calls "
                        "WHERE run_id = ? AND purpose = 'design'", [s.run_id])[0]
    pool = q(s.store, "SELECT count(*), sum(prompt_tokens), sum(completion_tokens) FROM calls "
                      "WHERE run_id = ? AND purpose = 'pool'", [s.run_id])[0]
    assert stored[0] == 8
    assert tuple(a + b for a, b in zip(stored, pool)) == served
    res = q(s.store, "SELECT sum(prompt_tokens), sum(completion_tokens), sum(calls) FROM results WHERE run_id = ?",
            [s.run_id])[0]
    assert res == (stored[1], stored[2], stored[0])


@pytest.mark.slow
async def test_an_endless_program_stops_at_its_budget_not_its_timeout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_program(tmp_path, "looper_prog", LOOPER, """
        name: looper
        kind: program
        entry: looper_prog:solve
        timeout_s: 120
    """)
    suite = write_suite(tmp_path, "loop", "[looper]", n=2, budget=1500)
    t0 = time.perf_counter()
    s = await run_suite(_opts(suite, tmp_path))
    assert time.perf_counter() - t0 < 60
    rows = q(s.store, "SELECT status, tokens, budget_spent, calls, error FROM results WHERE run_id = ?", [s.run_id])
    assert len(rows) == 2
    for status, tokens, spent, calls, error in rows:
        assert status == "budget_exhausted" and calls > 3 and spent <= 1500 and tokens <= 1500
        assert "PermissionDeniedError" in error and "budget" in error
    made = q(s.store, "SELECT count(*) FROM calls WHERE run_id = ? AND purpose = 'design'", [s.run_id])[0][0]
    assert made == sum(r[3] for r in rows)


@pytest.mark.slow
async def test_failures_and_timeouts_are_the_cells_and_the_run_goes_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_program(tmp_path, "raiser_prog", RAISER, "name: raiser\nkind: program\nentry: raiser_prog:solve\n")
    write_program(tmp_path, "sleeper_prog", SLEEPER,
                  "name: sleeper\nkind: program\nentry: sleeper_prog:solve\ntimeout_s: 1.5\n")
    write_program(tmp_path, "sync_prog", SYNC_SDK, "name: sync\nkind: program\nentry: sync_prog:solve\n")
    suite = write_suite(tmp_path, "fails", "[raiser, sleeper, sync]", n=2)
    s = await run_suite(_opts(suite, tmp_path))
    rows = {(d, t[-1]): (st, calls, err, ans) for d, t, st, calls, err, ans in q(
        s.store, "SELECT design, task_id, status, calls, error, answer FROM results WHERE run_id = ?", [s.run_id])}
    assert rows[("raiser", "0")][:2] == ("ok", 0) and rows[("raiser", "0")][3] == "7"  # a structured answer
    st, _, err, _ = rows[("raiser", "1")]
    assert st == "failed" and "ValueError: the program gave up on" in err
    for t in "01":
        st, calls, err, _ = rows[("sleeper", t)]
        assert st == "failed" and "timeout_s = 1.5" in err and calls == 1  # its call so far is counted
        assert rows[("sync", t)][0] == "ok" and rows[("sync", t)][1] == 1
    assert q(s.store, "SELECT count(*) FROM calls WHERE run_id = ? AND design = 'sleeper'", [s.run_id])[0][0] == 2
    assert {a for (a,) in q(s.store, "SELECT DISTINCT agent FROM calls WHERE design = 'sync'")} == {"solo"}


@pytest.mark.slow
async def test_a_program_is_handed_the_question_and_meta_but_no_gold(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_program(tmp_path, "echo_prog", ECHO_META, "name: echo\nkind: program\nentry: echo_prog:solve\n"
                                                    "params: {k: 1, style: terse}\n")
    suite = write_suite(tmp_path, "echo", "[{design: echo, params: {k: 2}, label: echo}]", n=1)
    s = await run_suite(_opts(suite, tmp_path))
    handed = json.loads((tmp_path / "handed.json").read_text())
    task = handed["task"]
    assert task["id"] == q(s.store, "SELECT task_id FROM results WHERE run_id = ?", [s.run_id])[0][0]
    assert task["question"].endswith("?") and task["params"] == {"k": 2, "style": "terse"}
    assert task["meta"]["style"] == "word" and task["meta"]["split"] == "test"
    assert "dag" not in task["meta"] and '"value"' not in json.dumps(task)  # the solution graph is withheld
    assert handed["models"] == ["default"] and handed["seed"] == 0
    assert q(s.store, "SELECT answer, status FROM results WHERE run_id = ?", [s.run_id]) == [("0", "ok")]
