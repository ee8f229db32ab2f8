"""Failure isolation: one failed branch never loses its siblings' work. Each node catches and
records its own errors; the design degrades (e.g. votes over the answers that did arrive) and the
result says so."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

from masbench.bench.types import TaskInstance
from masbench.library import Library
from masbench.llm import Gateway
from masbench.llm.health import BreakerConfig
from masbench.llm.scripted import ScriptedGateway
from masbench.runtime import PYTHON_FUNCS, RunContext, python_func, run_design
from masbench.spec import DesignSpec
from masbench.spec.model import ModelSpec, SimFaults, SimProfile, TokenDist

LIB = Library()
TASK = TaskInstance(id="t", source="unit", question="What is 20 + 22?", answers=["42"])


def answer_script(fail_index: int | None = None, exc: BaseException | None = None, by_node: dict | None = None):
    def script(info: dict[str, Any]) -> str:
        if fail_index is not None and info["sample_index"] == fail_index:
            raise exc or ValueError("injected failure")
        if by_node and info["node"] in by_node:
            r = by_node[info["node"]]
            if isinstance(r, BaseException):
                raise r
            return r
        return f"Reasoning about sample {info['sample_index']}.\nAnswer: {40 + info['sample_index'] % 3}"
    return script


async def test_one_failed_branch_keeps_the_other_seven() -> None:
    calls: list[dict] = []
    rows: list[dict] = []
    gw = ScriptedGateway(answer_script(fail_index=3), sink=lambda r: calls.append(r.as_dict()))
    ctx = RunContext(gateway=gw, library=LIB, node_sink=rows.append, tags={"run_id": "r", "task_id": "t"})
    r = await run_design("cot-sc", TASK, ctx, {"k": 8})
    assert r.status == "degraded"
    assert r.detail["branches"]["sample"] == ["ok", "ok", "ok", "error", "ok", "ok", "ok", "ok"]
    assert "injected failure" in r.detail["errors"]["sample[3]"]
    vote = r.detail["votes"]["vote"]
    assert vote["voters"] == 7 and vote["missing"] == 1
    # samples 0..7 answer 40,41,42,40,41,42,40,41 → without #3: 40×2, 41×3, 42×2
    assert vote["tally"] == {"40": 2, "41": 3, "42": 2} and r.answers == ["41"]
    sample_rows = [x for x in rows if x["node"] == "sample"]
    assert len(sample_rows) == 8
    assert sorted(x["status"] for x in sample_rows) == ["error"] + ["ok"] * 7
    assert sum(1 for x in sample_rows if x["output"] in ("40", "41", "42")) == 7  # the 7 answers are recorded
    assert len(calls) == 8 and sum(1 for c in calls if c["error"]) == 1  # the failed call is a call row too


async def test_retryable_failures_are_retried_then_recorded() -> None:
    # A sim model whose faulty requests fail on every attempt (permanent): those branches fail after
    # the gateway's retries; every other branch's answer survives.
    m = ModelSpec(id="sim/flaky", max_attempts=3, sim=SimProfile(
        accuracy={"default": 1.0}, completion_tokens=TokenDist(mean=40, sd=5),
        faults=SimFaults(rate=0.35, permanent=True, kinds=["server_error"])))
    calls: list[dict] = []
    # the breaker (which would open after 5 failures in a row and pause 5 s, 10 s, ... — ~2.5 min of
    # real waiting here) is not what this test is about: set out of reach
    gw = Gateway({"default": m}, sink=lambda r: calls.append(r.as_dict()), retry_base_s=0.0001, retry_max_s=0.001,
                 breaker=BreakerConfig(threshold=10_000))
    ctx = RunContext(gateway=gw, library=LIB)
    r = await run_design("cot-sc", TASK, ctx, {"k": 12})
    statuses = r.detail["branches"]["sample"]
    failed = statuses.count("error")
    assert 0 < failed < 12, statuses
    assert r.status == "degraded" and r.answers == ["42"]
    assert r.detail["votes"]["vote"]["voters"] == 12 - failed
    assert all(c["attempts"] == 3 for c in calls if c["error"])


async def test_an_exception_inside_a_node_is_caught() -> None:
    @python_func("explode_on_two")
    def explode_on_two(x: Any) -> Any:
        if str(x).strip().endswith("2"):
            raise RuntimeError("boom")
        return x

    try:
        spec = DesignSpec.model_validate({"name": "py-fan", "params": {"xs": ["1", "2", "3"]}, "nodes": {
            "each": {"python": "explode_on_two", "map": "{xs}"},
            "pick": {"op": "majority", "from": "each"}}, "output": "pick"})
        rows: list[dict] = []
        ctx = RunContext(gateway=ScriptedGateway(answer_script()), library=LIB, node_sink=rows.append)
        r = await run_design(spec, TASK, ctx)
        assert r.detail["branches"]["each"] == ["ok", "error", "ok"]
        assert r.detail["errors"]["each[1]"] == "RuntimeError: boom"
        assert r.status == "degraded" and r.answers == ["1"]  # tie 1 vs 3: the first seen wins
        assert r.detail["votes"]["pick"]["tie"] == ["1", "3"]
    finally:
        PYTHON_FUNCS.remove("explode_on_two")


async def test_gateway_raising_unexpectedly_is_recorded() -> None:
    class Broken(Gateway):
        async def complete(self, model, messages, **kw):
            if kw["tags"]["node"] == "work":
                raise KeyError("surprise")
            return await super().complete(model, messages, **kw)

    gw = Broken({"default": ModelSpec(id="sim/perfect")})
    r = await run_design("planner-workers", TASK, RunContext(gateway=gw, library=LIB))
    assert r.detail["branches"]["work"] == ["error", "error"]
    assert r.detail["nodes"]["synth"] == "ok"  # the synthesizer still ran, on what there was
    assert r.status == "degraded"


async def test_failed_output_node_falls_back_to_best_answer_so_far() -> None:
    gw = ScriptedGateway(answer_script(by_node={"distill": ValueError("distiller down"),
                                                "refine": ValueError("refiner down")}))
    r = await run_design("parallel-distill-refine", TASK, RunContext(gateway=gw, library=LIB))
    assert r.status == "degraded"
    assert r.detail["nodes"]["refine"] == "error" and r.detail["fallback"] == "drafts"
    assert r.answers == ["40"]  # drafts 0..3 → 40, 41, 42, 40


async def test_failing_critic_does_not_stop_the_loop() -> None:
    gw = ScriptedGateway(answer_script(by_node={"refine.critic": ValueError("critic down")}))
    r = await run_design("self-refine", TASK, RunContext(gateway=gw, library=LIB), {"max_rounds": 2})
    assert r.detail["loops"]["refine"]["rounds"] == 2
    assert r.detail["nodes"]["refine.critic"] == "error" and r.detail["nodes"]["refine.revise"] == "ok"
    assert r.status == "degraded" and r.answers[0] in ("40", "41", "42")


async def test_bare_langgraph_fanout_loses_every_branch() -> None:
    """The failure mode the runtime prevents: in a bare langgraph fan-out, one branch that raises
    fails the whole run and the other branches' answers are lost."""
    from langgraph.graph import START, StateGraph
    from langgraph.types import Send

    class S(TypedDict):
        out: Annotated[list, operator.add]

    async def branch(i: int) -> dict:
        if i == 3:
            raise RuntimeError("one branch failed")
        return {"out": [i]}

    g = StateGraph(S)
    g.add_node("b", branch)
    g.add_conditional_edges(START, lambda s: [Send("b", i) for i in range(8)], ["b"])
    with pytest.raises(RuntimeError):
        await g.compile().ainvoke({"out": []})


async def test_a_failed_round_keeps_the_previous_rounds_value() -> None:
    def script(info: dict[str, Any]) -> str:
        if info["node"] == "refine.critic":
            return '{"correct": false, "feedback": "try again"}'
        if info["node"] == "refine.revise" and info["sample_index"] >= 20014:  # round 2 onwards
            raise ValueError("reviser down")
        return f"Answer: {info['sample_index']}"
    gw = ScriptedGateway(script)
    r = await run_design("self-refine", TASK, RunContext(gateway=gw, library=LIB), {"max_rounds": 3})
    assert r.detail["loops"]["refine"]["rounds"] == 3
    assert r.answers == ["10007"]  # round 1's revision survives the failed rounds 2 and 3
    assert r.status == "degraded" and "refine.revise" in r.detail["errors"]
