"""The straight-line runner (:mod:`masbench.runtime.chain`) against langgraph: every bundled design
(baselines/ and orchestrators/) runs on the same tasks through both, on sim models that fail,
disagree and loop, with and without a budget; the call rows, node rows and results must be the same
(all but wall-clock columns and call ids), in the same order."""

from __future__ import annotations

import json

import pytest

from masbench.bench.types import TaskInstance
from masbench.library import Library
from masbench.llm import Gateway
from masbench.llm.health import BreakerConfig
from masbench.runtime import RunContext, chain, compile_design, run_design
from masbench.runtime.cache import clear_cache
from masbench.runtime.chain import chain_of, straight
from masbench.spec import Budget
from masbench.spec.model import ModelSpec, SimFaults, SimProfile, TokenDist

CLOCK = {"call_id", "ts", "t_start", "t_end", "latency_s"}
LIB = Library()
BUNDLED = [n for n in LIB.names("design") if LIB.get("design", n).path.parent.name in ("baselines", "orchestrators")]
TASKS = [TaskInstance(id=f"t{i}", source="unit", question=f"Tom has {i} apples and buys {i + 4} more. How many?",
                      answers=[str(2 * i + 4)], skills=["arith.add"]) for i in range(4)]
MODELS = {  # name → (model, per-task budget)
    "disagreeing": (ModelSpec(id="sim/eq", sim=SimProfile(accuracy={"default": 0.45}, seed=1,
                                                         completion_tokens=TokenDist(mean=80, sd=30))), None),
    # a fifth of the requests fail for good (failed nodes, degraded runs, fallbacks), under a budget
    # that runs out in the longer designs (refused calls, budget_exhausted)
    "faulty-budget": (ModelSpec(id="sim/eqf", sim=SimProfile(accuracy={"default": 0.7}, seed=2,
                                                             faults=SimFaults(rate=0.2, kinds=["server_error"],
                                                                              permanent=True))),
                      Budget(per_task_tokens=700)),
}


async def _run(name: str, model: ModelSpec, budget: Budget | None, use_chain: bool) -> list:
    chain.ENABLED = use_chain
    clear_cache()
    out: list = []
    gw = Gateway({"default": model}, sink=lambda r: out.append(("call", _cols(r.as_dict()))), retry_base_s=0.0,
                 retry_max_s=0.0, breaker=BreakerConfig(threshold=10**9, cooldown_s=0.0, max_cooldown_s=0.0))
    for seed in (0, 1):
        for t in TASKS:
            ctx = RunContext(gateway=gw, library=LIB, budget=budget, node_sink=lambda r: out.append(
                ("row", type(r).__name__, _cols(r.as_dict()))), seed=seed, tie="random",
                tags={"run_id": "r", "design": name, "task_id": t.id, "seed": seed, "purpose": "design"})
            r = await run_design(name, t, ctx)
            out.append(("result", r.text, r.answers, r.status, r.prompt_tokens, r.completion_tokens, r.tokens,
                        r.cost_usd, r.calls, r.error, json.dumps(r.detail, default=str)))
    return out


def _cols(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in CLOCK}


@pytest.fixture(autouse=True)
def _restore():
    yield
    chain.ENABLED = True
    clear_cache()


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("name", BUNDLED)
async def test_bundled_design_same_rows_through_chain_and_graph(name: str, model: str) -> None:
    spec, budget = MODELS[model]
    via_graph = await _run(name, spec, budget, use_chain=False)
    via_chain = await _run(name, spec, budget, use_chain=True)
    assert any(x[0] == "row" for x in via_graph)  # (a budget may refuse every call of a long design)
    assert len(via_chain) == len(via_graph)
    for a, b in zip(via_graph, via_chain):
        assert a == b


def test_the_bundled_designs_mostly_take_the_chain() -> None:
    """The equivalence above is only worth something if the chain is what runs: every bundled
    design but those with parallel nodes (reflexion, mixture-of-agents) is straight-line."""
    graph_only = {n for n in BUNDLED if compile_design(n, LIB).chain is None}
    assert graph_only == {"reflexion", "mixture-of-agents"}
    assert len(BUNDLED) >= 20


class _I:
    def __init__(self, name: str, deps: set[str]):
        self.name, self.deps = name, deps


def test_straight_orders_by_depth_and_rejects_two_nodes_at_one_depth() -> None:
    # a → b → c, with c also reading a: one node per depth, depth order
    got = straight([_I("c", {"a", "b"}), _I("a", set()), _I("b", {"a"})])  # type: ignore[list-item]
    assert got is not None and [i.name for i in got] == ["a", "b", "c"]
    # a → b, a → c: b and c share depth 1 (they run in parallel in the graph)
    assert straight([_I("a", set()), _I("b", {"a"}), _I("c", {"a"})]) is None  # type: ignore[list-item]
    # two roots
    assert straight([_I("a", set()), _I("b", set())]) is None  # type: ignore[list-item]
    # a dependency outside the group (a loop body reading a top-level node) is ignored
    got = straight([_I("x", {"top"}), _I("y", {"x", "top"})])  # type: ignore[list-item]
    assert got is not None and [i.name for i in got] == ["x", "y"]


def test_a_design_writing_a_channel_runs_on_the_graph() -> None:
    from masbench.runtime.design_analysis import Analysis
    from masbench.runtime.plan import Plan
    from masbench.spec import DesignSpec

    d = DesignSpec.model_validate({
        "name": "chan", "agents": {"a": {"name": "a", "model": "default", "prompt": "{question}"}},
        "nodes": {"x": {"agent": "a", "into": "pool"}, "v": {"op": "majority", "from": "pool"}}, "output": "v"})
    an = Analysis(d, None, LIB, None)
    assert an.problems == []
    plans = {i.key: Plan(i) for i in an.top.values()}
    assert chain_of(an, plans) is None
