"""A program cell's admission, budget, attribution, seeds and tallies (masbench.llm.program_cell),
called directly over a scripted gateway, every expected value worked by hand.

The scripted model (``sim/perfect``, $1 in / $2 out per million tokens) counts a prompt as
⌈characters / 4⌉ + 3 per message and a reply as ⌈characters / 4⌉: "What is 2 plus 2?" (17
characters, one message) is ⌈17/4⌉ + 3 = 8 prompt tokens; "The answer is 4." (16 characters) is 4
completion tokens; one call costs 8·1e-6 + 4·2e-6 = $0.000016."""

from __future__ import annotations

import asyncio
import contextvars
import json

import pytest

from masbench.budget import BudgetMeter
from masbench.llm.program_cell import PASSED_PARAMS, ProgramCell, Refusal
from masbench.llm.scripted import ScriptedGateway
from masbench.spec import Budget, ModelSpec

REPLY = "The answer is 4."
MSGS = "messages must be a non-empty list of {role, content} objects"
Q = [{"role": "user", "content": "What is 2 plus 2?"}]


def _cell(gw, budget: Budget | None = None, agents: list[str] | None = None, seed_base: int = 100,
          max_tokens: int = 10) -> ProgramCell:
    return ProgramCell(gw, BudgetMeter(budget), tags={"run_id": "r", "design": "prog", "task_id": "t1", "seed": 1,
                                                      "purpose": "design"},
                       aliases=["default", "other"], agents=agents or [], default_agent="program",
                       max_tokens=max_tokens, seed_base=seed_base, sim={"gold": ["4"]})


def _gw(script=lambda info: REPLY):
    rows: list = []
    spec = ModelSpec(id="sim/perfect", input_usd_per_mtok=1.0, output_usd_per_mtok=2.0)
    return ScriptedGateway(script, {"default": spec, "other": spec}, sink=rows.append), rows


def _refused(cell: ProgramCell, body: dict, agent: str = "program") -> Refusal:
    with pytest.raises(Refusal) as ei:
        asyncio.run(cell.complete(body, agent))
    return ei.value


@pytest.mark.parametrize("body, status, code, words", [
    ({"model": "gpt-4o", "messages": Q}, 404, "model_not_found", "model 'gpt-4o' is not one this program may call; "
                                                                 "use one of: default, other"),
    ({"model": "default", "messages": []}, 400, "invalid_request_error", MSGS),
    ({"model": "default", "messages": "hi"}, 400, "invalid_request_error", MSGS),
    ({"model": "default", "messages": [{"content": "hi"}]}, 400, "invalid_request_error", MSGS),
    ({"model": "default", "messages": [Q[0], "hi"]}, 400, "invalid_request_error", MSGS),
    ({"model": "default", "messages": Q, "n": 2}, 400, "invalid_request_error", "n must be 1 (send one request per sample: each is metered)"),
    ({"model": "default", "messages": Q, "max_tokens": -3}, 400, "invalid_request_error",
     "max_tokens must be a positive integer, got -3"),
    ({"model": "default", "messages": Q, "max_tokens": "5"}, 400, "invalid_request_error",
     "max_tokens must be a positive integer, got '5'"),
    ({"model": "default", "messages": Q, "temperature": "hot"}, 400, "invalid_request_error",
     "temperature must be a number"),
    ({"model": "default", "messages": Q, "seed": "1"}, 400, "invalid_request_error", "seed must be an integer"),
])
def test_a_malformed_request_is_refused_and_never_sent(body, status, code, words):
    gw, rows = _gw()
    cell = _cell(gw)
    r = _refused(cell, body)
    assert (r.status, r.code, r.message) == (status, code, words)
    assert str(r) == words  # the exception's text is the message (what a log or a traceback shows)
    assert gw.requests == [] and rows == [] and cell.meter.calls == 0


