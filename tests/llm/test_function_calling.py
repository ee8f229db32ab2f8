"""Function calling end to end over real HTTP on 127.0.0.1: the gateway through litellm against the
fake OpenAI-compatible server. Tool calls come back in ``CallResult.tool_calls`` (one, several in
parallel, streamed), a two-turn exchange reaches the final text, the transcript and the call row
show them, a cache hit restores them, the budget's worst case counts the schemas sent, and the
``openai`` SDK reads the same tool calls from the same server."""

from __future__ import annotations

import json

from masbench.budget import BudgetMeter
from masbench.llm import Gateway, ResponseCache, TranscriptRecorder, metered_call
from masbench.llm.litellm_backend import EmbeddedBackend
from masbench.spec import Budget, ModelSpec
from masbench.store import StoreWriter

QUESTION = "Which river runs past the Quillon Institute founded by Ada Brun?"
TOOLS = [
    {"type": "function", "function": {"name": "search", "description": "Search the corpus for documents.",
                                      "parameters": {"type": "object", "properties": {
                                          "query": {"type": "string"}, "k": {"type": "integer"}},
                                          "required": ["query"]}}},
    {"type": "function", "function": {"name": "read_document", "description": "Read one document in full.",
                                      "parameters": {"type": "object", "properties": {"doc_id": {"type": "string"}},
                                                     "required": ["doc_id"]}}},
]
TAGS = {"run_id": "fc", "purpose": "design", "design": "react", "task_id": "t1", "seed": 0, "node": "act",
        "agent": "searcher"}


def _model(srv, **kw) -> ModelSpec:
    return ModelSpec(id="openai/fake-model", api_base=srv.base_url, price=0, function_calling=True, **kw)


def _gateway(srv, store=None, **kw) -> tuple[Gateway, StoreWriter | None]:
    if store is None:
        return Gateway({"m": _model(srv)}, **kw), None
    w = StoreWriter(store)
    return Gateway({"m": _model(srv)}, sink=w.put, transcripts=TranscriptRecorder(w.put), **kw), w


def _user() -> list[dict]:
    return [{"role": "system", "content": "Use the tools."}, {"role": "user", "content": QUESTION}]


async def test_a_tool_call_comes_back_and_the_second_turn_answers_from_the_tool_result(http_server, store):
    srv = http_server()
    gw, w = _gateway(srv, store)
    assert w is not None
    first = await gw.complete("m", _user(), max_tokens=64, tags=TAGS,
                              params={"tools": TOOLS, "tool_choice": "auto"})
    assert first.ok and first.status == "ok" and first.finish_reason == "tool_calls" and first.text == ""
    (tc,) = first.tool_calls or []
    assert tc["type"] == "function" and tc["function"]["name"] == "search" and tc["id"] == "call_1_0"
    assert json.loads(tc["function"]["arguments"]) == {"query": QUESTION[:40]}
    # what reached the server: both schemas and the choice, through litellm's kwargs
    assert srv.stats.tools[0] == {"tools": TOOLS, "tool_choice": "auto"}

    convo = _user() + [{"role": "assistant", "content": None, "tool_calls": first.tool_calls},
                       {"role": "tool", "tool_call_id": tc["id"], "content": "[d7] Quillon Institute — on the Vell\n…"}]
    final = await gw.complete("m", convo, max_tokens=64, tags=TAGS, params={"tools": TOOLS, "tool_choice": "auto"})
    assert final.ok and final.tool_calls is None and final.finish_reason == "stop"
    assert final.text == "Answer: [d7] Quillon Institute — on the Vell"
    # the server saw the assistant's tool call and the tool message as sent
    assert srv.stats.messages[1][2]["tool_calls"][0]["id"] == tc["id"]
    assert srv.stats.messages[1][3] == {"role": "tool", "tool_call_id": tc["id"], "content": convo[3]["content"]}
    w.flush()

    # the call rows: finish reason, status and the request's tool names (never the schemas)
    rows = store.sql("SELECT call_id, status, finish_reason, request FROM calls WHERE run_id = 'fc' ORDER BY t_start")
    assert [(r[1], r[2]) for r in rows] == [("ok", "tool_calls"), ("ok", "stop")]
    req = json.loads(rows[0][3])
    assert req["tools"] == ["search", "read_document"] and req["tool_choice"] == "auto" and req["max_tokens"] == 64
    assert "parameters" not in rows[0][3] and "Search the corpus" not in rows[0][3]

    # the transcripts: the first reply's tool calls in its output row's extra (content ""), the
    # second call's request rows keep the assistant tool_calls and the tool message's id
    out = store.sql("SELECT m.extra, t.text FROM call_messages m JOIN texts t USING (text_hash) "
                    "WHERE call_id = ? AND direction = 'output'", [first.call_id])
    assert out == [(json.dumps({"tool_calls": first.tool_calls}, separators=(",", ":")), "")]
    ins = store.sql("SELECT position, role, extra FROM call_messages WHERE call_id = ? AND direction = 'input' "
                    "ORDER BY position", [final.call_id])
    assert [r[1] for r in ins] == ["system", "user", "assistant", "tool"]
    assert json.loads(ins[2][2]) == {"tool_calls": first.tool_calls}
    assert json.loads(ins[3][2]) == {"tool_call_id": tc["id"]}
    (final_out,) = store.sql("SELECT extra FROM call_messages WHERE call_id = ? AND direction = 'output'",
                             [final.call_id])
    assert final_out == (None,)


