"""The loop controller and the node steps (runtime/steps.py): whole designs on scripted gateways
(rounds, calls, answers, node rows counted by hand from each script) and the step functions called
directly on a stand-in node and a real scope, and a compiled loop node's round controller and
exit (issue 29)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from masbench.bench.types import TaskInstance
from masbench.budget import Budget
from masbench.charge import Charge, Tally
from masbench.library import Library
from masbench.llm.scripted import ScriptedGateway
from masbench.runtime import RunContext, run_design, steps
from masbench.runtime.bind import MAP_LIMIT
from masbench.runtime.calls import CALLS, BudgetRefused
from masbench.runtime.ops.loop import LoopNode
from masbench.runtime.scope import EMPTY, SKIP, Br, Env, Scope, Shared
from masbench.runtime.steps import branch, branches, single
from masbench.runtime.values import Val
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


# ----- the step functions called directly: a stand-in node, a real scope, the node body faked -------
# (what each step returns, records and emits is read off the code's contract by hand, not computed)

def _scope(rows: list | None = None, prefix: str = "") -> Scope:
    sh = Shared(RunContext(gateway=ScriptedGateway(counting()), library=LIB,
                           node_sink=None if rows is None else rows.append, tags={"run_id": "r", "task_id": "t"}))
    return Scope(sh, "q", ["42"], [], 0, prefix=prefix)


def _plan(key: str = "w", loop: str | None = None, into: str | None = None, order: int = 0, items: Any = None,
          fan: str | None = None) -> Any:
    return SimpleNamespace(key=key, loop=loop, order=order, items=items, fan=fan, row_op="map",
                           actor="solver-agent", model="m-alias", into=into)


def _no_items(state: dict, sc: Scope) -> list:
    raise AssertionError("a skipped fan-out must not read its items")


def test_branches_of_a_stopped_loop_are_one_skip_marker() -> None:
    sc, state = _scope(), {"x": 1}
    sc.stop["L"] = "until"
    (b,) = branches(_plan(loop="L", items=_no_items), state, sc)
    assert b.state is state and b.i == 0 and b.item is SKIP


def test_branches_of_an_empty_or_missing_list_are_one_empty_marker() -> None:
    for got in ([], None, ()):
        sc, state = _scope(), {"x": 1}
        sc.stop["other"] = "until"  # another loop's stop flag does not skip this one
        (b,) = branches(_plan(loop="L", items=lambda s, c, got=got: got if s is state and c is sc else ["x"]), state, sc)
        assert b.state is state and b.i == 0 and b.item is EMPTY


def test_branches_number_the_items_from_zero() -> None:
    sc, state = _scope(), {"x": 1}
    bs = branches(_plan(items=lambda s, c: range(3) if s is state and c is sc else range(0)), state, sc)
    assert [(b.state is state, b.i, b.item) for b in bs] == [(True, 0, None), (True, 1, None), (True, 2, None)]
    bs = branches(_plan(loop="L", items=lambda s, c: ["a", "b"]), state, sc)
    assert [(b.state is state, b.i, b.item) for b in bs] == [(True, 0, "a"), (True, 1, "b")]


def _fake_node(monkeypatch: pytest.MonkeyPatch, out: Val) -> list:
    """Replace the node body by one returning ``out``; the list collects (state, env scope is the
    node's scope, branch payload, branch index) of each call."""
    seen: list = []

    async def fake(n, sc, env, i):
        seen.append((env.state, env.sc is sc, env.br, i))
        return out
    monkeypatch.setattr(steps, "run_node", fake)
    return seen


async def test_single_step_writes_its_value_and_its_channel_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    out = Val(text="t", answers=("7",))
    seen = _fake_node(monkeypatch, out)
    sc, state = _scope(), {"x": 1}
    r = await single(_plan(key="s", into="pool", order=3), state, sc)
    # order 3 → the channel index 3 * 100000, round 0
    assert r == {"s": out, "pool": [(0, 300_000, out)]} and seen == [(state, True, None, None)]
    assert await single(_plan(key="s"), state, sc) == {"s": out}


async def test_single_step_in_a_loop_skips_when_stopped_and_keeps_the_old_value_on_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    got = [Val(text="", status="error", error="boom")]

    async def fake(n, sc, env, i):
        return got[0]
    monkeypatch.setattr(steps, "run_node", fake)
    sc = _scope()
    node = _plan(key="s", loop="L", into="pool")
    assert await single(node, {}, sc) == {}  # nothing to show: the previous round's value stays
    got[0] = Val(text="ok now")
    r = await single(node, {}, sc)
    assert r == {"s": got[0], "pool": [(0, 0, got[0])]}
    sc.stop["L"] = "until"
    got[0] = Val(text="never")
    assert await single(node, {}, sc) == {}
    # outside a loop a failed value is still written
    bad = Val(text="", status="error", error="boom")
    got[0] = bad
    assert await single(_plan(key="s"), {}, sc) == {"s": bad}


async def test_branch_step_of_an_empty_list_records_and_emits_one_empty_row() -> None:
    rows: list = []
    sc = _scope(rows, prefix="sub.")
    sc.rounds["L"] = 2
    r = await branch(_plan(key="w", loop="L", into="pool", order=2), Br({}, 0, EMPTY), sc)
    msg = "nothing to map over (the upstream list is empty or missing)"
    (v,) = [e[2] for e in r["w"]]
    assert v.status == "empty" and v.error == msg and v.text == "" and v.answers is None and v.data is None
    assert v.items is None
    # round 2 of loop L, branch 0; the channel entry: round 0, order 2 → 200000
    assert r == {"w": [(2, 0, v)], "pool": [(0, 200_000, v)]}
    assert sc.branches == {"w": ["empty"]} and sc.errors == {"w[0]": msg} and sc.bad == 1 and sc.status == {}
    (row,) = rows
    assert (row.node, row.op, row.agent, row.model, row.calls, row.tokens, row.cost_usd, row.status, row.error,
            row.output, row.run_id, row.task_id) == ("sub.w", "map", "solver-agent", "m-alias", 0, 0, 0.0, "empty",
                                                      msg, None, "r", "t")
    assert row.latency_s >= 0 and row.t_start <= row.t_end


async def test_branch_step_skips_a_stopped_round_and_indexes_its_branch(monkeypatch: pytest.MonkeyPatch) -> None:
    out = Val(text="b", answers=("3",))
    seen = _fake_node(monkeypatch, out)
    rows: list = []
    sc = _scope(rows)
    assert await branch(_plan(key="w", loop="L", into="pool"), Br({}, 0, SKIP), sc) == {}
    assert seen == [] and rows == [] and sc.branches == {}
    state = {"x": 1}
    br = Br(state, 4, "item")
    # outside a loop the round is 0; order 1, branch 4 → 100004
    assert await branch(_plan(key="w", into="pool", order=1), br, sc) == {
        "w": [(0, 4, out)], "pool": [(0, 100_004, out)]}
    assert seen == [(state, True, br, 4)]
    sc.rounds["L"] = 3
    assert await branch(_plan(key="w", loop="L"), br, sc) == {"w": [(3, 4, out)]}
    # a loop not yet started is round 0
    assert await branch(_plan(key="w", loop="M"), br, sc) == {"w": [(0, 4, out)]}


def _reads(state: dict, sc: Scope, v: Val | None) -> Any:
    """A loop's current-value reader that checks it is handed the step's state and scope."""
    def cur(env: Any) -> Val | None:
        assert env.state is state and env.sc is sc and env.br is None
        return v
    return cur


def _loop(cur: Any, max_rounds: int = 3, init: str | None = "draft", converged: bool = False,
          fan_judge: Any = None) -> LoopNode:
    return LoopNode(key="L", name="L", loop=None, fan=None, order=0, actor=None, agent_name=None, model=None,
                    row_op="loop", cur=cur, max_rounds=max_rounds, init=init, converged=converged,
                    fan_judge=fan_judge)


async def test_round_step_go_flags() -> None:
    v = Val(text="x", answers=("1",))
    # the last round done: stop at max_rounds
    sc = _scope()
    sc.rounds["L"] = 3
    await _loop(lambda env: v, 3).round({}, sc)
    assert sc.go == {"L": False} and sc.stop == {"L": "max_rounds"} and sc.rounds == {"L": 3}
    # one round left: go on
    sc = _scope()
    sc.rounds["L"] = 2
    await _loop(lambda env: v, 3).round({}, sc)
    assert sc.go == {"L": True} and sc.stop == {} and sc.rounds == {"L": 3}
    assert sc.hist == {}  # only round 0 writes the start line
    # already stopped (an until node met): no go, the reason kept, the round not advanced
    sc = _scope()
    sc.rounds["L"] = 1
    sc.stop["L"] = "until"
    await _loop(lambda env: v, 3).round({}, sc)
    assert sc.go == {"L": False} and sc.stop == {"L": "until"} and sc.rounds == {"L": 1}
    # the budget spent: stop with reason budget
    sc = _scope()
    sc.rounds["L"] = 1
    sc.sh.meter.exhausted = True
    await _loop(lambda env: v, 3).round({}, sc)
    assert sc.go == {"L": False} and sc.stop == {"L": "budget"} and sc.rounds == {"L": 1}


async def test_round_step_judges_a_fanned_out_until_after_round_0_only() -> None:
    judged: list = []

    def fake_check(sc, uv):
        judged.append([m.text for m in uv.items])
        sc.stop["L"] = "until"
    chk = ("chk", SimpleNamespace(check=fake_check))
    state = {"chk": [(1, 1, Val(text="b")), (1, 0, Val(text="a"))]}
    v = Val(text="x")
    sc = _scope()  # round 0: not judged
    await _loop(lambda env: v, 4, fan_judge=chk).round({}, sc)
    assert judged == [] and sc.go == {"L": True}
    sc = _scope()
    sc.rounds["L"] = 1
    await _loop(lambda env: v, 4, fan_judge=chk).round(state, sc)
    assert judged == [["a", "b"]] and sc.stop == {"L": "until"} and sc.go == {"L": False}
    judged.clear()
    for st, stop, judge in (({}, {}, chk), (state, {"L": "budget"}, chk), (state, {}, None)):
        sc = _scope()  # nothing in yet / already stopped / an until node that does not fan out: not judged here
        sc.rounds["L"] = 1
        sc.stop.update(stop)
        await _loop(lambda env: v, 4, fan_judge=judge).round(st, sc)
        assert judged == [] and sc.stop == stop


async def test_exit_step_of_a_loop_with_no_value_writes_an_empty_value_and_its_row() -> None:
    rows: list = []
    sc, state = _scope(rows, prefix="sub."), {"x": 1}
    sc.rounds["L"], sc.stop["L"] = 2, "budget"
    r = await _loop(_reads(state, sc, None), 5).exit(state, sc)
    v = r["L"]
    msg = "the loop produced no value"
    assert list(r) == ["L"] and (v.text, v.answers, v.data, v.items, v.status, v.error) == ("", None, None, None,
                                                                                            "empty", msg)
    assert sc.loops == {"sub.L": {"rounds": 2, "max_rounds": 5, "stopped": "budget"}}
    assert sc.status == {"L": "empty"} and sc.errors == {"L": msg} and sc.bad == 1
    (row,) = rows
    assert (row.node, row.op, row.agent, row.model, row.calls, row.tokens, row.cost_usd, row.status, row.error,
            row.output) == ("sub.L", "loop", None, None, 0, 0, 0.0, "empty", msg, None)
    assert row.latency_s >= 0



def _node_rows(rows: list, node: str) -> list:
    return [x for x in rows if x.node == node]


async def test_a_fan_out_after_a_met_until_in_the_same_round_does_not_run() -> None:
    # the loop's output is a fan-out (repeat 2) after its until node: round 1 is rejected, so both
    # redo branches run; round 2 approves, so neither branch runs and round 1's two redos are the value
    d = spec({"draft": {"agent": "cot-solver"},
              "fix": {"loop": {"init": "draft", "max_rounds": 4, "until": "check contains APPROVED",
                               "nodes": {"check": {"agent": "cot-solver", "from": ["fix"]},
                                         "redo": {"agent": "refiner", "repeat": 2, "from": ["fix", "check"]}},
                               "output": "redo"}}}, "fix")
    verdicts = iter(["rejected", "APPROVED"])

    def script(i: dict[str, Any]) -> str:
        if i["node"] == "fix.check":
            return next(verdicts)
        return "Answer: 7" if i["node"] == "fix.redo" else "Answer: 1"
    gw = ScriptedGateway(script)
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    assert [q["node"] for q in gw.requests] == ["draft", "fix.check", "fix.redo", "fix.redo", "fix.check"]
    assert r.detail["loops"]["fix"] == {"rounds": 2, "max_rounds": 4, "stopped": "until"}
    # the loop's value is round 1's two redo branches (both "7"), so the design answers 7, ok
    assert r.answers == ["7"] and r.status == "ok" and r.detail["nodes"]["fix"] == "ok"


async def test_a_loop_over_a_fan_out_with_a_failed_branch_is_degraded() -> None:
    d = spec({"fix": {"loop": {"max_rounds": 1,
                               "nodes": {"redo": {"agent": "cot-solver", "repeat": 2}}, "output": "redo"}}}, "fix")

    def script(i: dict[str, Any]) -> str:
        if i["sample_index"] % 2 == 1:  # one of the two branches' (consecutive) sample indices, every attempt
            raise ValueError("injected failure")
        return "Answer: 7"
    rows: list = []
    r = await run_design(d, TASK, RunContext(gateway=ScriptedGateway(script), library=LIB, node_sink=rows.append))
    # one of the two branches failed: the loop's value is degraded (its status, its row), the answer 7
    assert r.detail["nodes"]["fix"] == "degraded" and r.answers == ["7"] and r.status == "degraded"
    (row,) = _node_rows(rows, "fix")
    assert (row.op, row.calls, row.status) == ("loop", 0, "degraded")


async def test_a_loop_whose_every_round_fails_has_no_value() -> None:
    # no init, and the body's one node fails in both rounds: a failed round keeps the previous
    # round's value, and there is none, so the loop's value is empty with its reason
    d = spec({"fix": {"loop": {"max_rounds": 2, "nodes": {"redo": {"agent": "cot-solver"}}, "output": "redo"}}}, "fix")

    def script(i: dict[str, Any]) -> str:
        raise ValueError("injected failure")
    rows: list = []
    r = await run_design(d, TASK, RunContext(gateway=ScriptedGateway(script), library=LIB, node_sink=rows.append))
    assert r.detail["loops"]["fix"] == {"rounds": 2, "max_rounds": 2, "stopped": "max_rounds"}
    assert r.detail["nodes"]["fix"] == "empty"
    assert r.detail["errors"]["fix"] == "the loop produced no value"
    (row,) = _node_rows(rows, "fix")
    assert (row.op, row.agent, row.model, row.calls, row.status, row.error, row.output) == \
        ("loop", None, None, 0, "empty", "the loop produced no value", None)
    assert r.answers == [""] and r.status == "failed"  # answers are padded to the task's count (one)


async def test_an_empty_map_is_one_marker_branch_with_its_row_and_reason() -> None:
    d = DesignSpec.model_validate({"name": "steps", "params": {"xs": []}, "reducers": {"pool": "append"},
                                   "nodes": {"each": {"agent": "cot-solver", "map": "{xs}", "into": "pool"},
                                             "pick": {"op": "majority", "from": "pool"}},
                                   "output": "pick"})
    gw = ScriptedGateway(counting())
    rows: list = []
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB, node_sink=rows.append))
    why = "nothing to map over (the upstream list is empty or missing)"
    assert gw.requests == [] and r.calls == 0
    assert r.detail["branches"]["each"] == ["empty"] and r.detail["errors"]["each[0]"] == why
    (row,) = _node_rows(rows, "each")
    assert (row.op, row.agent, row.calls, row.tokens, row.status, row.error, row.output) == \
        ("map", "cot-solver", 0, 0, "empty", why, None)
    assert row.model is not None and row.latency_s >= 0 and row.t_end >= row.t_start
    # the marker branch reaches the channel as one member without an answer: the vote has one
    # missing voter and nothing to vote on
    assert r.detail["votes"]["pick"]["missing"] == 1 and r.detail["votes"]["pick"]["voters"] == 0
    assert r.status == "failed" and r.error == "no answers to vote on"


