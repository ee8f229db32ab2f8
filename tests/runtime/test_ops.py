"""Node ops, templates, structured outputs, sub-designs, events and sample indices."""

from __future__ import annotations

import json
from typing import Any

import pytest

from masbench.bench.types import TaskInstance
from masbench.library import Library
from masbench.llm import Gateway
from masbench.llm.scripted import ScriptedGateway
from masbench.runtime import (
    PYTHON_FUNCS,
    CalculatorError,
    RunContext,
    calculate,
    compile_design,
    majority_vote,
    run_design,
)
from masbench.runtime.template import parse
from masbench.spec import DesignSpec
from masbench.spec.model import ModelSpec, SimProfile, TokenDist
from masbench.store import Store, StoreWriter

LIB = Library()
TASK = TaskInstance(id="t", source="unit", question="What is 20 + 22?", answers=["42"], skills=["arith.add"])


def spec(nodes: dict, output: str, **kw) -> DesignSpec:
    return DesignSpec.model_validate({"name": kw.pop("name", "t-" + output), "nodes": nodes, "output": output, **kw})


def sim(acc: float = 1.0) -> Gateway:
    return Gateway({"default": ModelSpec(id="sim/ops", sim=SimProfile(accuracy={"default": acc},
                                                                       completion_tokens=TokenDist(mean=50, sd=5)))})


# ----- python functions ----------------------------------------------------------------------------

def test_calculator_computes_arithmetic_only() -> None:
    assert calculate("3 * (4 + 2)") == 18
    assert calculate("7 / 2") == 3.5 and calculate("7 // 2") == 3 and calculate("7 % 4") == 3
    assert calculate("2 ** 10") == 1024 and calculate("-(3 - 5)") == 2
    assert calculate("1,000 + 1") == 1001 and calculate("3 × 4") == 12 and calculate("2^3") == 8
    assert calculate({"result": "6 * 7"}) == 42 and calculate(5) == 5
    assert calculate("0.1 + 0.2") == pytest.approx(0.3)
    assert calculate("3 + 4 = 7") == 7
    for bad in ["__import__('os').system('true')", "open('/etc/passwd')", "x + 1", "(lambda: 1)()",
                "[1, 2]", "1 if 1 else 2", "1 < 2", "9 ** 9 ** 9", "1 / 0", "'a' * 3", "a.b", "", "1; 2"]:
        with pytest.raises(CalculatorError):
            calculate(bad)


def test_shipped_python_functions() -> None:
    assert {"calculator", "sum_list", "majority", "identity"} <= set(PYTHON_FUNCS)
    assert PYTHON_FUNCS["sum_list"]([1, 2, "3 + 4"]) == 10
    assert PYTHON_FUNCS["majority"](["7", "7.0", "8"]) == "7"
    assert PYTHON_FUNCS["identity"]("x") == "x"


def test_majority_vote_ties_go_to_the_first_seen() -> None:
    assert majority_vote(["b", "a", "a", "b", None]) == ("b", {"b": 2, "a": 2}, ["b", "a"])
    assert majority_vote([None, None]) == (None, {}, [])
    assert majority_vote(["x", "y", "y"])[0] == "y"


# ----- templates -----------------------------------------------------------------------------------

def test_templates_keep_json_literal_and_escapes() -> None:
    parts = parse('Reply {"role": "x"} with {{braces}} and {plan.subtasks} for {question}')
    assert parts == ['Reply {"role": "x"} with {braces} and ', ("plan", "subtasks"), " for ", ("question", None)]


async def test_prompts_never_show_gold_and_render_inputs() -> None:
    task = TaskInstance(id="g", source="unit", question="How many legs do 3 spiders have?", answers=["987654"])
    gw = ScriptedGateway(lambda i: json.dumps({"correct": False, "feedback": "check the legs"})
                         if i["node"] == "refine.critic" else "Answer: 987654")
    r = await run_design("self-refine", task, RunContext(gateway=gw, library=LIB), {"max_rounds": 1})
    assert r.answers == ["987654"]
    for req in gw.requests:  # gold travels only as simulator metadata (later prompts quote the model's own answer)
        assert req["metadata"]["sim"]["gold"] == ["987654"]
    draft = next(q for q in gw.requests if q["node"] == "draft")
    assert all("987654" not in m["content"] for m in draft["messages"])
    revise = next(q for q in gw.requests if q["node"] == "refine.revise")
    user = revise["messages"][-1]["content"]
    assert "Current solution:\nAnswer: 987654" in user and "critic feedback:\ncheck the legs" in user
    assert "\n\n\n" not in user


