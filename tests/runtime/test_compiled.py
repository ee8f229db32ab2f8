"""The schedulers (:data:`masbench.runtime.types.SCHEDULERS`) against each other: every bundled
design (baselines/ and orchestrators/) runs on the same tasks under every scheduler that can take
it — its node directly, the straight-line chain, langgraph — on sim models that fail, disagree and
loop, with and without a budget; the call rows, node rows and results must be the same (all but
wall-clock columns and call ids), in the same order. The scheduler is an argument of the run
(:attr:`RunContext.scheduler`), so sub-designs follow it too."""

from __future__ import annotations

import json

import pytest

from masbench.bench.types import TaskInstance
from masbench.library import Library
from masbench.llm import Gateway
from masbench.llm.health import BreakerConfig
from masbench.runtime import RunContext, compile_design, run_design
from masbench.runtime.cache import clear_cache
from masbench.runtime.types import SCHEDULERS
from masbench.spec import Budget, DesignSpec
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


async def _run(name: str, model: ModelSpec, budget: Budget | None, scheduler: str) -> list:
    clear_cache()
    out: list = []
    gw = Gateway({"default": model}, sink=lambda r: out.append(("call", _cols(r.as_dict()))), retry_base_s=0.0,
                 retry_max_s=0.0, breaker=BreakerConfig(threshold=10**9, cooldown_s=0.0, max_cooldown_s=0.0))
    for seed in (0, 1):
        for t in TASKS:
            ctx = RunContext(gateway=gw, library=LIB, budget=budget, node_sink=lambda r: out.append(
                ("row", type(r).__name__, _cols(r.as_dict()))), seed=seed, tie="random", scheduler=scheduler,
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
    clear_cache()


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("name", BUNDLED)
async def test_bundled_design_same_rows_under_every_scheduler(name: str, model: str) -> None:
    spec, budget = MODELS[model]
    schedulers = compile_design(name, LIB).schedulers
    assert schedulers[-1] == "graph"
    via_graph = await _run(name, spec, budget, "graph")
    assert any(x[0] == "row" for x in via_graph)  # (a budget may refuse every call of a long design)
    for scheduler in schedulers[:-1]:
        other = await _run(name, spec, budget, scheduler)
        assert len(other) == len(via_graph), scheduler
        for a, b in zip(via_graph, other):
            assert a == b, scheduler


def test_which_schedulers_take_the_bundled_designs() -> None:
    """The equivalence above is only worth something if the simpler schedulers are what runs:
    every bundled design but those with parallel nodes (reflexion, mixture-of-agents) is
    straight-line, and the one-node ones run their node directly."""
    takes = {n: compile_design(n, LIB).schedulers for n in BUNDLED}
    assert {n for n, s in takes.items() if "chain" not in s} == {"reflexion", "mixture-of-agents"}
    assert {n for n, s in takes.items() if "direct" in s} == {"cot", "cot-tiny", "masbench-cot"}
    assert all(s[-1] == "graph" for s in takes.values())
    assert len(BUNDLED) >= 20


def _one_node() -> DesignSpec:
    return DesignSpec.model_validate({"name": "one", "nodes": {"s": {"agent": "cot-solver"}}, "output": "s"})


def test_a_scheduler_that_cannot_take_a_design_gives_way_to_a_more_general_one() -> None:
    one = compile_design(_one_node(), LIB)
    assert one.schedulers == SCHEDULERS
    assert [one._pick[s] for s in (None, *SCHEDULERS)] == ["direct", "direct", "chain", "graph"]
    moa = compile_design("mixture-of-agents", LIB)
    assert moa.schedulers == ("graph",)
    assert {moa._pick[s] for s in (None, *SCHEDULERS)} == {"graph"}


async def test_an_unknown_scheduler_is_refused_by_name() -> None:
    gw = Gateway({"default": ModelSpec(id="sim/medium")})
    with pytest.raises(ValueError, match="unknown scheduler 'fast' \\(known: direct, chain, graph\\)"):
        await run_design(_one_node(), TASKS[0], RunContext(gateway=gw, library=LIB, scheduler="fast"))
