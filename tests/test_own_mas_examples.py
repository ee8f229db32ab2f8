"""The shipped program-design examples (examples/own_mas/: an openai-SDK solver + critic, a langgraph
supervisor with workers, a command: script on plain HTTP, two Pydantic AI agents — a third-party
framework unmodified but for its base URL — and debate-tiny as a program) run as the
designs of their quickstart-shaped suite, here on a simulated model: each ends ok, every call is
attributed to one of the program's agents, and compare gives each a verdict row."""

from __future__ import annotations

from pathlib import Path

import pytest

from masbench.harness import RunOptions, run_suite

from program_fixtures import q

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "own_mas"


@pytest.mark.slow
async def test_the_examples_run_as_designs_with_their_calls_by_agent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = await run_suite(RunOptions(suite="own-mas", lib=[str(EXAMPLES)], overrides={"default": "sim/p60"},
                                   store=tmp_path / "own-mas.duckdb", limit=4))
    assert s.failed == 0
    rows = dict(q(s.store, "SELECT design, list(DISTINCT status) FROM results WHERE run_id = ? GROUP BY ALL",
                  [s.run_id]))
    assert rows == {"cot": ["ok"], "solver-critic": ["ok"], "supervisor-workers": ["ok"], "cli-solver": ["ok"],
                    "pydantic-ai-team": ["ok"]}
    agents = {(d, a) for d, a in q(s.store, "SELECT DISTINCT design, agent FROM calls WHERE run_id = ? AND "
                                            "purpose = 'design' AND design <> 'cot'", [s.run_id])}
    assert agents == {("solver-critic", "solver"), ("solver-critic", "critic"), ("cli-solver", "solver"),
                      ("supervisor-workers", "supervisor"), ("supervisor-workers", "solver"),
                      ("supervisor-workers", "checker"), ("pydantic-ai-team", "solver"),
                      ("pydantic-ai-team", "reviewer")}
    per_task = q(s.store, "SELECT design, min(calls), max(calls) FROM results WHERE run_id = ? GROUP BY ALL "
                          "ORDER BY design", [s.run_id])
    assert per_task[:4] == [("cli-solver", 1, 1), ("cot", 1, 1), ("pydantic-ai-team", 2, 2), ("solver-critic", 2, 2)]
    _, least, most = per_task[4]  # the supervisor: 1-3 worker steps, a routing call before each, a final answer
    assert per_task[4][0] == "supervisor-workers" and 3 <= least <= most <= 7
    cmp = {d for (d,) in q(s.store, "SELECT design FROM design_comparison WHERE run_id = ? AND axis = 'all'",
                           [s.run_id])}
    assert {"solver-critic", "supervisor-workers", "cli-solver", "pydantic-ai-team"} <= cmp
    # the framework's requests as it sent them: its model settings reached the wire (and the calls rows)
    req = q(s.store, "SELECT DISTINCT agent, request FROM calls WHERE run_id = ? AND design = 'pydantic-ai-team'",
            [s.run_id])
    assert sorted((a, '"max_tokens": 64' in r or '"max_tokens": 48' in r) for a, r in req) == [
        ("reviewer", True), ("solver", True)]