# ----- fan-outs, votes, select ----------------------------------------------------------------------

async def test_sample_indices_are_distinct_and_seeded() -> None:
    seen: dict[int, list[int]] = {}
    for seed in (0, 1):
        calls: list[dict] = []
        gw = Gateway({"default": ModelSpec(id="sim/medium")}, sink=lambda r: calls.append(r.as_dict()))
        await run_design("cot-sc", TASK, RunContext(gateway=gw, library=LIB, seed=seed), {"k": 5})
        seen[seed] = sorted(c["sample_index"] for c in calls)
    assert seen[0] == [0, 1, 2, 3, 4]
    assert seen[1] == [1_000_003 + i for i in range(5)]


async def test_map_over_structured_list_and_python_compute() -> None:
    def script(info: dict[str, Any]) -> str:
        node = info["node"]
        if node == "decompose":
            return json.dumps({"subtasks": ["add 20 and 22", "double 21", "subtract 8 from 50"]})
        if node == "extract":
            item = info["messages"][-1]["content"]
            expr = {"add 20 and 22": "20 + 22", "double 21": "21 * 2", "subtract 8 from 50": "50 - 8"}
            return json.dumps({"result": next(v for k, v in expr.items() if k in item)})
        return "All three steps give 42.\nAnswer: 42"

    rows: list[dict] = []
    gw = ScriptedGateway(script)
    r = await run_design("decompose-calculator-aggregate", TASK,
                         RunContext(gateway=gw, library=LIB, node_sink=rows.append))
    assert r.status == "ok" and r.answers == ["42"] and r.calls == 5
    compute = [x for x in rows if x["node"] == "compute"]
    assert [x["output"] for x in compute] == ["42", "42", "42"] and all(x["calls"] == 0 for x in compute)
    agg = next(q for q in gw.requests if q["node"] == "aggregate")["messages"][-1]["content"]
    assert "compute:\n[1] 42\n\n[2] 42\n\n[3] 42" in agg


async def test_map_over_an_empty_list_is_recorded() -> None:
    gw = ScriptedGateway(lambda i: json.dumps({"subtasks": []}) if i["node"] == "plan" else "Answer: 42")
    r = await run_design("planner-workers", TASK, RunContext(gateway=gw, library=LIB))
    assert r.detail["branches"]["work"] == ["empty"]
    assert r.calls == 2 and r.status == "degraded" and r.answers == ["42"]


async def test_select_picks_the_chosen_candidate_and_falls_back_on_garbage() -> None:
    d = spec({"s": {"agent": "cot-solver", "repeat": 3}, "pick": {"select": "selector", "from": ["s"]}}, "pick")

    def script(choice: str):
        def f(i: dict[str, Any]) -> str:
            if i["node"] == "pick":
                assert "Candidate 3:" in i["messages"][-1]["content"]
                assert i["metadata"]["sim"]["mode"] == "choice" and len(i["metadata"]["sim"]["candidates"]) == 3
                return choice
            return f"Answer: {[41, 41, 42][i['sample_index']]}"
        return f

    r = await run_design(d, TASK, RunContext(gateway=ScriptedGateway(script("Choice: 3")), library=LIB))
    assert r.answers == ["42"] and r.detail["selects"]["pick"] == {"n": 3, "choice": 3, "fallback": False}
    assert r.status == "ok"
    r = await run_design(d, TASK, RunContext(gateway=ScriptedGateway(script("I cannot decide.")), library=LIB))
    assert r.answers == ["41"] and r.detail["selects"]["pick"]["fallback"] is True and r.status == "degraded"


