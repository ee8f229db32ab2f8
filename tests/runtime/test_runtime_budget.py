"""Budgets are enforced per task: a call that could exceed what is left (counting its max_tokens)
is not made; the design returns its best answer so far, marked budget_exhausted."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from masbench.bench.types import TaskInstance
from masbench.library import Library
from masbench.llm import Gateway
from masbench.llm.scripted import ScriptedGateway
from masbench.runtime import RunContext, run_design
from masbench.spec import Budget, DesignSpec
from masbench.spec.model import ModelSpec, SimFaults, SimProfile, TokenDist

LIB = Library()
TASK = TaskInstance(id="t", source="unit", question="What is 12 + 30?", answers=["42"])


def model(acc: float = 0.7, mean: float = 80, sd: float = 20, faults: float = 0.0, latency_ms: float = 0.0) -> ModelSpec:
    return ModelSpec(id="sim/budget", input_usd_per_mtok=3.0, output_usd_per_mtok=15.0,
                     sim=SimProfile(accuracy={"default": acc}, completion_tokens=TokenDist(mean=mean, sd=sd),
                                    faults=SimFaults(rate=faults, permanent=False), latency_ms=latency_ms))


def ctx_for(budget: Budget | None, m: ModelSpec | None = None, seed: int = 0):
    calls: list[dict] = []
    rows: list[dict] = []
    gw = Gateway({"default": m or model()}, sink=lambda r: calls.append(r.as_dict()), retry_base_s=0.0001,
                 retry_max_s=0.001)
    return RunContext(gateway=gw, library=LIB, budget=budget, node_sink=rows.append, seed=seed), calls, rows


async def test_parallel_branches_reserve_before_calling() -> None:
    # One sample reserves prompt (~39 tokens) + max_tokens 320. With latency every branch is in
    # flight at once, so reservations — not actual usage — decide: 1200 tokens fit 3 of them.
    ctx, calls, rows = ctx_for(Budget(per_task_tokens=1200), model(latency_ms=2.0))
    r = await run_design("cot-sc", TASK, ctx, {"k": 5})
    assert r.status == "budget_exhausted"
    assert r.calls == len(calls) == 3
    assert r.tokens <= 1200
    assert r.answers[0] != ""  # the vote ran over the samples that arrived
    assert r.detail["votes"]["vote"]["voters"] == r.calls
    refused = [x for x in rows if x["status"] == "budget_exhausted"]
    assert len(refused) == 5 - r.calls and all(x["calls"] == 0 for x in refused)
    assert r.detail["budget"]["exhausted"] is True


async def test_sequential_calls_settle_actual_usage() -> None:
    # Without latency each branch finishes before the next starts: actual usage (~130 tokens) is
    # settled and the unused reservation released, so all 5 samples fit in the same 1200 tokens.
    ctx, calls, _ = ctx_for(Budget(per_task_tokens=1200))
    r = await run_design("cot-sc", TASK, ctx, {"k": 5})
    assert r.status == "ok" and r.calls == 5 and r.tokens <= 1200


async def test_call_cap() -> None:
    ctx, calls, _ = ctx_for(Budget(per_task_calls=2))
    r = await run_design("cot-sc", TASK, ctx, {"k": 5})
    assert r.calls == 2 == len(calls) and r.status == "budget_exhausted"


async def test_usd_cap() -> None:
    ctx, calls, _ = ctx_for(Budget(per_task_usd=0.012))
    r = await run_design("debate", TASK, ctx)
    assert r.cost_usd <= 0.012 and r.status == "budget_exhausted"
    assert abs(r.cost_usd - sum(c["cost_usd"] for c in calls)) < 1e-12


def _never_approves(info: dict) -> str:
    # the draft is wrong, the critic never approves, the reviser fixes it
    node = info["node"]
    if node.endswith("critic"):
        return '{"correct": false, "feedback": "recheck the sum"}'
    if node.endswith("revise"):
        return "Recomputed: 12 + 30 = 42. Answer: 42"
    return "12 + 30 = 41. Answer: 41"


async def test_loop_stops_on_budget_with_best_answer_so_far() -> None:
    # A critic that never approves, so only the budget can stop the loop before max_rounds (5).
    # 3 calls: draft, round-1 critic + revise; round 2's critic is refused -> the loop stops on the
    # budget after 2 rounds and returns round 1's revision (the best answer so far).
    gw = ScriptedGateway(_never_approves)
    r = await run_design("self-refine", TASK, RunContext(gateway=gw, library=LIB, budget=Budget(per_task_calls=3)))
    assert r.status == "budget_exhausted" and r.calls == 3
    assert r.detail["loops"]["refine"] == {"rounds": 2, "max_rounds": 5, "stopped": "budget"}
    assert r.answers == ["42"]
    assert [q["node"] for q in gw.requests] == ["draft", "refine.critic", "refine.revise"]


async def test_loop_refused_revision_keeps_the_draft() -> None:
    # 2 calls: the draft and round 1's critic; the revision is refused, so the draft's (wrong)
    # answer is the best so far and the loop records one round stopped by the budget.
    gw = ScriptedGateway(_never_approves)
    r = await run_design("self-refine", TASK, RunContext(gateway=gw, library=LIB, budget=Budget(per_task_calls=2)))
    assert r.status == "budget_exhausted" and r.calls == 2
    assert r.detail["loops"]["refine"] == {"rounds": 1, "max_rounds": 5, "stopped": "budget"}
    assert r.answers == ["41"]


async def test_loop_token_budget_binds_before_max_rounds() -> None:
    # The same never-approving critic under a token cap of half what the unbudgeted run spends:
    # fewer calls than max_rounds allows, none over the cap, and the loop says the budget stopped it.
    free = await run_design("self-refine", TASK, RunContext(gateway=ScriptedGateway(_never_approves), library=LIB))
    assert free.calls == 11 and free.detail["loops"]["refine"]["stopped"] == "max_rounds"
    cap = free.tokens // 2
    gw = ScriptedGateway(_never_approves)
    r = await run_design("self-refine", TASK, RunContext(gateway=gw, library=LIB, budget=Budget(per_task_tokens=cap)))
    assert r.status == "budget_exhausted" and 1 < r.calls < 11 and r.tokens <= cap
    loop = r.detail["loops"]["refine"]
    assert loop["stopped"] == "budget" and 1 <= loop["rounds"] < 5


async def test_output_refused_falls_back_to_upstream_answer() -> None:
    # planner-workers: plan + 2 workers fit; the synthesizer does not → answer from the workers' vote
    # the workers agree on 17 (not the gold), so the answer can only come from their vote
    def script(info: dict) -> str:
        if info["node"] == "plan":
            return '{"subtasks": ["add 12 and 30", "check the sum"]}'
        return "Worked it out. Answer: 17" if info["node"] == "work" else "Answer: 99"
    gw = ScriptedGateway(script)
    r = await run_design("planner-workers", TASK, RunContext(gateway=gw, library=LIB, budget=Budget(per_task_calls=3)))
    assert r.status == "budget_exhausted" and r.calls == 3
    assert r.detail["fallback"] == "work" and r.answers == ["17"]
    assert [q["node"] for q in gw.requests] == ["plan", "work", "work"]  # the synthesizer never ran


async def test_nothing_fits() -> None:
    ctx, calls, rows = ctx_for(Budget(per_task_tokens=10))
    r = await run_design("cot", TASK, ctx)
    assert r.status == "budget_exhausted" and r.calls == 0 and calls == [] and r.answers == [""]
    assert rows[0]["status"] == "budget_exhausted"


async def test_subdesign_shares_the_budget() -> None:
    spec = DesignSpec.model_validate({"name": "orch", "nodes": {
        "a": {"design": "cot-sc", "params": {"k": 4}}, "b": {"design": "cot-sc", "params": {"k": 4}},
        "v": {"op": "majority", "from": ["a", "b"]}}, "output": "v"})
    ctx, calls, rows = ctx_for(Budget(per_task_calls=6))
    r = await run_design(spec, TASK, ctx)
    assert r.calls == 6 == len(calls) and r.status == "budget_exhausted"
    assert {x["node"] for x in rows} >= {"a/sample", "b/sample", "a", "b", "v"}


# ----- property: no task ever spends more than its budget ---------------------------------------

AGENT = {"model": "default", "prompt": "{question}\n{inputs}\nEnd with \"Answer: <x>\"."}


@st.composite
def designs(draw):
    nodes: dict = {}
    agents: dict = {}
    prev: str | None = None
    n_parts = draw(st.integers(1, 4))
    for i in range(n_parts):
        kind = draw(st.sampled_from(["agent", "fan", "loop", "map", "select", "python"]))
        mt = draw(st.integers(8, 300))
        agents[f"a{i}"] = {**AGENT, "max_tokens": mt}
        frm = [prev] if prev else ["question"]
        if kind == "agent":
            nodes[f"n{i}"] = {"agent": f"a{i}", "from": frm}
        elif kind == "fan":
            nodes[f"s{i}"] = {"agent": f"a{i}", "repeat": draw(st.integers(1, 6)), "from": frm}
            nodes[f"n{i}"] = {"op": "majority", "from": [f"s{i}"]}
        elif kind == "select":
            nodes[f"s{i}"] = {"agent": f"a{i}", "repeat": draw(st.integers(1, 4)), "from": frm}
            nodes[f"n{i}"] = {"select": "selector", "from": [f"s{i}"]}
        elif kind == "python":
            nodes[f"s{i}"] = {"agent": f"a{i}", "repeat": draw(st.integers(1, 3)), "from": frm}
            nodes[f"n{i}"] = {"python": "majority", "from": [f"s{i}"]}
        elif kind == "map":
            nodes[f"p{i}"] = {"agent": "planner", "from": frm, "max_tokens": draw(st.integers(40, 256))}
            nodes[f"w{i}"] = {"agent": f"a{i}", "map": f"p{i}.subtasks"}
            nodes[f"n{i}"] = {"agent": "synthesizer", "from": [f"w{i}"]}
        else:
            init = prev
            if init is None:
                nodes[f"d{i}"] = {"agent": f"a{i}"}
                init = f"d{i}"
            nodes[f"n{i}"] = {"loop": {"init": init, "max_rounds": draw(st.integers(1, 3)), "until": "critic.correct",
                                       "nodes": {"critic": {"agent": "critic", "from": [f"n{i}"]},
                                                 "revise": {"agent": "refiner", "from": [f"n{i}", "critic"],
                                                            "max_tokens": mt}},
                                       "output": "revise"}}
        prev = f"n{i}"
    return DesignSpec.model_validate({"name": f"rand-{abs(hash(str(nodes))) % 10**8}", "agents": agents,
                                      "nodes": nodes, "output": prev})


budgets = st.builds(
    Budget,
    per_task_tokens=st.one_of(st.none(), st.integers(1, 5000)),
    per_task_usd=st.one_of(st.none(), st.floats(1e-5, 0.05)),
    per_task_calls=st.one_of(st.none(), st.integers(1, 15)),
)


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(design=designs(), budget=budgets, acc=st.sampled_from([0.0, 0.5, 1.0]),
       mean=st.integers(10, 300), faults=st.sampled_from([0.0, 0.2]), seed=st.integers(0, 3))
def test_no_task_ever_spends_more_than_its_budget(design, budget, acc, mean, faults, seed) -> None:
    async def go():
        ctx, calls, rows = ctx_for(budget, model(acc, mean, mean / 4, faults), seed)
        r = await run_design(design, TASK, ctx)
        return r, calls, rows

    r, calls, rows = asyncio.run(go())
    spent_tokens = sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls)
    spent_usd = sum(c["cost_usd"] for c in calls)
    # the result accounts for every call row
    assert (r.tokens, r.calls) == (spent_tokens, len(calls))
    assert abs(r.cost_usd - spent_usd) < 1e-12
    assert sum(x["calls"] for x in rows) == len(calls)
    if budget.per_task_tokens is not None:
        assert spent_tokens <= budget.per_task_tokens
    if budget.per_task_calls is not None:
        assert len(calls) <= budget.per_task_calls
    if budget.per_task_usd is not None:
        assert spent_usd <= budget.per_task_usd + 1e-12
    assert r.status in ("ok", "degraded", "budget_exhausted", "failed")
    event(r.status)
    if r.status != "budget_exhausted":
        assert not any(x["status"] == "budget_exhausted" for x in rows)