async def test_a_budget_spent_before_the_loop_stops_it_at_round_zero() -> None:
    # one call allowed: the draft's first sample makes it and its second is refused, so the meter is
    # exhausted before the loop and its controller stops it before round 1; the loop's value is the
    # draft's (the one answer that arrived)
    d = spec({"draft": {"agent": "cot-solver", "repeat": 2},
              "fix": {"loop": {"init": "draft", "max_rounds": 3,
                               "nodes": {"redo": {"agent": "refiner", "from": ["fix"]}}, "output": "redo"}}}, "fix")
    gw = ScriptedGateway(counting())
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB, budget=Budget(per_task_calls=1)))
    assert [q["node"] for q in gw.requests] == ["draft"]
    assert r.detail["loops"]["fix"] == {"rounds": 0, "max_rounds": 3, "stopped": "budget"}
    assert r.answers == ["1"] and r.status == "budget_exhausted"


async def test_the_round_zero_history_entry_is_the_init_node() -> None:
    d = spec({"draft": {"agent": "cot-solver"},
              "fix": {"loop": {"init": "draft", "max_rounds": 2,
                               "nodes": {"redo": {"agent": "refiner", "from": ["fix"],
                                                  "prompt": "{question}\\n{history}\\nAgain."}},
                               "output": "redo"}}}, "fix")
    gw = ScriptedGateway(counting())
    await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    second = [q["messages"][-1]["content"] for q in gw.requests if q["node"] == "fix.redo"][1]
    # round 2's prompt holds round 0 (the draft, answer 1) under the init's name, then round 1's redo
    assert "[round 0] draft:\nStep 1.\nAnswer: 1" in second and "[round 1] redo:\nStep 2.\nAnswer: 2" in second