async def test_parallel_tool_calls_arrive_as_several_entries_whole_and_streamed(http_server):
    script = [[{"name": "search", "arguments": {"query": "Quillon Institute"}},
               {"name": "search", "arguments": {"query": "Ada Brun", "k": 3}},
               {"name": "read_document", "arguments": {"doc_id": "d7"}}]]
    srv = http_server(tool_script=script)
    gw, _ = _gateway(srv)
    for stream in (False, True):
        extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
        res = await gw.complete("m", _user(), max_tokens=64, params={"tools": TOOLS, **extra})
        assert res.ok and res.finish_reason == "tool_calls", (stream, res.error)
        calls = res.tool_calls or []
        assert [c["function"]["name"] for c in calls] == ["search", "search", "read_document"], stream
        assert [json.loads(c["function"]["arguments"]) for c in calls] == [e["arguments"] for e in script[0]]
        assert len({c["id"] for c in calls}) == 3 and res.usage is not None and res.usage.prompt_tokens > 0


async def test_a_cache_hit_restores_the_tool_calls_and_other_tools_miss(http_server, tmp_path, store):
    srv = http_server()
    cache = ResponseCache(tmp_path / "c.sqlite")
    gw, w = _gateway(srv, store, cache=cache)
    assert w is not None
    a = await gw.complete("m", _user(), max_tokens=64, tags=TAGS, params={"tools": TOOLS})
    b = await gw.complete("m", _user(), max_tokens=64, tags=TAGS, params={"tools": TOOLS})
    assert not a.cache_hit and b.cache_hit and srv.stats.requests == 1
    assert b.tool_calls == a.tool_calls and b.tool_calls and b.status == "ok" and b.finish_reason == "tool_calls"
    # another tool list, or none, is another request: the cache misses
    c = await gw.complete("m", _user(), max_tokens=64, tags=TAGS, params={"tools": TOOLS[1:]})
    d = await gw.complete("m", _user(), max_tokens=64, tags=TAGS)
    assert not c.cache_hit and not d.cache_hit and srv.stats.requests == 3
    assert (c.tool_calls or [{}])[0]["function"]["name"] == "read_document" and d.tool_calls is None
    w.flush()
    # the hit's transcript keeps its tool calls too
    (extra,) = store.sql("SELECT extra FROM call_messages WHERE call_id = ? AND direction = 'output'", [b.call_id])
    assert json.loads(extra[0]) == {"tool_calls": a.tool_calls}
    cache.close()


async def test_the_budget_counts_the_schemas_sent_before_the_call(http_server):
    srv = http_server()
    gw, _ = _gateway(srv)
    msgs = _user()
    bare, with_tools = gw.prompt_token_bound("m", msgs), gw.prompt_token_bound("m", msgs, TOOLS)
    assert with_tools > bare
    # the worst case without the schemas would not bound what the provider bills for them
    res = await gw.complete("m", msgs, max_tokens=64, params={"tools": TOOLS})
    assert res.usage is not None and bare < res.usage.prompt_tokens <= with_tools
    # a cap that fits the call without tools refuses it with them, before anything is sent
    n = srv.stats.requests
    meter = BudgetMeter(Budget(per_task_tokens=with_tools + 64 - 1))
    assert await metered_call(gw, meter, "m", msgs, max_tokens=64, temperature=None, sample_index=0, tags={},
                              params={"tools": TOOLS}) is None
    assert srv.stats.requests == n and meter.refused[0]["worst_tokens"] == with_tools + 64
    meter = BudgetMeter(Budget(per_task_tokens=with_tools + 64))
    got = await metered_call(gw, meter, "m", msgs, max_tokens=64, temperature=None, sample_index=0, tags={},
                             params={"tools": TOOLS})
    assert got is not None and got.tool_calls and meter.calls == 1 and meter.prompt == got.prompt_tokens


async def test_supports_tools_honours_the_yaml_then_the_backend(http_server):
    srv = http_server()
    gw = Gateway({"yes": _model(srv), "unset": _model(srv).model_copy(update={"function_calling": None}),
                  "no": ModelSpec(id="openai/gpt-4o-mini", price=0, function_calling=False),
                  "mapped": ModelSpec(id="openai/gpt-4o-mini", price=0),
                  "unknown": ModelSpec(id="openai/not-a-model-xyz", price=0)})
    assert gw.supports_tools("yes") is True and gw.supports_tools("no") is False
    assert gw.supports_tools("unset") is False  # an api_base server says nothing: only its YAML can
    assert gw.supports_tools("mapped") is True  # litellm's capability map
    assert gw.supports_tools("unknown") is False  # not in the map: no, and no exception
    # the embedded model has none (asked of its backend: no model is loaded)
    assert EmbeddedBackend().supports_tools(ModelSpec(id="embedded/smollm2-360m", price=0)) is False


async def test_the_openai_sdk_reads_the_same_tool_calls_from_the_server(http_server):
    import openai

    srv = http_server()
    client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="sk-no-key", max_retries=0)
    resp = await client.chat.completions.create(model="fake-model", messages=_user(), tools=TOOLS,  # type: ignore[arg-type]
                                                tool_choice="auto", max_tokens=64)
    await client.close()
    choice = resp.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    (tc,) = choice.message.tool_calls or []
    assert tc.function.name == "search" and json.loads(tc.function.arguments) == {"query": QUESTION[:40]}  # type: ignore[union-attr]
