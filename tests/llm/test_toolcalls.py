"""Tool calls on the wire without a server: the OpenAI shape read from objects and dicts alike,
streamed deltas joined by index, the request's tool names (what ``calls.request`` keeps), the
cache key over tools, and the budget's worst case counting the schemas on a scripted gateway."""

from __future__ import annotations

import json
from types import SimpleNamespace as NS

import pytest

from masbench.budget import BudgetMeter
from masbench.llm import cache_key, metered_call
from masbench.llm.record import request_json
from masbench.llm.scripted import ScriptedGateway
from masbench.llm.toolcalls import DeltaAssembler, normalize, schema_bytes, tool_names
from masbench.spec import Budget, ModelSpec

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
    "query": {"type": "string"}}}}}, {"type": "function", "function": {"name": "calculator", "parameters": {}}}]


def test_normalize_reads_objects_and_dicts_into_the_openai_shape():
    objs = [NS(id="call_a", type="function", function=NS(name="search", arguments='{"query": "x"}')),
            {"id": None, "function": {"name": "calculator", "arguments": {"expr": "6*7"}}},
            {"id": "call_c", "function": {"name": "", "arguments": "{}"}},  # no name: nothing to call
            NS(id="call_d", function=NS(name="read_document", arguments=None))]
    assert normalize(objs) == [
        {"id": "call_a", "type": "function", "function": {"name": "search", "arguments": '{"query": "x"}'}},
        {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": '{"expr": "6*7"}'}},
        {"id": "call_d", "type": "function", "function": {"name": "read_document", "arguments": ""}}]
    assert normalize(None) is None and normalize([]) is None and normalize([{"function": {}}]) is None


def test_streamed_deltas_join_by_index_whatever_their_order():
    asm = DeltaAssembler()
    asm.add([NS(index=1, id="call_y", function=NS(name="read_document", arguments='{"doc_'))])
    asm.add([{"index": 0, "id": "call_x", "function": {"name": "search", "arguments": ""}}])
    asm.add([{"index": 0, "function": {"arguments": '{"query":'}}, {"index": 1, "function": {"arguments": 'id": "d1"}'}}])
    asm.add(None)
    asm.add([NS(index=0, id=None, function=NS(name=None, arguments=' "q"}'))])
    got = asm.result()
    assert got == [{"id": "call_x", "type": "function", "function": {"name": "search", "arguments": '{"query": "q"}'}},
                   {"id": "call_y", "type": "function",
                    "function": {"name": "read_document", "arguments": '{"doc_id": "d1"}'}}]
    assert DeltaAssembler().result() is None


def test_the_request_row_keeps_tool_names_and_choice_never_schemas():
    req = {"temperature": 0.0, "tools": TOOLS, "tool_choice": "auto", "api_key": "sk-x"}
    assert tool_names(TOOLS) == ["search", "calculator"]
    assert json.loads(request_json(req) or "") == {"temperature": 0.0, "tools": ["search", "calculator"],
                                                   "tool_choice": "auto"}
    forced = {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "search"}}}
    assert json.loads(request_json(forced) or "")["tool_choice"]["function"]["name"] == "search"
    assert "properties" not in (request_json(req) or "")


def test_the_request_row_is_encoded_as_each_call_set_it_whatever_came_before():
    # equal-comparing values of other types (1, 1.0, True) or other lists come out as their own
    # JSON, and a dict value still encodes, however often and in whatever order they are asked for
    cases = [({"temperature": 1, "stop": ["a"]}, '{"stop": ["a"], "temperature": 1}'),
             ({"temperature": 1.0, "stop": ["a"]}, '{"stop": ["a"], "temperature": 1.0}'),
             ({"temperature": True}, '{"temperature": true}'),
             ({"stop": [1]}, '{"stop": [1]}'), ({"stop": [1.0]}, '{"stop": [1.0]}'),
             ({"stop": ["a", "b"]}, '{"stop": ["a", "b"]}'),
             ({"response_format": {"type": "json_object"}}, '{"response_format": {"type": "json_object"}}'),
             ({"max_tokens": None}, None)]
    for _ in range(2):
        assert [request_json(req) for req, _ in cases] == [want for _, want in cases]


def test_the_cache_key_covers_the_tools():
    msgs = [{"role": "user", "content": "q"}]
    k = [cache_key("openai/m", None, msgs, p, 0) for p in ({}, {"tools": TOOLS}, {"tools": TOOLS[:1]},
                                                           {"tools": TOOLS, "tool_choice": "required"})]
    assert len(set(k)) == 4
    assert k[1] == cache_key("openai/m", None, msgs, {"tools": json.loads(json.dumps(TOOLS))}, 0)


@pytest.mark.slow
async def test_the_worst_case_reserved_counts_the_schemas():
    spec = ModelSpec(id="sim/perfect", price=0)
    gw = ScriptedGateway(lambda info: "Answer: 4", {"m": spec})
    msgs = [{"role": "user", "content": "What is 2 + 2?"}]
    bare = gw.prompt_token_bound("m", msgs)
    extra = gw.provider(spec).tools_token_bound(spec, TOOLS)
    assert extra > 0 and gw.prompt_token_bound("m", msgs, TOOLS) == bare + extra
    assert schema_bytes(TOOLS) == len(json.dumps(TOOLS, separators=(",", ":")).encode()) and schema_bytes(None) == 0
    # exactly the worst case without tools fits; with them the call is refused before it is made
    meter = BudgetMeter(Budget(per_task_tokens=bare + 20))
    assert await metered_call(gw, meter, "m", msgs, max_tokens=20, temperature=None, sample_index=0, tags={},
                              params={"tools": TOOLS}) is None
    assert meter.refused[0]["worst_tokens"] == bare + extra + 20 and gw.stats["calls"] == 0
    meter = BudgetMeter(Budget(per_task_tokens=bare + 20))
    assert await metered_call(gw, meter, "m", msgs, max_tokens=20, temperature=None, sample_index=0,
                              tags={}) is not None


async def test_a_script_can_answer_with_tool_calls():
    calls = [{"type": "function", "function": {"name": "search", "arguments": '{"query": "q"}'}}]
    gw = ScriptedGateway(lambda info: calls if info["tools"] == ["search", "calculator"] else "Answer: 4")
    res = await gw.complete("default", [{"role": "user", "content": "q"}], max_tokens=50,
                            params={"tools": TOOLS, "tool_choice": "auto"})
    assert res.status == "ok" and res.finish_reason == "tool_calls" and res.text == ""
    assert res.tool_calls == [{"id": "call_0", **calls[0]}]
    assert gw.requests[0]["tool_choice"] == "auto"
    plain = await gw.complete("default", [{"role": "user", "content": "q"}], max_tokens=50)
    assert plain.text == "Answer: 4" and plain.tool_calls is None and gw.requests[1]["tools"] == []
