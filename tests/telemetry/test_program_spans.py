"""A program design's calls, made over HTTP to the metering endpoint, are exported as chat spans
under the program's workflow span, under its cell and the run (the cell's context is carried to
the endpoint's calls), one per ``calls`` row."""

from __future__ import annotations

import pytest

from masbench.harness import RunOptions, run_suite

from otelfix import clean_otel_env, memory  # noqa: F401 - fixtures
from program_fixtures import SOLVER_CRITIC, q, write_program, write_suite


@pytest.mark.slow
async def test_a_programs_calls_are_chat_spans_under_its_workflow_and_cell(tmp_path, monkeypatch, memory):
    monkeypatch.chdir(tmp_path)
    write_program(tmp_path, "sc_spans", SOLVER_CRITIC,
                  "name: solver-critic\nkind: program\nentry: sc_spans:solve\nagents: [solver, critic]\n")
    suite = write_suite(tmp_path, "spans", "[solver-critic]", n=2)
    s = await run_suite(RunOptions(suite=str(suite), lib=[str(tmp_path)]))
    spans = memory.get_finished_spans()
    by = {sp.context.span_id: sp for sp in spans}
    ids = {c for (c,) in q(s.store, "SELECT call_id FROM calls WHERE run_id = ? AND design = 'solver-critic'",
                           [s.run_id])}
    chats = [sp for sp in spans if sp.attributes.get("masbench.call_id") in ids]
    assert len(chats) == len(ids) == 4
    for sp in chats:
        chain = []
        cur = sp
        while cur is not None:
            chain.append(cur.name.split(" ", 1)[0])
            cur = by.get(cur.parent.span_id) if cur.parent is not None else None
        assert chain == ["chat", "invoke_workflow", "cell", "run"], chain
        parent = by[sp.parent.span_id]
        assert parent.attributes.get("gen_ai.workflow.name") == "solver-critic"
