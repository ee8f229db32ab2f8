"""A backend for a made-up provider, registered from this module through the public BACKENDS
registry (no file of masbench edited), answers its own model while a ``sim/`` model in the same
gateway and the same suite still goes to the simulator: results, calls and nodes rows are right,
and the toy provider is priced by the model's YAML (it declares no prices of its own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pytest

from masbench.harness import RunOptions, run_suite
from masbench.llm import BACKENDS, FREE, Attempt, Gateway, ModelBackend, Prices, Reply, is_simulated, require_prices
from masbench.spec import ModelSpec
from masbench.spec.problems import SpecError

TOY_REPLY = "I am the toy. Answer: 42"
IN_PER_M, OUT_PER_M = 3.0, 7.0


class ToyBackend(ModelBackend):
    """The ``toy`` provider: always the same reply, 11 prompt + 5 completion tokens, not simulated."""

    seen: ClassVar[list[dict[str, Any]]] = []

    async def __call__(self, a: Attempt) -> Reply:
        ToyBackend.seen.append({"model": a.spec.id, "node": a.tags.get("node"), "max_tokens": a.req.get("max_tokens")})
        return Reply(TOY_REPLY, 11, 5, finish_reason="stop")


class FreeToyBackend(ToyBackend):
    """The ``freetoy`` provider: like ``toy`` but free by declaration (no YAML price needed)."""

    @classmethod
    def default_prices(cls, spec: ModelSpec) -> Prices | None:
        return FREE


@pytest.fixture
def toy():
    BACKENDS.register("toy", ToyBackend)
    BACKENDS.register("freetoy", FreeToyBackend)
    ToyBackend.seen.clear()
    yield ToyBackend
    BACKENDS.remove("toy")
    BACKENDS.remove("freetoy")


async def test_toy_provider_and_sim_in_one_gateway(toy):
    rows: list[dict[str, Any]] = []
    gw = Gateway({"toy": ModelSpec(id="toy/echo-1", input_usd_per_mtok=IN_PER_M, output_usd_per_mtok=OUT_PER_M),
                  "sim": ModelSpec(id="sim/perfect")}, sink=lambda r: rows.append(r.as_dict()))
    msgs = [{"role": "user", "content": "What is 40 + 2?"}]
    a = await gw.complete("toy", msgs, max_tokens=16, metadata={"sim": {"gold": ["42"]}})
    b = await gw.complete("sim", msgs, max_tokens=16, metadata={"sim": {"gold": ["42"]}})
    assert a.text == TOY_REPLY and not a.simulated and (a.prompt_tokens, a.completion_tokens) == (11, 5)
    assert a.cost_usd == pytest.approx((11 * IN_PER_M + 5 * OUT_PER_M) / 1e6) and a.cost_source == "yaml"
    assert b.simulated and b.text != TOY_REPLY and b.cost_usd == 0.0 and b.cost_source == "zero-declared"
    assert len(toy.seen) == 1  # the sim call never reached the toy
    assert [(r["model"], r["simulated"]) for r in rows] == [("toy/echo-1", False), ("sim/perfect", True)]
    assert not is_simulated(gw.models["toy"]) and is_simulated(gw.models["sim"])
    # the toy's prompt bound is the base class's (bytes), the simulator's its own exact count
    assert gw.prompt_token_bound("toy", msgs) == len(msgs[0]["content"].encode()) + 8
    assert gw.prompt_token_bound("sim", msgs) == b.prompt_tokens


def test_a_backend_without_prices_needs_the_yaml_to_price_its_model(toy):
    with pytest.raises(SpecError, match="no price known for model 'toy'"):
        require_prices({"toy": ModelSpec(id="toy/echo-1")})
    got = require_prices({"toy": ModelSpec(id="toy/echo-1", price=0), "free": ModelSpec(id="freetoy/x")})
    assert got["toy"].source == "zero-declared" and got["free"] is FREE


def test_an_unregistered_provider_still_goes_to_litellm():
    assert "toy" not in BACKENDS
    assert type(Gateway().provider(ModelSpec(id="toy/echo-1"))).__name__ == "LitellmClient"


SUITE = """name: mixed
models:
  default: sim/p60
  toy: {{id: toy/echo-1, input_usd_per_mtok: {inp}, output_usd_per_mtok: {out}}}
tasks:
  - {{generator: masbench.depth, values: [1], n: 3, seed: 3}}
designs: [cot, toyonly]
cot_sc: {{k_max: 2, bootstrap: 50}}
budget: {{per_task_tokens: 20000}}
cache: false
store: {store}
"""


@pytest.mark.slow
async def test_a_suite_mixes_the_toy_provider_with_a_sim_model(tmp_path: Path, toy):
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "toy-solver.yaml").write_text(
        "name: toy-solver\nmodel: toy\nprompt: |\n  {question}\n  End with \"Answer: <final answer>\".\n"
        "max_tokens: 64\n")
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines" / "toyonly.yaml").write_text(
        "name: toyonly\nkind: baseline\nnodes:\n  solve: {agent: toy-solver}\noutput: solve\n")
    (tmp_path / "tasks").mkdir()
    suite = tmp_path / "tasks" / "mixed.yaml"
    suite.write_text(SUITE.format(inp=IN_PER_M, out=OUT_PER_M, store=tmp_path / "runs" / "mixed.duckdb"))
    s = await run_suite(RunOptions(suite=str(suite), lib=[tmp_path]))
    assert s.failed == 0
    con = duckdb.connect(str(s.store), read_only=True)
    q = lambda sql: con.execute(sql, [s.run_id]).fetchall()  # noqa: E731
    results = q("SELECT design, answer, tokens, calls, cost_usd, status FROM results WHERE run_id = ? ORDER BY 1, 2")
    calls = q("SELECT design, purpose, model, simulated, prompt_tokens, completion_tokens, cost_usd, cost_source "
              "FROM calls WHERE run_id = ?")
    nodes = q("SELECT design, node, model, calls, tokens, cost_usd FROM nodes WHERE run_id = ?")
    con.close()
    toy_cost = (11 * IN_PER_M + 5 * OUT_PER_M) / 1e6
    toy_results = [r for r in results if r[0] == "toyonly"]
    assert len(toy_results) == 3 and len(toy.seen) == 3
    assert all(r[1] == "42" and r[2] == 16 and r[3] == 1 and r[4] == pytest.approx(toy_cost) and r[5] == "ok"
               for r in toy_results)
    toy_calls = [c for c in calls if c[2] == "toy/echo-1"]
    assert len(toy_calls) == 3 and all(c[0] == "toyonly" and c[1] == "design" and c[3] is False for c in toy_calls)
    assert all((c[4], c[5], c[7]) == (11, 5, "yaml") and c[6] == pytest.approx(toy_cost) for c in toy_calls)
    sim_calls = [c for c in calls if c[2] != "toy/echo-1"]
    assert sim_calls and all(c[2] == "sim/p60" and c[3] is True and c[6] == 0.0 for c in sim_calls)
    assert {c[1] for c in sim_calls} == {"design", "pool"} and all(c[0] != "toyonly" for c in sim_calls)
    toy_nodes = [n for n in nodes if n[0] == "toyonly"]
    assert len(toy_nodes) == 3 and all(n[1] == "solve" and n[2] == "toy/echo-1" and (n[3], n[4]) == (1, 16)
                                       and n[5] == pytest.approx(toy_cost) for n in toy_nodes)
    assert all(n[2] == "sim/p60" for n in nodes if n[0] == "cot")
    assert [t["max_tokens"] for t in toy.seen] == [64, 64, 64]