def test_what_is_admitted_and_what_the_gateway_is_sent():
    gw, rows = _gw()
    cell = _cell(gw)
    # n = 1 is one sample; max_completion_tokens wins over max_tokens; a 0.0 temperature is a number;
    # only PASSED_PARAMS go on (user, metadata and store do not)
    body = {"model": "other", "messages": Q, "n": 1, "max_completion_tokens": 7, "max_tokens": 3, "temperature": 0.0,
            "stop": ["\n"], "top_p": 0.5, "user": "someone", "metadata": {"a": 1}, "store": True, "seed": 0}
    res = asyncio.run(cell.complete(body, "program"))
    assert res.text == REPLY
    assert gw.requests[0]["alias"] == "other" and gw.requests[0]["max_tokens"] == 7
    req = json.loads(rows[0].request)
    assert req["max_tokens"] == 7 and req["temperature"] == 0.0 and req["stop"] == ["\n"] and req["top_p"] == 0.5
    assert not {"user", "metadata", "store", "n"} & set(req)
    assert rows[0].sample_index == 0  # an explicit seed 0 is the sample index, not "no seed"
    assert {"stop", "top_p", "tools"} <= set(PASSED_PARAMS) and "user" not in PASSED_PARAMS
    # tags: the cell's, with the agent as its node; the simulator is told the agent
    assert (rows[0].design, rows[0].task_id, rows[0].agent, rows[0].node) == ("prog", "t1", "program", "program")
    # the simulator's metadata: the cell's sim (_cell: gold ["4"]) with the agent and the answer mode added
    assert gw.requests[0]["metadata"] == {"sim": {"gold": ["4"], "agent": "program", "mode": "answer"}}
    # no max tokens in the request: the design's (10)
    asyncio.run(cell.complete({"model": "default", "messages": Q}, "program"))
    assert gw.requests[1]["max_tokens"] == 10


def test_a_request_without_a_seed_counts_the_identical_ones_before_it():
    gw, rows = _gw()
    cell = _cell(gw, seed_base=100)
    a = {"model": "default", "messages": Q}
    b = {"model": "default", "messages": Q, "temperature": 0.7}   # differs only in temperature
    c = {"model": "default", "messages": Q, "max_tokens": 9}      # differs only in max tokens
    d = {"model": "default", "messages": Q, "stop": ["x"]}        # differs only in a passed parameter
    e = {"model": "default", "messages": [{"role": "user", "content": "What is 3 plus 3?"}]}  # only in its messages
    f = {"model": "default", "messages": [{"content": Q[0]["content"], "role": "user"}]}  # a, keys in another order
    for body in (a, a, {**a, "seed": 50}, a, b, b, c, d, {"model": "other", "messages": Q}, e, f):
        asyncio.run(cell.complete(body, "program"))
    # a: 100, 101; the explicit seed 50 does not count; a again: 102; b, b: 100, 101; c, d, other model, e: 100;
    # f is a a fourth time (a JSON object's key order is no difference): 103
    assert [r.sample_index for r in rows] == [100, 101, 50, 102, 100, 101, 100, 100, 100, 100, 103]


def test_a_value_json_cannot_encode_still_gets_a_derived_seed():
    # the endpoint hands the cell parsed JSON, but a Python caller may pass a set: the seed key reads it as its
    # text (as the gateway's calls row does), so the same request twice is the next position, not an error
    gw, rows = _gw()
    cell = _cell(gw, seed_base=100)
    for _ in range(2):
        asyncio.run(cell.complete({"model": "default", "messages": Q, "stop": {"x"}}, "program"))
    assert [r.sample_index for r in rows] == [100, 101]


def test_the_budget_reserves_the_worst_case_and_then_refuses_everything():
    gw, rows = _gw()
    cell = _cell(gw, Budget(per_task_tokens=36), max_tokens=10)
    # worst case of a call: 8 prompt + 10 max tokens = 18; spent: 8 + 4 = 12
    # call 1: 0 + 18 ≤ 36 → made (spent 12); call 2: 12 + 18 = 30 ≤ 36 → made (24); call 3: 24 + 18 = 42 > 36
    for _ in range(2):
        asyncio.run(cell.complete({"model": "default", "messages": Q}, "solver"))
    r = _refused(cell, {"model": "default", "messages": Q}, "solver")
    assert (r.status, r.code) == (403, "budget_exhausted")
    assert r.message == ("masbench budget exhausted: this task's budget (36 tokens (tokens)) cannot fit this request's "
                         "worst case (prompt + max_tokens); spent 24 tokens, $0.000032, 2 calls (cap hit: tokens). "
                         "No further request of this task will be made.")
    # exhausted: a call that would fit (8 + 1 = 9 ≤ 12 left) is refused too, and never sent
    r = _refused(cell, {"model": "default", "messages": Q, "max_tokens": 1}, "critic")
    assert r.code == "budget_exhausted"
    assert _refused(cell, {"model": "default", "messages": Q}, "solver").code == "budget_exhausted"  # solver again
    assert len(rows) == 2 and len(gw.requests) == 2
    assert (cell.by_agent["solver"].calls, cell.by_agent["solver"].refused) == (2, 2)
    assert (cell.by_agent["critic"].calls, cell.by_agent["critic"].refused) == (0, 1)
    # the meter records the one refusal that exhausted it, where it was made (the agent)
    assert [(x["where"], x["cap"]) for x in cell.meter.refused] == [("solver", "tokens")]
    assert cell.totals == (16, 8, pytest.approx(0.000032), 2)