async def test_select_on_sim_uses_choice_mode() -> None:
    # Samplers right 30% of the time, a selector whose own skill sets how often it picks the gold
    # candidate: at 1.0 it picks a gold candidate whenever there is one (not candidate 1, not the
    # majority), at 0.0 never while a wrong one exists. Only a choice-mode request does that.
    agents = {"solver": {"model": "default", "skills": ["solve"], "prompt": "{question}\nEnd with \"Answer: <x>\"."},
              "chooser": {"model": "default", "skills": ["pick"], "prompt": "{question}\n{candidates}\nChoice: <n>"}}
    d = spec({"s": {"agent": "solver", "repeat": 4}, "pick": {"select": "chooser", "from": ["s"]}}, "pick",
             agents=agents)
    task = TASK.model_copy(update={"skills": []})  # the accuracies are then exactly the agents' skills
    informative = 0
    for pick_acc in (1.0, 0.0):
        gw = Gateway({"default": ModelSpec(id="sim/ops", sim=SimProfile(
            accuracy={"default": 0.5, "solve": 0.3, "pick": pick_acc}, completion_tokens=TokenDist(mean=50, sd=5)))})
        for seed in range(12):
            rows: list[dict] = []
            r = await run_design(d, task, RunContext(gateway=gw, library=LIB, node_sink=rows.append, seed=seed))
            cands = [x["output"] for x in rows if x["node"] == "s"]
            sel = r.detail["selects"]["pick"]
            assert len(cands) == 4 and r.calls == 5 and sel["fallback"] is False
            assert r.answers == [cands[sel["choice"] - 1]]
            gold_in, wrong_in = "42" in cands, any(c != "42" for c in cands)
            if pick_acc == 1.0 and gold_in:
                assert r.answers == ["42"], (seed, cands, sel)
                informative += cands[0] != "42" and majority_vote(cands)[0] != "42"
            if pick_acc == 0.0 and wrong_in:
                assert r.answers != ["42"], (seed, cands, sel)
    assert informative >= 1  # some run where candidate 1 and the majority were both wrong


async def test_into_channel_with_append_reducer() -> None:
    d = spec({"a": {"agent": "cot-solver", "into": "pool"}, "b": {"agent": "cot-solver", "into": "pool"},
              "c": {"agent": "cot-solver", "into": "pool"}, "v": {"op": "majority", "from": "pool"}}, "v",
             reducers={"pool": "append"})

    def script(i: dict[str, Any]) -> str:
        return {"a": "Answer: 7", "b": "Answer: 9", "c": "Answer: 9"}[i["node"]]
    r = await run_design(d, TASK, RunContext(gateway=ScriptedGateway(script), library=LIB))
    assert r.answers == ["9"] and r.detail["votes"]["v"]["tally"] == {"7": 1, "9": 2}


# ----- structured output ---------------------------------------------------------------------------

async def test_parse_failure_retries_with_the_error_then_succeeds() -> None:
    def script(i: dict[str, Any]) -> str:
        if i["node"] == "plan":
            return "Sure! Here are the steps." if i["attempt"] == 1 and len(i["messages"]) <= 2 else \
                '```json\n{"subtasks": ["one"]}\n```'
        return "Answer: 42"
    gw = ScriptedGateway(script)
    r = await run_design("planner-workers", TASK, RunContext(gateway=gw, library=LIB))
    assert r.status == "ok" and r.calls == 4
    retry = [q for q in gw.requests if q["node"] == "plan"][1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "Sure! Here are the steps."}
    assert "no JSON object found" in retry[-1]["content"] and "subtasks (list[str])" in retry[-1]["content"]
    assert r.detail["parse_failures"] == [{"node": "plan", "attempt": 0, "error": "no JSON object found in the reply"}]


async def test_parse_failure_after_the_bound_is_recorded() -> None:
    gw = ScriptedGateway(lambda i: '{"subtasks": "not a list", "x": 1' if i["node"] == "plan" else "Answer: 42")
    r = await run_design("planner-workers", TASK, RunContext(gateway=gw, library=LIB))
    plan_calls = [q for q in gw.requests if q["node"] == "plan"]
    assert len(plan_calls) == 3  # 1 + retries (2)
    assert r.detail["nodes"]["plan"] == "parse_failed"
    assert len(r.detail["parse_failures"]) == 3
    assert r.status == "degraded"


async def test_type_coercion_and_validation() -> None:
    from masbench.runtime.structured import parse_structured
    schema = {"n": "int", "ok": "bool", "xs": "list[int]", "s": "str"}
    assert parse_structured('noise {"n": "3", "ok": "true", "xs": [1, 2.0], "s": 5} tail', schema) == (
        {"n": 3, "ok": True, "xs": [1, 2], "s": "5"}, None)
    assert parse_structured('{"n": "three", "ok": true, "xs": [], "s": ""}', schema)[1] == \
        "field 'n' must be int, got \"three\""
    assert parse_structured('{"ok": true}', schema)[1] == "missing field 'n'"


# ----- loops ---------------------------------------------------------------------------------------