async def test_a_map_over_more_than_the_limit_runs_the_first_limit_items_and_says_so() -> None:
    xs = [str(i) for i in range(MAP_LIMIT + 3)]
    d = DesignSpec.model_validate({"name": "steps", "params": {"xs": xs},
                                   "nodes": {"src": {"python": "identity", "from": ["xs"]},
                                             "each": {"agent": "cot-solver", "map": "src"}}, "output": "each"})
    gw = ScriptedGateway(counting())
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    assert len(gw.requests) == MAP_LIMIT
    assert r.detail["notes"] == [f"each: mapped over the first {MAP_LIMIT} of {MAP_LIMIT + 3} items"]


# ----- run_node and its body called directly: a recording stand-in node, a real scope and tally -------
# (the expected values follow from the stand-in's own charge and value, worked out by hand: one call of
# 10 + 5 tokens at $0.25; what each step records is read off Scope.record / Scope.emit's contract)

ONE_CALL = Charge(10, 5, 0.25)


def _node(body: Any, key: str = "w", name: str = "w", loop: str | None = None, fan: str | None = None,
          until: Any = None, agent_name: str | None = "solver", row_op: str = "repeat") -> tuple[Any, list]:
    """A stand-in compiled node whose run body is ``body(st)`` (a coroutine function); the list
    collects the arguments of each run call."""
    seen: list = []

    async def run(sc, env, i, st, calls):
        seen.append((sc, env, i, st, calls))
        return await body(st)
    return SimpleNamespace(key=key, name=name, loop=loop, fan=fan, order=0, row_op=row_op, actor="solver-agent",
                           agent_name=agent_name, model="m-alias", into=None, items=None, until=until, run=run), seen


