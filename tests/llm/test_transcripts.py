"""Call transcripts: what the gateway sent and got back, read back from the store exactly, on the
scripted backend and over real HTTP; texts stored once; the modes; keys and headers never stored."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from masbench.llm import MESSAGE_EXTRA, ResponseCache, ScriptedGateway, TranscriptRecorder
from masbench.llm.gateway import Gateway
from masbench.llm.record import REQUEST_PARAMS
from masbench.spec import ModelSpec
from masbench.store import TABLES, CallRow, MessageRow, Store, StoreWriter, TextRow, text_hash

CANARY = "sk-canary-5d1e9a7c3b2f40e8a6d4"
HEADER_CANARY = "hdr-canary-0a9b8c7d6e5f"


def transcript(store: Store, call_id: str) -> tuple[list[dict[str, Any]], str | None]:
    """A call's request messages and reply, rebuilt from call_messages ⋈ texts alone."""
    rows = store.sql("SELECT direction, position, role, content_type, extra, t.text FROM call_messages m "
                     "JOIN texts t USING (text_hash) WHERE call_id = ? ORDER BY direction, position", [call_id])
    msgs: list[dict[str, Any]] = []
    reply = None
    for direction, position, role, ctype, extra, text in rows:
        if direction == "output":
            assert position == 0 and role == "assistant" and ctype == "text"
            reply = text
            continue
        assert position == len(msgs)
        m: dict[str, Any] = {"role": role, "content": json.loads(text) if ctype == "json" else text}
        m.update(json.loads(extra) if extra else {})
        msgs.append(m)
    return msgs, reply


def kept(m: dict[str, Any]) -> dict[str, Any]:
    """A sent message as a transcript keeps it: role, content and the MESSAGE_EXTRA fields."""
    return {k: v for k, v in m.items() if k in ("role", "content", *MESSAGE_EXTRA)}


def every_table_text(store: Store) -> str:
    """Every value of every table, as text (what a byte grep of a compressed file could miss)."""
    return "\n".join(repr(store.sql(f"SELECT * FROM {t}")) for t in TABLES)


TOOL_CALL = [{"id": "call_1", "type": "function", "function": {"name": "calc", "arguments": "{\"x\": 2}"}}]
CONVERSATIONS = [
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "2+2?"}],
    [{"role": "user", "content": [{"type": "text", "text": "parts: 3+3?"}, {"type": "text", "text": "ünï"}]}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "call a tool", "name": "alice"},
     {"role": "assistant", "content": None, "tool_calls": TOOL_CALL},
     {"role": "tool", "content": "4", "tool_call_id": "call_1", "api_key": CANARY, "x-junk": 1}],
    [{"role": "user", "content": ""}],
]


async def test_scripted_transcripts_reproduce_what_the_gateway_sent(store):
    w = StoreWriter(store)
    gw = ScriptedGateway(lambda info: f"reply to {len(info['messages'])} message(s)", sink=w.put,
                         transcripts=TranscriptRecorder(w.put))
    results = [await gw.complete("default", m, tags={"run_id": "r", "design": "d", "task_id": f"t{i}", "seed": 0,
                                                    "purpose": "design"})
               for i, m in enumerate(CONVERSATIONS)]
    w.flush()
    assert len(gw.requests) == len(CONVERSATIONS)
    for sent, res in zip(gw.requests, results):
        msgs, reply = transcript(store, res.call_id)
        assert msgs == [kept(m) for m in sent["messages"]]  # in order, content exactly, extras exactly
        assert reply == res.text
    # the cell tags of the call are on its messages; the non-string contents are json rows
    assert store.sql("SELECT DISTINCT run_id, purpose, design, seed FROM call_messages") == [("r", "design", "d", 0)]
    types = dict(store.sql("SELECT text, content_type FROM call_messages JOIN texts USING (text_hash) "
                           "WHERE direction = 'input' AND role IN ('user', 'assistant') AND task_id IN ('t1', 't2')"))
    assert types == {json.dumps(CONVERSATIONS[1][0]["content"], ensure_ascii=False, separators=(",", ":")): "json",
                     "call a tool": "text", "null": "json"}
    # the shared system prompt is one text; a field outside MESSAGE_EXTRA never enters
    assert store.sql("SELECT count(*) FROM texts WHERE text = 'You are terse.'")[0][0] == 1
    assert CANARY not in every_table_text(store) and "x-junk" not in every_table_text(store)


