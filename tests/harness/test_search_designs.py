"""The bundled tool-using designs end to end on the search benchmark with a simulated searcher:
every cell runs, tool calls are stored and recall is a view; the single agent's context limit
binds as hops grow (what the study in benchmarks/react_hops_study.py measures); a chain of
fresh-context searchers hands its notes on and stops on DONE; a pool of ReAct runs is the
reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from masbench.harness import RunOptions, run_suite

from simsuite import q

SUITE = """name: {name}
models:
  default: {{id: sim/searcher, sim: {{accuracy: {{default: 0.95}}, tools: {{search: {search}}}}}}}
tasks:
  - {{generator: search, name: s, values: {hops}, n: {n}, seed: 0, params: {{corpus_size: 400, distractors: 1}}}}
designs: {designs}
cot_sc: {{k_max: 2, agent: searcher, kind: react, params: {{max_steps: 8, context_tokens: {context}}}}}
budget: {{per_task_tokens: 400000}}
store: {store}
"""


def _suite(tmp_path: Path, name: str, designs: str, hops: str = "[2]", n: int = 6, search: float = 1.0,
           context: int = 8000) -> Path:
    d = tmp_path / "tasks"
    d.mkdir(exist_ok=True)
    p = d / f"{name}.yaml"
    p.write_text(SUITE.format(name=name, designs=designs, hops=hops, n=n, search=search, context=context,
                              store=tmp_path / f"{name}.duckdb"))
    return p


@pytest.mark.slow
async def test_every_search_design_runs_and_its_tool_calls_and_recall_are_stored(tmp_path):
    designs = "[react, {design: react-sc, params: {k: 2}}, planner-searchers, hop-chain]"
    s = await run_suite(RunOptions(suite=str(_suite(tmp_path, "all4", designs))))
    rows = dict(q(s.store, "SELECT design, count(*) FILTER (status = 'ok') FROM results WHERE run_id = ? GROUP BY 1",
                  [s.run_id]))
    assert rows == {"react": 6, "react-sc[k=2]": 6, "planner-searchers": 6, "hop-chain": 6}
    tools = dict(q(s.store, "SELECT design, count(*) FROM tool_calls WHERE run_id = ? AND purpose = 'design' "
                            "GROUP BY 1", [s.run_id]))
    assert set(tools) == set(rows) and min(tools.values()) >= 6  # every design searched on every task
    pool = q(s.store, "SELECT count(*) FROM tool_calls WHERE run_id = ? AND purpose = 'pool'", [s.run_id])[0][0]
    assert pool >= 6 * 2  # the reference pool is ReAct runs: they search too
    recall = dict(q(s.store, "SELECT design, recall FROM retrieval_recall WHERE run_id = ? AND axis_value = 2",
                    [s.run_id]))
    assert set(recall) == set(rows) and all(r > 0.9 for r in recall.values())  # perfect retrieval competence
    acc = dict(q(s.store, "SELECT design, avg(correct::int) FROM results WHERE run_id = ? GROUP BY 1", [s.run_id]))
    assert acc["react"] >= 0.8 and acc["hop-chain"] >= 0.8


@pytest.mark.slow
async def test_the_single_agents_context_binds_as_hops_grow_and_the_chain_does_not_forget(tmp_path):
    # 400 prompt tokens hold about one observation: at 5 hops the single agent keeps forgetting
    designs = "[{design: react, params: {context: 400}, label: small}, {design: react, label: big}, " \
              "{design: hop-chain, params: {context: 400, rounds: 5, steps: 3}, label: chain}]"
    s = await run_suite(RunOptions(suite=str(_suite(tmp_path, "ctx", designs, hops="[5]", n=8, context=400))))
    acc = dict(q(s.store, "SELECT design, avg(correct::int) FROM results WHERE run_id = ? GROUP BY 1", [s.run_id]))
    assert acc["big"] >= 0.75 and acc["small"] <= acc["big"] - 0.5
    assert acc["chain"] >= acc["small"] + 0.5
    rounds = q(s.store, "SELECT task_id, count(*) FROM nodes WHERE run_id = ? AND design = 'chain' "
                        "AND node = 'chain.hop' GROUP BY 1", [s.run_id])
    assert rounds and all(n <= 5 for _, n in rounds) and any(n < 5 for _, n in rounds)  # DONE ends a chain