def _answers(val: Val, charge: Charge | None = ONE_CALL) -> Any:
    async def body(st: Tally) -> Val:
        if charge is not None:
            st.add(charge)
        return val
    return body


def _raises(exc: BaseException, charge: Charge | None = ONE_CALL) -> Any:
    async def body(st: Tally) -> Val:
        if charge is not None:
            st.add(charge)
        raise exc
    return body


def _begun(rows: list | None = None, prefix: str = "") -> Scope:
    """A scope whose design run has begun (its usage is counted: Shared.charge adds to it)."""
    sc = _scope(rows, prefix=prefix)
    sc.sh.begin(sc)
    return sc


async def test_run_node_hands_the_node_its_scope_env_branch_a_fresh_tally_and_the_model_calls() -> None:
    rows: list = []
    sc = _begun(rows, prefix="sub.")
    out = Val(text="t", answers=("7",))
    node, seen = _node(_answers(out), fan="repeat")
    env = Env({"x": 1}, sc)
    assert await steps.run_node(node, sc, env, 3) is out
    ((s, e, i, st, calls),) = seen
    assert s is sc and e is env and i == 3 and calls is CALLS
    assert isinstance(st, Tally) and (st.calls, st.tokens, st.cost) == (1, 15, 0.25)
    # the node's one call is counted in its design run's usage once
    run = sc.sh.usage[sc]
    assert (run.calls, run.prompt, run.completion, run.cost) == (1, 10, 5, 0.25)
    # branch 3 of a fan-out: its status at index 3 (the earlier indices padded with "")
    assert sc.branches == {"w": ["", "", "", "ok"]} and sc.status == {} and sc.bad == 0 and sc.errors == {}
    (row,) = rows
    assert (row.node, row.op, row.agent, row.model, row.calls, row.tokens, row.cost_usd, row.status, row.error,
            row.output, row.run_id, row.task_id) == ("sub.w", "repeat", "solver-agent", "m-alias", 1, 15, 0.25, "ok",
                                                      None, "7", "r", "t")
    assert 0 <= row.latency_s < 60 and row.t_start <= row.t_end
    # a plain node (no fan-out, no branch): its status by key
    node, _ = _node(_answers(Val(text="u"), charge=None), key="v", row_op="agent")
    await steps.run_node(node, sc, Env({}, sc), None)
    assert sc.status == {"v": "ok"} and sc.branches == {"w": ["", "", "", "ok"]}
    assert (rows[1].node, rows[1].op, rows[1].calls, rows[1].output) == ("sub.v", "agent", 0, "u")
    assert sc.sh.usage[sc].calls == 1