def test_the_budget_message_names_every_cap_set():
    gw, _ = _gw()
    cell = _cell(gw, Budget(per_task_tokens=1000, per_task_usd=0.00002, per_task_calls=5), max_tokens=4)
    asyncio.run(cell.complete({"model": "default", "messages": Q}, "program"))  # $0.000016 spent
    # worst case of the next: 8 · 1e-6 + 4 · 2e-6 = $0.000016; 0.000016 + 0.000016 > 0.00002
    r = _refused(cell, {"model": "default", "messages": Q}, "program")
    assert "budget (1000 tokens (tokens), $2e-05, 5 calls)" in r.message
    assert "spent 12 tokens, $0.000016, 1 calls" in r.message and "cap hit: usd" in r.message


def test_the_budget_message_leaves_out_the_caps_not_set():
    gw, _ = _gw()
    cell = _cell(gw, Budget(per_task_usd=0.00002), max_tokens=4)
    asyncio.run(cell.complete({"model": "default", "messages": Q}, "program"))  # $0.000016 spent, 12 tokens
    # only a USD cap: the budget names it alone (no token or call cap, and no empty entries)
    assert _refused(cell, {"model": "default", "messages": Q}, "program").message == (
        "masbench budget exhausted: this task's budget ($2e-05) cannot fit this request's worst case "
        "(prompt + max_tokens); spent 12 tokens, $0.000016, 1 calls (cap hit: usd). "
        "No further request of this task will be made.")


@pytest.mark.parametrize("agents, named, user, expected", [
    (["solver", "critic"], "critic", "solver", "critic"),       # the named agent wins over the user field
    (["solver", "critic"], None, "solver", "solver"),           # a user field that is an agent
    (["solver", "critic"], None, "someone", "program"),         # one that is not: the default
    (["solver", "critic"], None, 7, "program"),                 # not a string
    (["solver", "critic"], "", "critic", "critic"),             # an empty header names nobody
    ([], "anyone", None, "anyone"),                             # no agents declared: any name
    ([], None, "critic", "critic"),                             # and any identifier as the user field
    ([], None, "end-user-7", "program"),                        # but not a user id that is no identifier
    ([], None, "", "program"),
])
def test_attribution(agents, named, user, expected):
    gw, _ = _gw()
    assert _cell(gw, agents=agents).agent_of(named, user) == expected


def test_a_named_agent_the_program_did_not_declare_is_refused():
    gw, _ = _gw()
    with pytest.raises(Refusal) as ei:
        _cell(gw, agents=["solver", "critic"]).agent_of("solvr", None)
    assert (ei.value.status, ei.value.code) == (400, "unknown_agent")
    assert ei.value.message == "agent 'solvr' is not one of this program's agents (solver, critic)"


def test_tallies_per_agent():
    gw, rows = _gw()
    cell = _cell(gw, agents=["solver", "critic"])
    for agent in ("solver", "critic", "solver"):
        asyncio.run(cell.complete({"model": "default", "messages": Q}, agent))
    s, c = cell.by_agent["solver"], cell.by_agent["critic"]
    assert (s.calls, s.prompt, s.completion, s.tokens) == (2, 16, 8, 24)
    assert (c.calls, c.prompt, c.completion, c.tokens) == (1, 8, 4, 12)
    assert s.cost == pytest.approx(0.000032) and c.cost == pytest.approx(0.000016)
    assert s.latency_s == pytest.approx(rows[0].latency_s + rows[2].latency_s)
    assert s.models == ["sim/perfect"] and s.errors == 0 and s.last_error is None
    assert s.t_start is not None and s.t_end is not None and s.t_start <= c.t_start <= s.t_end  # type: ignore[operator]
    assert cell.totals == (24, 12, pytest.approx(0.000048), 3)
    assert cell.simulated  # the scripted model's replies are flagged simulated


