"""The loop controller and the node steps (runtime/steps.py) on scripted gateways: rounds, calls
and answers counted by hand from each script (issue 29)."""

from __future__ import annotations

from typing import Any

from masbench.bench.types import TaskInstance
from masbench.library import Library
from masbench.llm.scripted import ScriptedGateway
from masbench.runtime import RunContext, run_design
from masbench.spec import DesignSpec

LIB = Library()
TASK = TaskInstance(id="t", source="unit", question="What is 20 + 22?", answers=["42"])


def spec(nodes: dict, output: str, name: str = "steps") -> DesignSpec:
    return DesignSpec.model_validate({"name": name, "nodes": nodes, "output": output})


def counting(first: int = 1):
    """A script answering 1, 2, 3, … in call order (the draft is 1)."""
    n = [first - 1]

    def script(info: dict[str, Any]) -> str:
        n[0] += 1
        return f"Step {n[0]}.\nAnswer: {n[0]}"
    return script


def _redo_loop(max_rounds: int, **loop) -> DesignSpec:
    return spec({"draft": {"agent": "cot-solver"},
                 "fix": {"loop": {"init": "draft", "max_rounds": max_rounds, **loop,
                                  "nodes": {"redo": {"agent": "refiner", "from": ["fix"]}}, "output": "redo"}}}, "fix")


async def test_a_loop_runs_exactly_max_rounds() -> None:
    for rounds in (1, 2, 3):
        gw = ScriptedGateway(counting())
        r = await run_design(_redo_loop(rounds), TASK, RunContext(gateway=gw, library=LIB))
        # the draft answers 1, round i's redo answers i + 1
        assert [q["node"] for q in gw.requests] == ["draft"] + ["fix.redo"] * rounds
        assert r.detail["loops"]["fix"] == {"rounds": rounds, "max_rounds": rounds, "stopped": "max_rounds"}
        assert r.answers == [str(rounds + 1)] and r.calls == rounds + 1 and r.status == "ok"


async def test_each_round_reads_the_previous_rounds_value() -> None:
    gw = ScriptedGateway(counting())
    await run_design(_redo_loop(3), TASK, RunContext(gateway=gw, library=LIB))
    redo = [q["messages"][-1]["content"] for q in gw.requests if q["node"] == "fix.redo"]
    # round 1 revises the draft (answer 1), round 2 round 1's (answer 2), round 3 round 2's (answer 3)
    for i, prompt in enumerate(redo, start=1):
        assert f"Answer: {i}" in prompt and f"Answer: {i + 1}" not in prompt, (i, prompt)


async def test_converged_stops_when_a_round_repeats_the_previous_answer() -> None:
    answers = iter(["Answer: 5", "Answer: 6", "Answer: 7", "Answer: 7", "Answer: 8"])
    gw = ScriptedGateway(lambda i: next(answers))
    r = await run_design(_redo_loop(6, until="converged"), TASK, RunContext(gateway=gw, library=LIB))
    # draft 5; round 1 → 6 (≠ 5), round 2 → 7 (≠ 6), round 3 → 7 (= 7): stop after 3 rounds
    assert r.detail["loops"]["fix"] == {"rounds": 3, "max_rounds": 6, "stopped": "converged"}
    assert r.answers == ["7"] and r.calls == 4


async def test_converged_compares_with_the_draft_too() -> None:
    answers = iter(["Answer: 5", "Answer: 5", "Answer: 9"])
    gw = ScriptedGateway(lambda i: next(answers))
    r = await run_design(_redo_loop(4, until="converged"), TASK, RunContext(gateway=gw, library=LIB))
    assert r.detail["loops"]["fix"] == {"rounds": 1, "max_rounds": 4, "stopped": "converged"}
    assert r.answers == ["5"] and r.calls == 2


async def test_a_fanned_out_until_is_judged_once_all_its_branches_are_in() -> None:
    d = spec({"draft": {"agent": "cot-solver"},
              "fix": {"loop": {"init": "draft", "max_rounds": 4, "until": "check contains APPROVED",
                               "nodes": {"check": {"agent": "cot-solver", "repeat": 2, "from": ["fix"]},
                                         "redo": {"agent": "refiner", "from": ["fix", "check"]}},
                               "output": "redo"}}}, "fix")
    # round 1: one of the two checks approves (not all: go on); round 2: both approve (stop)
    verdicts = iter(["APPROVED", "no", "APPROVED", "APPROVED"])
    gw = ScriptedGateway(lambda i: next(verdicts) if i["node"] == "fix.check" else "Answer: 42")
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    assert r.detail["loops"]["fix"]["stopped"] == "until" and r.detail["loops"]["fix"]["rounds"] == 2
    assert sum(q["node"] == "fix.check" for q in gw.requests) == 4


async def test_nodes_after_a_met_until_in_the_same_round_do_not_run() -> None:
    d = spec({"draft": {"agent": "cot-solver"},
              "fix": {"loop": {"init": "draft", "max_rounds": 4, "until": "check contains APPROVED",
                               "nodes": {"check": {"agent": "cot-solver", "from": ["fix"]},
                                         "redo": {"agent": "refiner", "from": ["fix", "check"]}},
                               "output": "redo"}}}, "fix")
    # round 1: not approved → redo (answer 2); round 2: approved → redo is skipped, round 1's stays
    verdicts = iter(["rejected", "APPROVED"])
    n = [0]

    def script(i: dict[str, Any]) -> str:
        if i["node"] == "fix.check":
            return next(verdicts)
        n[0] += 1
        return f"Answer: {n[0]}"
    gw = ScriptedGateway(script)
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    assert [q["node"] for q in gw.requests] == ["draft", "fix.check", "fix.redo", "fix.check"]
    assert r.detail["loops"]["fix"] == {"rounds": 2, "max_rounds": 4, "stopped": "until"}
    assert r.answers == ["2"] and r.calls == 4


async def test_a_channel_lists_its_writers_in_declaration_order_and_branches_in_index_order() -> None:
    # a (declared first) fans out twice, b and c are single nodes, c declared before d's repeat of 2:
    # the channel reads a[0], a[1], b, d[0], d[1] whatever order the calls finish in
    d = spec({"a": {"agent": "cot-solver", "repeat": 2, "into": "pool"},
              "b": {"agent": "cot-solver", "into": "pool"},
              "d": {"agent": "cot-solver", "repeat": 2, "into": "pool"},
              "agg": {"agent": "aggregator", "from": ["pool"]}}, "agg")
    d = DesignSpec.model_validate({**d.model_dump(exclude_none=True), "reducers": {"pool": "append"}})

    def script(i: dict[str, Any]) -> str:
        if i["node"] == "agg":
            return "Answer: 0"
        return f"Answer: {i['node']}{i['sample_index'] % 1000}"
    gw = ScriptedGateway(script)
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    assert r.status == "ok"
    prompt = next(q for q in gw.requests if q["node"] == "agg")["messages"][-1]["content"]
    pos = [prompt.index(f"Answer: {x}") for x in ("a0", "a1", "b0", "d0", "d1")]
    assert pos == sorted(pos), prompt