async def test_a_node_that_raises_is_recorded_as_an_error_with_its_calls_counted() -> None:
    rows: list = []
    sc = _begun(rows)
    node, _ = _node(_raises(ValueError("x" * 2000)), key="v", row_op="agent")
    val = await steps.run_node(node, sc, Env({}, sc), None)
    # "ValueError: " + the message, cut at 1000 characters
    want = ("ValueError: " + "x" * 2000)[:1000]
    assert (val.status, val.error, val.text, val.answers, val.data) == ("error", want, "", None, None)
    assert len(val.error or "") == 1000
    assert sc.status == {"v": "error"} and sc.errors == {"v": want[:500]} and sc.bad == 1
    (row,) = rows
    assert (row.status, row.error, row.calls, row.tokens, row.output) == ("error", want, 1, 15, None)
    assert sc.sh.usage[sc].calls == 1  # the call was made before the node failed
    # a refused call: its own status and reason, whatever the exception says
    node, _ = _node(_raises(BudgetRefused("not this text"), charge=None), key="b", row_op="agent")
    val = await steps.run_node(node, sc, Env({}, sc), None)
    assert (val.status, val.error) == ("budget_exhausted", "budget exhausted: call not made")
    assert sc.status["b"] == "budget_exhausted" and sc.errors["b"] == "budget exhausted: call not made"
    assert (rows[1].node, rows[1].status, rows[1].error, rows[1].calls) == ("b", "budget_exhausted",
                                                                             "budget exhausted: call not made", 0)