async def test_loop_until_contains_word_and_converged() -> None:
    d = spec({"draft": {"agent": "cot-solver"},
              "fix": {"loop": {"init": "draft", "max_rounds": 4, "until": "check contains APPROVED",
                               "nodes": {"check": {"agent": "cot-solver", "from": ["fix"]},
                                         "redo": {"agent": "refiner", "from": ["fix", "check"]}},
                               "output": "redo"}}}, "fix")
    rounds = iter(["Looks wrong. NOT APPROVED? no: INCORRECT", "APPROVED"])
    gw = ScriptedGateway(lambda i: next(rounds) if i["node"] == "fix.check" else "Answer: 42")
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    # "NOT APPROVED" contains the word APPROVED too: the first round stops already
    assert r.detail["loops"]["fix"] == {"rounds": 1, "max_rounds": 4, "stopped": "until"}

    d2 = spec({"draft": {"agent": "cot-solver"},
               "fix": {"loop": {"init": "draft", "max_rounds": 5, "until": "converged",
                                "nodes": {"redo": {"agent": "refiner", "from": ["fix"]}}, "output": "redo"}}},
              "fix", name="conv")
    answers = iter(["Answer: 40", "Answer: 41", "Answer: 41", "Answer: 45"])
    gw = ScriptedGateway(lambda i: next(answers))
    r = await run_design(d2, TASK, RunContext(gateway=gw, library=LIB))
    assert r.detail["loops"]["fix"]["stopped"] == "converged" and r.detail["loops"]["fix"]["rounds"] == 2
    assert r.answers == ["41"] and r.calls == 3


async def test_reflexion_actor_sees_history() -> None:
    gw = ScriptedGateway(lambda i: json.dumps({"correct": False, "feedback": f"fb{i['sample_index']}"})
                         if i["node"] == "reflect.evaluate" else f"Answer: {i['sample_index']}")
    await run_design("reflexion", TASK, RunContext(gateway=gw, library=LIB), {"max_rounds": 2})
    retry = [q for q in gw.requests if q["node"] == "reflect.retry"][-1]["messages"][-1]["content"]
    assert "[round 0] attempt:" in retry and "[round 1] evaluate:" in retry and "[round 1] retry:" in retry
    assert "[round 2] evaluate:" in retry


# ----- sub-designs, routes, rows ------------------------------------------------------------------

async def test_subdesign_runs_as_a_sub_agent() -> None:
    d = spec({"plan": {"agent": "planner"},
              "solve": {"design": "cot-sc", "map": "plan.subtasks", "params": {"k": 3}},
              "synth": {"agent": "synthesizer", "from": ["plan", "solve"]}}, "synth", name="orchestra")
    rows: list[dict] = []
    calls: list[dict] = []
    gw = Gateway({"default": ModelSpec(id="sim/perfect")}, sink=lambda r: calls.append(r.as_dict()))
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB, node_sink=rows.append))
    assert r.status == "ok" and r.calls == 1 + 2 * 3 + 1 == len(calls)
    sub_rows = [x for x in rows if x["node"].startswith("solve/")]
    assert len([x for x in sub_rows if x["node"] == "solve/sample"]) == 6
    assert len([x for x in rows if x["node"] == "solve"]) == 2
    assert sum(x["calls"] for x in rows if x["node"] == "solve") == 6
    # the sub-question is the sub-task, and the two sub-runs draw distinct samples
    assert len({c["sample_index"] for c in calls if c["node"] == "solve/sample"}) == 6
    assert len(r.detail["subdesigns"]) == 2


async def test_route_hook_and_default() -> None:
    d = spec({"a": {"agent": {"name": "routed", "model": {"route": "hb"}, "prompt": "{question}"}}}, "a")
    seen: list[str] = []

    async def route(agent, messages):
        seen.append(agent.name)
        return "cheap"
    gw = Gateway({"default": ModelSpec(id="sim/wrong"), "cheap": ModelSpec(id="sim/perfect")})
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB, route=route))
    assert seen == ["routed"] and r.answers == ["42"]
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    assert r.answers != ["42"]  # no hook: the default alias (always wrong) answered


async def test_multi_answer_tasks_keep_positions() -> None:
    task = TaskInstance(id="m", source="unit", question="Q1 and Q2", answers=["3", "5"])
    # positions come from the reply, never from the gold: a reversed reply stays reversed
    for reply, want in (("Answer: 3, 5", ["3", "5"]), ("Answer: 5, 3", ["5", "3"]),
                        ("First \\boxed{5} then \\boxed{3}", ["5", "3"])):
        r = await run_design("cot", task, RunContext(gateway=ScriptedGateway(lambda i, t=reply: t), library=LIB))
        assert r.answers == want, reply
    gw = ScriptedGateway(lambda i: "I only know the first.\nAnswer: 3")
    r = await run_design("cot", task, RunContext(gateway=gw, library=LIB))
    assert r.answers == ["3", ""]


