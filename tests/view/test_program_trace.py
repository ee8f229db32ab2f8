"""The trace page of a program design's cell: its agents (one node each, from the ``nodes`` rows)
and every call it made at the metering endpoint, with its transcript, by agent."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest
from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: program_fixtures

from masbench.harness import RunOptions, run_suite  # noqa: E402
from masbench.view import create_app  # noqa: E402
from program_fixtures import SOLVER_CRITIC, q, write_program, write_suite  # noqa: E402


@pytest.mark.slow
async def test_a_program_cells_trace_page_shows_its_agents_and_calls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_program(tmp_path, "sc_view", SOLVER_CRITIC,
                  "name: solver-critic\nkind: program\nentry: sc_view:solve\nagents: [solver, critic]\n")
    suite = write_suite(tmp_path, "viewprog", "[solver-critic]", n=1)
    s = await run_suite(RunOptions(suite=str(suite), lib=[str(tmp_path)]))
    task, seed = q(s.store, "SELECT task_id, seed FROM results WHERE run_id = ?", [s.run_id])[0]
    r = TestClient(create_app(s.store)).get(
        "/trace?" + urlencode({"run": s.run_id, "design": "solver-critic", "task": task, "seed": seed}))
    assert r.status_code == 200
    text = html.unescape(re.sub(r"<[^>]+>", "", r.text))
    replies = [t for (t,) in q(s.store, "SELECT t.text FROM call_messages m JOIN texts t USING (text_hash) "
                                        "WHERE m.run_id = ? AND m.direction = 'output' AND m.design = 'solver-critic'", [s.run_id])]
    assert len(replies) == 2 and all(reply.strip()[:40] in text for reply in replies)
    assert "solver" in text and "critic" in text and "program" in text  # the agents' nodes, op program