async def test_a_cancelled_node_raises_and_its_calls_still_count() -> None:
    rows: list = []
    sc = _begun(rows)
    node, _ = _node(_raises(asyncio.CancelledError()), key="v", row_op="agent")
    with pytest.raises(asyncio.CancelledError):
        await steps.run_node(node, sc, Env({}, sc), None)
    # no status, no row (the run is being torn down), but the call it made is counted
    assert rows == [] and sc.status == {} and sc.sh.usage[sc].calls == 1


async def test_the_loop_history_of_a_node_execution() -> None:
    sc = _begun()
    sc.rounds["L"] = 2
    # a plain body node in round 2 of L: (round, name, text)
    node, _ = _node(_answers(Val(text="t", data={"a": 1})), key="L.redo", name="redo", loop="L")
    await steps.run_node(node, sc, Env({}, sc), None)
    assert sc.hist == {"L": [(2, "redo", "t")]}
    # branch 1 of a fan-out is named redo[2]; a value with data only shows its data (json.dumps of {"a": 1})
    node, _ = _node(_answers(Val(data={"a": 1})), key="L.redo", name="redo", loop="L", fan="repeat")
    await steps.run_node(node, sc, Env({}, sc), 1)
    assert sc.hist["L"][1] == (2, "redo[2]", '{"a": 1}')
    # an ok value with nothing to show is an entry with no text; a loop not yet started is round 0
    node, _ = _node(_answers(Val(text="")), key="M.x", name="x", loop="M")
    await steps.run_node(node, sc, Env({}, sc), None)
    assert sc.hist["M"] == [(0, "x", "")]
    # a failed execution with nothing to show adds no entry; a degraded one with text does
    node, _ = _node(_raises(ValueError("boom")), key="M.x", name="x", loop="M")
    await steps.run_node(node, sc, Env({}, sc), None)
    node, _ = _node(_answers(Val(text="partial", status="degraded")), key="M.x", name="x", loop="M")
    await steps.run_node(node, sc, Env({}, sc), None)
    assert sc.hist["M"] == [(0, "x", ""), (0, "x", "partial")]
    # a node outside any loop keeps no history
    node, _ = _node(_answers(Val(text="top")), key="top")
    await steps.run_node(node, sc, Env({}, sc), None)
    assert set(sc.hist) == {"L", "M"} and len(sc.hist["L"]) == 2