def test_a_failed_model_call_is_counted_and_refused_as_a_model_error():
    def script(info):
        raise ValueError("the model fell over")

    gw, rows = _gw(script)
    cell = _cell(gw)
    r = _refused(cell, {"model": "default", "messages": Q})
    assert (r.status, r.code) == (502, "model_error")
    assert r.message == f"the model call failed after the gateway's retries: {rows[0].error}"
    assert "the model fell over" in rows[0].error
    t = cell.by_agent["program"]
    assert (t.calls, t.errors) == (1, 1) and "the model fell over" in (t.last_error or "")
    assert len(rows) == 1 and rows[0].status == "error"
    assert _refused(cell, {"model": "default", "messages": Q}).code == "model_error"  # a second failure: counted too
    assert (t.calls, t.errors, t.failed) == (2, 2, 2) and len(rows) == 2


def test_drain_waits_for_the_calls_in_flight():
    release = asyncio.Event()

    async def main():
        gw, _ = _gw()
        cell = _cell(gw)
        assert await cell.drain(0.01) is True  # nothing in flight
        inner = gw.script_backend

        async def held(a):
            await release.wait()
            return await inner(a)

        gw.backend = held
        task = asyncio.create_task(cell.complete({"model": "default", "messages": Q}, "program"))
        await asyncio.sleep(0.05)
        assert await cell.drain(0.05) is False  # one call still held
        release.set()
        assert await cell.drain(5) is True
        return (await task).text

    assert asyncio.run(main()) == REPLY


def test_simulated_is_set_by_any_simulated_reply_and_stays():
    gw, _ = _gw()
    cell = _cell(gw)
    assert cell.simulated is False  # no call yet
    inner = gw.script_backend
    flags = iter([False, True, False])  # the replies' simulated flags, in call order

    async def flagged(a):
        r = await inner(a)
        r.simulated = next(flags)
        return r

    gw.backend = flagged
    seen = []
    for _ in range(3):
        asyncio.run(cell.complete({"model": "default", "messages": Q, "seed": len(seen)}, "program"))
        seen.append(cell.simulated)
    assert seen == [False, True, True]  # one simulated reply marks the cell; a later real one does not clear it


def test_calls_run_in_a_copy_of_the_cells_context():
    span = contextvars.ContextVar("span", default="the handler's")
    seen: list[str] = []

    def script(info):
        seen.append(span.get())
        span.set("set inside the call")  # must not leak into the cell's context
        return REPLY

    gw, _ = _gw(script)
    cell = _cell(gw)
    asyncio.run(cell.complete({"model": "default", "messages": Q, "seed": 0}, "program"))  # no context: the caller's
    ctx = contextvars.copy_context()
    ctx.run(span.set, "the workflow's")
    cell.context = ctx
    asyncio.run(cell.complete({"model": "default", "messages": Q, "seed": 1}, "program"))
    assert seen == ["the handler's", "the workflow's"]
    assert ctx[span] == "the workflow's"


def test_drain_counts_every_call_in_flight():
    async def main():
        gw, _ = _gw()
        cell = _cell(gw)
        inner = gw.script_backend
        gates = {0: asyncio.Event(), 1: asyncio.Event()}  # each call (by its seed) waits for its own gate

        async def held(a):
            await gates[a.sample_index].wait()
            return await inner(a)

        gw.backend = held
        first, second = (asyncio.create_task(cell.complete({"model": "default", "messages": Q, "seed": i}, "program"))
                         for i in (0, 1))
        await asyncio.sleep(0.05)
        gates[0].set()
        await first
        assert await cell.drain(0.05) is False  # two were in flight, one finished: one is left
        gates[1].set()
        await second
        return await cell.drain(5)

    assert asyncio.run(main()) is True
