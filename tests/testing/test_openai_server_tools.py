"""The fake server's function calling over real HTTP (raw JSON bodies, so the wire is what is
checked): the default tool turn, the final answer after a tool message, a scripted multi-turn and
parallel script, arguments sent verbatim, ``tool_choice: none``, streamed tool-call deltas, and
the schemas counted as prompt characters."""

from __future__ import annotations

import json
import math

import aiohttp

from masbench.testing import FakeOpenAIServer, ServerConfig

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},
         {"type": "function", "function": {"name": "read_document", "parameters": {"type": "object"}}}]
USER = {"role": "user", "content": "Where was the founder of the Quillon Institute born, and when?"}


async def _post(server: FakeOpenAIServer, body: dict) -> dict:
    async with aiohttp.ClientSession() as s:
        async with s.post(server.base_url + "/chat/completions", json={"model": "m", **body}) as r:
            assert r.status == 200
            if body.get("stream"):
                return {"events": [json.loads(line[6:]) for line in (await r.text()).splitlines()
                                   if line.startswith("data: {")]}
            return await r.json()


async def test_default_turn_calls_the_first_tool_then_answers_the_tool_result() -> None:
    async with FakeOpenAIServer() as srv:
        first = await _post(srv, {"messages": [USER], "tools": TOOLS})
        (ch,) = first["choices"]
        assert ch["finish_reason"] == "tool_calls" and ch["message"]["content"] is None
        (tc,) = ch["message"]["tool_calls"]
        assert tc == {"id": "call_1_0", "type": "function",
                      "function": {"name": "search", "arguments": json.dumps({"query": USER["content"][:40]})}}
        tool_msg = {"role": "tool", "tool_call_id": tc["id"], "content": "born in Vell, 1871\nsecond line"}
        second = await _post(srv, {"messages": [USER, {"role": "assistant", "content": None, "tool_calls": [tc]},
                                                tool_msg], "tools": TOOLS})
        msg = second["choices"][0]
        assert msg["finish_reason"] == "stop" and msg["message"] == {"role": "assistant",
                                                                     "content": "Answer: born in Vell, 1871"}
        # no tools, or tool_choice none: the usual reply
        plain = await _post(srv, {"messages": [USER]})
        none = await _post(srv, {"messages": [USER], "tools": TOOLS, "tool_choice": "none"})
        for r in (plain, none):
            assert r["choices"][0]["message"]["content"] == ServerConfig().reply
            assert "tool_calls" not in r["choices"][0]["message"]
        assert srv.stats.tools[0] == {"tools": TOOLS, "tool_choice": None} and srv.stats.tools[2]["tools"] is None


async def test_a_script_answers_per_turn_with_parallel_calls_and_verbatim_arguments() -> None:
    script = [{"name": "search", "arguments": {"query": "Quillon"}},
              [{"name": "read_document", "arguments": {"doc_id": "d1"}}, {"name": "search", "arguments": "{not json"}]]
    async with FakeOpenAIServer(tool_script=script) as srv:
        msgs: list[dict] = [USER]
        r1 = (await _post(srv, {"messages": msgs, "tools": TOOLS}))["choices"][0]["message"]
        assert [c["function"] for c in r1["tool_calls"]] == [{"name": "search", "arguments": '{"query": "Quillon"}'}]
        msgs += [{"role": "assistant", "content": None, "tool_calls": r1["tool_calls"]},
                 {"role": "tool", "tool_call_id": "call_1_0", "content": "[d1] Quillon Institute"}]
        r2 = (await _post(srv, {"messages": msgs, "tools": TOOLS}))["choices"][0]["message"]
        assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in r2["tool_calls"]] == [
            ("call_2_0", "read_document", '{"doc_id": "d1"}'), ("call_2_1", "search", "{not json")]
        msgs += [{"role": "assistant", "content": None, "tool_calls": r2["tool_calls"]},
                 {"role": "tool", "tool_call_id": "call_2_0", "content": "Founded by Ada Brun."},
                 {"role": "tool", "tool_call_id": "call_2_1", "content": "error: arguments are not JSON"}]
        r3 = (await _post(srv, {"messages": msgs, "tools": TOOLS}))["choices"][0]
        assert r3["message"]["content"] == "Answer: error: arguments are not JSON" and r3["finish_reason"] == "stop"


async def test_streamed_tool_calls_come_as_deltas_and_schemas_count_as_prompt() -> None:
    script = [[{"name": "search", "arguments": {"query": "a"}}, {"name": "read_document", "arguments": {"doc_id": "b"}}]]
    async with FakeOpenAIServer(tool_script=script) as srv:
        out = await _post(srv, {"messages": [USER], "tools": TOOLS, "stream": True,
                                "stream_options": {"include_usage": True}})
        deltas = [d for e in out["events"] for ch in e["choices"] for d in ch["delta"].get("tool_calls", [])]
        finishes = [ch["finish_reason"] for e in out["events"] for ch in e["choices"] if ch["finish_reason"]]
        assert finishes == ["tool_calls"]
        joined: dict[int, str] = {}
        for d in deltas:
            joined[d["index"]] = joined.get(d["index"], "") + d["function"]["arguments"]
        assert joined == {0: '{"query": "a"}', 1: '{"doc_id": "b"}'} and len(deltas) == 4
        assert [d["function"]["name"] for d in deltas if "id" in d] == ["search", "read_document"]
        usage = out["events"][-1]["usage"]
        plain = await _post(srv, {"messages": [USER]})
    chars = len(USER["content"])
    assert plain["usage"]["prompt_tokens"] == math.ceil(chars / 4)
    assert usage["prompt_tokens"] == math.ceil((chars + len(json.dumps(TOOLS))) / 4)