async def test_the_stop_rule_judges_a_plain_node_once_and_never_a_branch() -> None:
    judged: list = []
    rule = SimpleNamespace(check=lambda sc, val: judged.append((sc, val)))
    sc = _begun()
    out = Val(text="APPROVED")
    node, _ = _node(_answers(out), key="L.check", name="check", loop="L", until=rule)
    await steps.run_node(node, sc, Env({}, sc), None)
    assert len(judged) == 1 and judged[0][0] is sc and judged[0][1] is out
    # a fanned-out until node is judged by the round controller once all branches are in
    node, _ = _node(_answers(Val(text="APPROVED")), key="L.check", name="check", loop="L", fan="repeat", until=rule)
    await steps.run_node(node, sc, Env({}, sc), 0)
    # a body node the condition does not read has no rule
    node, _ = _node(_answers(Val(text="x")), key="L.redo", name="redo", loop="L")
    await steps.run_node(node, sc, Env({}, sc), None)
    assert len(judged) == 1


@pytest.fixture
def spans():
    """Telemetry on for one test, exporting each span at its end to an in-memory exporter."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from masbench import telemetry
    telemetry.reset()
    exp = InMemorySpanExporter()
    telemetry.configure(exp, batch=False, capture_content=False)
    yield exp
    telemetry.reset()


async def test_run_node_exports_one_span_with_the_nodes_place_and_usage(spans) -> None:
    from opentelemetry.trace import StatusCode

    sc = _begun(prefix="sub.")
    sc.rounds["L"] = 2
    # an agent's branch 3 in round 2 of loop L, one call of 10 + 5 tokens at $0.25
    node, _ = _node(_answers(Val(text="t")), key="L.w", name="w", loop="L", fan="repeat")
    await steps.run_node(node, sc, Env({}, sc), 3)
    # a node without an agent (a vote) outside loops and fan-outs, no call
    node, _ = _node(_answers(Val(text="v"), charge=None), key="v", agent_name=None, row_op="majority")
    await steps.run_node(node, sc, Env({}, sc), None)
    # a failing body node of a loop not yet started
    node, _ = _node(_raises(ValueError("boom"), charge=None), key="M.x", name="x", loop="M", agent_name="critic",
                    row_op="agent")
    await steps.run_node(node, sc, Env({}, sc), None)
    agent, vote, bad = spans.get_finished_spans()
    a = dict(agent.attributes or {})
    assert agent.name == "invoke_agent solver"
    assert a == {"masbench.run_id": "r", "masbench.task_id": "t", "masbench.node": "sub.L.w", "masbench.op": "repeat",
                 "masbench.round": 2, "masbench.branch": 3, "gen_ai.operation.name": "invoke_agent",
                 "gen_ai.agent.name": "solver", "masbench.status": "ok", "masbench.calls": 1, "masbench.tokens": 15,
                 "masbench.cost_usd": 0.25}
    assert agent.status.status_code == StatusCode.UNSET
    v = dict(vote.attributes or {})
    assert vote.name == "majority sub.v"
    assert v == {"masbench.run_id": "r", "masbench.task_id": "t", "masbench.node": "sub.v", "masbench.op": "majority",
                 "masbench.status": "ok", "masbench.calls": 0, "masbench.tokens": 0, "masbench.cost_usd": 0.0}
    b = dict(bad.attributes or {})
    assert bad.name == "invoke_agent critic" and b["masbench.round"] == 0 and "masbench.branch" not in b
    assert (b["masbench.status"], b["error.type"]) == ("error", "error")
    assert bad.status.status_code == StatusCode.ERROR and bad.status.description == "ValueError: boom"


class _Clocks:
    """Epoch and perf clocks over one shared "now": each read takes 0.1 s, and every perf read
    after the first is followed by a 1 s stall (the process preempted between two lines, as on a
    loaded machine)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.perf_reads = 0

    def time(self) -> float:
        t = 1000.0 + self.now
        self.now += 0.1
        return t

    def perf_counter(self) -> float:
        t = 50.0 + self.now
        self.now += 0.1 + (1.0 if self.perf_reads else 0.0)
        self.perf_reads += 1
        return t