async def test_k_samples_of_one_prompt_store_the_prompt_once(store):
    w = StoreWriter(store)
    rec = TranscriptRecorder(w.put)
    gw = ScriptedGateway(lambda info: f"sample {info['sample_index'] % 2}", sink=w.put, transcripts=rec)
    prompt = [{"role": "system", "content": "sys " * 50}, {"role": "user", "content": "the question"}]
    k = 7
    await asyncio.gather(*[gw.complete("default", prompt, sample_index=i, tags={"task_id": "t"}) for i in range(k)])
    w.flush()
    assert store.sql("SELECT count(*) FROM calls")[0][0] == k
    assert store.sql("SELECT count(*) FROM call_messages")[0][0] == k * 3
    # two prompt texts and two distinct replies: four texts in all, each once
    assert store.sql("SELECT count(*), count(DISTINCT text) FROM texts")[0] == (4, 4)
    assert store.sql("SELECT count(*) FROM texts WHERE text = 'the question'")[0][0] == 1
    assert rec.texts == 4 and rec.messages == k * 3
    # the same texts from another recorder (another process, a resumed run) are still stored once
    w2 = StoreWriter(store)
    gw2 = ScriptedGateway(lambda info: "sample 0", sink=w2.put, transcripts=TranscriptRecorder(w2.put))
    await gw2.complete("default", prompt, tags={"task_id": "t"})
    w2.flush()
    assert store.sql("SELECT count(*) FROM texts")[0][0] == 4
    assert store.sql("SELECT count(*) FROM call_messages")[0][0] == (k + 1) * 3


def _flaky(info: dict[str, Any]) -> str:
    if "fail" in info["messages"][-1]["content"]:
        raise ValueError("bad request (scripted)")  # not retryable: the call fails
    return "" if "empty" in info["messages"][-1]["content"] else "fine"


@pytest.mark.parametrize("mode", ["full", "errors", "none"])
async def test_the_mode_decides_which_calls_keep_a_transcript(store, mode):
    w = StoreWriter(store)
    gw = ScriptedGateway(_flaky, sink=w.put, transcripts=TranscriptRecorder(w.put, mode))
    for q in ("ok 1", "please fail", "ok 2", "empty reply", "fail again"):
        await gw.complete("default", [{"role": "user", "content": q}])
    w.flush()
    statuses = dict(store.sql("SELECT call_id, status FROM calls"))
    assert sorted(statuses.values()) == ["empty", "error", "error", "ok", "ok"]
    with_messages = {c for c, in store.sql("SELECT DISTINCT call_id FROM call_messages")}
    want = {"full": set(statuses), "errors": {c for c, s in statuses.items() if s != "ok"}, "none": set()}[mode]
    assert with_messages == want
    # a failed call got no reply: its request only; an empty reply is a reply ("")
    outputs = dict(store.sql("SELECT call_id, t.text FROM call_messages JOIN texts t USING (text_hash) "
                             "WHERE direction = 'output'"))
    assert set(outputs) == {c for c in want if statuses[c] != "error"}
    assert all(outputs[c] == "" for c in outputs if statuses[c] == "empty")
    if mode == "none":
        assert store.sql("SELECT count(*) FROM texts")[0][0] == 0


async def test_cache_hits_record_their_transcript_and_requests_keep_only_allowed_params(store, tmp_path):
    w = StoreWriter(store)
    cache = ResponseCache(tmp_path / "c.sqlite")
    spec = ModelSpec(id="sim/perfect", input_usd_per_mtok=1.0, output_usd_per_mtok=2.0,
                     params={"top_p": 0.5, "api_key": CANARY, "extra_headers": {"X-Key": HEADER_CANARY},
                             "api_base": "http://secret.invalid", "metadata": {"k": CANARY}})
    gw = ScriptedGateway(lambda info: "cached reply", models={"default": spec}, cache=cache, sink=w.put,
                         transcripts=TranscriptRecorder(w.put))
    msgs = [{"role": "user", "content": "same"}]
    a = await gw.complete("default", msgs, temperature=0.3, max_tokens=9, params={"stop": ["\n"], "seed": 4,
                                                                                  "headers": {"X": CANARY}})
    b = await gw.complete("default", msgs, temperature=0.3, max_tokens=9, params={"stop": ["\n"], "seed": 4,
                                                                                  "headers": {"X": CANARY}})
    w.flush()
    cache.close()
    assert not a.cache_hit and b.cache_hit and len(gw.requests) == 1
    for res in (a, b):
        assert transcript(store, res.call_id) == (msgs, "cached reply")
    assert store.sql("SELECT count(*) FROM texts")[0][0] == 2
    rows = store.sql("SELECT request, t_start, ts, latency_s FROM calls ORDER BY t_start")
    for request, t_start, ts, latency in rows:
        assert json.loads(request) == {"max_tokens": 9, "seed": 4, "stop": ["\n"], "temperature": 0.3, "top_p": 0.5}
        assert set(json.loads(request)) <= set(REQUEST_PARAMS)
        assert t_start <= ts and ts - t_start >= latency - 1e-3
    text = every_table_text(store)
    assert CANARY not in text and HEADER_CANARY not in text and "secret.invalid" not in text