async def test_node_rows_fit_the_store(tmp_path) -> None:
    # The stored node rows aggregate to what the gateway's own call rows say, node by node.
    rows: list[dict] = []
    calls: list[dict] = []
    tags = {"run_id": "run1", "design": "debate", "task_id": "t", "seed": 0, "purpose": "design"}
    gw = sim(0.6)
    gw.sink = lambda r: calls.append(r.as_dict())
    r = await run_design("debate", TASK, RunContext(gateway=gw, library=LIB, node_sink=rows.append, tags=tags))
    st = Store(tmp_path / "s.duckdb")
    w = StoreWriter(st)
    for row in rows:
        w.put(row)
    w.flush()
    got = st.sql("SELECT node, op, count(*), sum(calls), sum(tokens) FROM nodes WHERE run_id = 'run1' "
                 "GROUP BY node, op ORDER BY node")
    st.close()

    def spent(node: str) -> int:
        return sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls if c["node"] == node)

    assert [c["node"] for c in calls].count("debate.argue") == 6 and spent("decide") > 0
    assert got == [("debate", "loop", 1, 0, 0), ("debate.argue", "map", 6, 6, spent("debate.argue")),
                   ("decide", "agent", 1, 1, spent("decide"))]
    assert spent("debate.argue") + spent("decide") == r.tokens


def test_compile_once_per_design_and_params() -> None:
    a = compile_design("cot-sc", LIB, {"k": 3})
    assert compile_design("cot-sc", LIB, {"k": 3}) is a
    assert compile_design("cot-sc", LIB, {"k": 4}) is not a
    assert compile_design(LIB.design("cot-sc"), LIB, {"k": 3}) is a


async def test_role_assignment_maps_the_router_reply_onto_a_role() -> None:
    def script(i: dict[str, Any]) -> str:
        if i["node"] == "route":
            return '{"role": "I think a math professor should do it"}'
        assert i["messages"][0]["content"] == "You are a Math Professor. Solve problems carefully."
        return "Answer: 42"
    r = await run_design("role-assignment", TASK, RunContext(gateway=ScriptedGateway(script), library=LIB))
    assert r.status == "ok" and r.calls == 2
    assert PYTHON_FUNCS["choose"]("nonsense", options=["A B", "C"], default="C") == "C"


async def test_concurrent_runs_do_not_share_state() -> None:
    import asyncio

    gw = Gateway({"default": ModelSpec(id="sim/perfect", sim=SimProfile(accuracy={"default": 1.0}, latency_ms=1.0))})
    tasks = [TaskInstance(id=f"c{i}", source="unit", question=f"What is {i} + 1?", answers=[str(i + 1)])
             for i in range(20)]
    results = await asyncio.gather(*(run_design(name, t, RunContext(gateway=gw, library=LIB))
                                     for t in tasks for name in ("cot-sc", "self-refine", "debate")))
    for i, t in enumerate(tasks):
        for j, calls in enumerate((5, 2, 7)):
            r = results[3 * i + j]
            assert r.answers == t.answers and r.calls == calls and r.status == "ok"


async def test_python_node_reads_a_field_and_params() -> None:
    d = spec({"plan": {"agent": "planner"},
              "total": {"python": "sum_list", "from": ["plan.subtasks"]}}, "total")
    gw = ScriptedGateway(lambda i: json.dumps({"subtasks": ["20 + 2", "20"]}))
    r = await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    assert r.answers == ["42"] and r.status == "ok"


async def test_select_prompt_lists_candidates_once() -> None:
    d = spec({"s": {"agent": "cot-solver", "repeat": 2}, "pick": {"select": "selector", "from": ["s"]}}, "pick")
    gw = ScriptedGateway(lambda i: "Choice: 1" if i["node"] == "pick" else f"Answer: {i['sample_index']}")
    await run_design(d, TASK, RunContext(gateway=gw, library=LIB))
    user = next(q for q in gw.requests if q["node"] == "pick")["messages"][-1]["content"]
    assert user.count("Answer: 0") == 1 and "Candidate 2:\nAnswer: 1" in user