async def test_a_node_rows_times_hold_its_calls_even_when_stalled_between_clock_reads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """By hand: started = 1000.0 (now 0.1); t0 = 50.1 (now 0.2); the call starts at epoch 1000.2
    (now 0.3); the row's end t_end = 1000.3 (now 0.4); latency = 50.4 − 50.1 = 0.3, then the stall.
    The row spans [1000.0, 1000.3] and holds the call. Reading the latency before t_end, with
    t_start = t_end − latency, puts the stall inside the row's start: [1001.1, 1001.3] with t0 =
    50.0 and the call at 1000.1 — the call outside its node, as an inspect export then shows it."""
    clocks = _Clocks()
    monkeypatch.setattr(steps, "time", clocks)
    monkeypatch.setattr("masbench.runtime.scope.time", clocks)
    call_starts: list[float] = []

    async def body(st: Tally) -> Val:
        call_starts.append(clocks.time())  # what the gateway reads as the call's t_start
        st.add(ONE_CALL)
        return Val(text="x")

    rows: list = []
    sc = _begun(rows)
    node, _ = _node(body)
    await steps.run_node(node, sc, Env({}, sc), None)
    (row,) = rows
    assert row.t_start <= call_starts[0] <= row.t_end
    assert call_starts == [pytest.approx(1000.2)]
    assert (row.t_start, row.t_end, row.latency_s) == (pytest.approx(1000.0), pytest.approx(1000.3),
                                                       pytest.approx(0.3))