def test_the_recorder_alone_sends_each_text_once_and_rejects_an_unknown_mode():
    got: list[Any] = []
    rec = TranscriptRecorder(got.append)
    call = CallRow(call_id="c1", run_id="r", purpose="pool", design="p", task_id="t", seed=1, status="ok")
    assert rec.record(call, [{"role": "user", "content": "q"}, {"role": "user", "content": "q"}], "q") == 3
    texts = [r for r in got if isinstance(r, TextRow)]
    msgs = [r for r in got if isinstance(r, MessageRow)]
    assert texts == [TextRow(text_hash=text_hash("q"), text="q", chars=1)]
    assert [(m.direction, m.position, m.role) for m in msgs] == [("input", 0, "user"), ("input", 1, "user"),
                                                                 ("output", 0, "assistant")]
    assert {(m.run_id, m.purpose, m.design, m.task_id, m.seed) for m in msgs} == {("r", "pool", "p", "t", 1)}
    assert TranscriptRecorder(got.append, "errors").record(call, [{"role": "user", "content": "x"}], "y") == 0
    with pytest.raises(ValueError, match="unknown transcripts mode"):
        TranscriptRecorder(got.append, "some")  # pyright: ignore[reportArgumentType]


# ----- over real HTTP -----------------------------------------------------------------------------
async def test_http_transcripts_match_what_the_server_received_and_no_key_is_stored(http_server, store, tmp_path,
                                                                                    monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("MASBENCH_CANARY_KEY", CANARY)
    ok = http_server(reply="Answer: {n}")
    bad = http_server(fail_rate=1.0, fail_kinds=("500",))
    headers = {"extra_headers": {"X-Canary": HEADER_CANARY}}
    models = {
        "ok": ModelSpec(id="openai/m", api_base=ok.base_url, api_key_env="MASBENCH_CANARY_KEY", params=headers,
                        input_usd_per_mtok=1.0, output_usd_per_mtok=2.0),
        "env": ModelSpec(id="openai/m2", api_base=ok.base_url, price=0),  # litellm reads OPENAI_API_KEY itself
        "bad": ModelSpec(id="openai/m3", api_base=bad.base_url, api_key_env="MASBENCH_CANARY_KEY", max_attempts=2,
                         price=0, params=headers),
    }
    w = StoreWriter(store)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    gw = Gateway(models, cache=cache, sink=w.put, transcripts=TranscriptRecorder(w.put), retry_base_s=0.01)
    convs = [[{"role": "system", "content": "be brief"}, {"role": "user", "content": f"question {i} — ünïcode"}]
             for i in range(4)]
    convs.append([{"role": "user", "content": [{"type": "text", "text": "parts"}]}])
    res = [await gw.complete("ok", m, max_tokens=8, tags={"task_id": f"t{i}"}) for i, m in enumerate(convs)]
    res.append(await gw.complete("env", convs[0], tags={"task_id": "env"}))
    res.append(await gw.complete("ok", convs[0], max_tokens=8, tags={"task_id": "t0"}))  # a cache hit
    failed = await gw.complete("bad", convs[1], tags={"task_id": "bad"})
    w.flush()
    cache.close()
    assert all(r.ok for r in res) and res[-1].cache_hit and not failed.ok
    assert ok.stats.auth_headers[0] == f"Bearer {CANARY}"  # the key was really sent
    received = ok.stats.messages  # what went over the wire, in order (the cache hit sent nothing)
    assert len(received) == 6
    for r, wire in zip(res[:6], received):
        msgs, reply = transcript(store, r.call_id)
        assert msgs == wire and reply == r.text
    assert transcript(store, res[-1].call_id) == (received[0], res[0].text)
    assert transcript(store, failed.call_id) == (bad.stats.messages[0], None)
    assert store.sql("SELECT count(*) FROM texts WHERE text = 'be brief'")[0][0] == 1
    store.sql("CHECKPOINT")
    for name, blob in {"store": open(store.path, "rb").read(), "cache": (tmp_path / "cache.sqlite").read_bytes()}.items():
        assert CANARY.encode() not in blob and HEADER_CANARY.encode() not in blob, name
    text = every_table_text(store)
    assert CANARY not in text and HEADER_CANARY not in text and "Bearer" not in text
