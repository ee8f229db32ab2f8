"""The metering endpoint over real HTTP on 127.0.0.1, driven by the ``openai`` SDK: a request is one
budgeted gateway call of the cell owning its token; refusals are non-retryable 4xx errors."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import signal
import time

import httpx
import openai
import pytest

from masbench.budget import BudgetMeter
from masbench.llm import Gateway
from masbench.llm.endpoint import AGENT_HEADER, MeteringEndpoint, close_shared_endpoint, shared_endpoint
from masbench.llm.program_cell import ProgramCell
from masbench.llm.scripted import ScriptBackend
from masbench.spec import Budget, ModelSpec
from masbench.testing.openai_server import FakeOpenAIServer


def _cell(gw: Gateway, budget: Budget | None = None, agents: list[str] | None = None, seed_base: int = 0,
          task: str = "t1") -> ProgramCell:
    return ProgramCell(gw, BudgetMeter(budget), tags={"run_id": "r", "design": "prog", "task_id": task, "seed": 0,
                                                      "purpose": "design"},
                       aliases=["default"], agents=agents or [], default_agent="program", max_tokens=64,
                       seed_base=seed_base, sim={"gold": ["4"], "skills": [], "task": task})


@pytest.fixture
async def endpoint():
    ep = MeteringEndpoint()
    await ep.start()
    yield ep
    await ep.aclose()


def _msgs(q: str = "What is 2 plus 2?") -> list:
    return [{"role": "user", "content": q}]


async def test_a_request_is_one_recorded_call_of_its_cell(endpoint):
    rows: list = []
    gw = Gateway({"default": ModelSpec(id="sim/p60")}, sink=rows.append)
    cell = _cell(gw, seed_base=7)
    client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.grant(cell))
    r = await client.chat.completions.create(model="default", messages=_msgs(), temperature=0.5)
    assert r.choices[0].message.content and r.usage is not None
    assert len(rows) == 1
    row = rows[0]
    assert (row.design, row.task_id, row.agent, row.node) == ("prog", "t1", "program", "program")
    assert (row.prompt_tokens, row.completion_tokens) == (r.usage.prompt_tokens, r.usage.completion_tokens)
    assert row.sample_index == 7  # the cell's seed base: the first request of its kind
    assert json.loads(row.request)["max_tokens"] == 64  # the design's default for a request that sets none
    # the same request again: the next position; an explicit seed is the sample index
    await client.chat.completions.create(model="default", messages=_msgs(), temperature=0.5)
    await client.chat.completions.create(model="default", messages=_msgs(), temperature=0.5, seed=123)
    assert [x.sample_index for x in rows] == [7, 8, 123]
    assert cell.totals == (sum(x.prompt_tokens for x in rows), sum(x.completion_tokens for x in rows), 0.0, 3)
    models = await client.models.list()
    assert [m.id for m in models.data] == ["default"]
    await gw.aclose()


async def test_streamed_reply_carries_usage_in_its_last_chunk(endpoint):
    rows: list = []
    gw = Gateway({"default": ModelSpec(id="sim/p60")}, sink=rows.append)
    client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.grant(_cell(gw)))
    stream = await client.chat.completions.create(model="default", messages=_msgs(), stream=True,
                                                  stream_options={"include_usage": True})
    text, usage, last = "", None, None
    async for chunk in stream:
        last = chunk
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
        if chunk.usage is not None:
            usage = chunk.usage
    assert last is not None and last.usage is not None and not last.choices
    assert usage is not None and text
    assert (usage.prompt_tokens, usage.completion_tokens) == (rows[0].prompt_tokens, rows[0].completion_tokens)
    await gw.aclose()


async def test_tools_pass_through_to_the_model_and_back(endpoint):
    async with FakeOpenAIServer() as srv:
        spec = ModelSpec(id="openai/fake", api_base=srv.base_url, function_calling=True)
        gw = Gateway({"default": spec})
        client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.grant(_cell(gw)))
        tools = [{"type": "function", "function": {"name": "search", "description": "Search.",
                                                   "parameters": {"type": "object",
                                                                  "properties": {"query": {"type": "string"}},
                                                                  "required": ["query"]}}}]
        r = await client.chat.completions.create(model="default", messages=_msgs("find it"), tools=tools)
        calls = r.choices[0].message.tool_calls
        assert calls and calls[0].function.name == "search"
        assert json.loads(calls[0].function.arguments)["query"] == "find it"
        assert srv.stats.tools[-1]["tools"][0]["function"]["name"] == "search"  # what the backend was sent
        await gw.aclose()


async def test_tokens_isolate_cells_and_end_with_them(endpoint):
    rows: list = []
    gw = Gateway({"default": ModelSpec(id="sim/p60")}, sink=rows.append)
    a, b = _cell(gw, task="ta"), _cell(gw, task="tb")
    ta, tb = endpoint.grant(a), endpoint.grant(b)
    for key in ("", "mb-not-a-token"):
        with pytest.raises(openai.AuthenticationError):
            await openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=key or "x", max_retries=0).chat.completions.create(
                model="default", messages=_msgs())
    async with httpx.AsyncClient() as h:  # no Authorization header at all
        r = await h.post(endpoint.base_url + "/chat/completions", json={"model": "default", "messages": _msgs()})
        assert r.status_code == 401
    await openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=tb).chat.completions.create(
        model="default", messages=_msgs())
    assert [r.task_id for r in rows] == ["tb"]  # b's token spends b's budget, never a's
    assert a.totals[3] == 0 and b.totals[3] == 1
    endpoint.revoke(b)
    with pytest.raises(openai.AuthenticationError):
        await openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=tb).chat.completions.create(
            model="default", messages=_msgs())
    assert endpoint.grant(a) != ta  # every grant is a fresh random token
    await gw.aclose()


async def test_an_unknown_model_is_refused_naming_the_aliases(endpoint):
    gw = Gateway({"default": ModelSpec(id="sim/p60")})
    client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.grant(_cell(gw)))
    with pytest.raises(openai.NotFoundError) as ei:
        await client.chat.completions.create(model="gpt-4o", messages=_msgs())
    assert "'gpt-4o'" in str(ei.value) and "default" in str(ei.value)
    assert gw.stats["calls"] == 0
    await gw.aclose()


async def test_a_budget_refusal_is_not_retried_and_stops_every_later_request(endpoint):
    rows: list = []
    gw = Gateway({"default": ModelSpec(id="sim/p60")}, sink=rows.append)
    cell = _cell(gw, Budget(per_task_tokens=300))
    client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.grant(cell))  # default: 2 retries
    made = 0
    with pytest.raises(openai.PermissionDeniedError) as ei:
        for _ in range(50):
            await client.chat.completions.create(model="default", messages=_msgs(), max_tokens=100)
            made += 1
    assert "budget" in str(ei.value) and "300 tokens" in str(ei.value)
    assert ei.value.status_code == 403 and ei.value.code == "budget_exhausted"
    assert len(cell.meter.refused) == 1  # the SDK did not retry the refusal
    assert 1 <= made == len(rows) and cell.meter.tokens <= 300
    with pytest.raises(openai.PermissionDeniedError):  # exhausted: later requests are refused too
        await client.chat.completions.create(model="default", messages=_msgs(), max_tokens=1)
    assert len(rows) == made
    await gw.aclose()


async def test_attribution_by_header_agent_token_and_user_field(endpoint):
    rows: list = []
    gw = Gateway({"default": ModelSpec(id="sim/p60")}, sink=rows.append)
    cell = _cell(gw, agents=["solver", "critic", "judge"])
    token = endpoint.grant(cell)
    base = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=token)
    await base.chat.completions.create(model="default", messages=_msgs(), extra_headers={AGENT_HEADER: "solver"})
    await openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.grant(cell, "critic")).chat.completions.create(
        model="default", messages=_msgs())
    await base.chat.completions.create(model="default", messages=_msgs(), user="judge")
    await base.chat.completions.create(model="default", messages=_msgs(), user="some-end-user-id")  # not an agent
    # precedence: the header over a per-agent token, the token over the user field
    critic = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.grant(cell, "critic"))
    await critic.chat.completions.create(model="default", messages=_msgs(), extra_headers={AGENT_HEADER: "judge"})
    await critic.chat.completions.create(model="default", messages=_msgs(), user="solver")
    assert [r.agent for r in rows] == ["solver", "critic", "judge", "program", "judge", "critic"]
    assert {a: t.calls for a, t in cell.by_agent.items()} == {"solver": 1, "critic": 2, "judge": 2, "program": 1}
    with pytest.raises(openai.BadRequestError) as ei:  # a header naming an undeclared agent is a mistake
        await base.chat.completions.create(model="default", messages=_msgs(), extra_headers={AGENT_HEADER: "solvr"})
    assert "solvr" in str(ei.value) and "critic" in str(ei.value)
    await gw.aclose()


async def test_anthropic_messages_are_the_same_metered_call(endpoint):
    rows: list = []
    gw = Gateway({"default": ModelSpec(id="sim/p60")}, sink=rows.append)
    cell = _cell(gw, Budget(per_task_tokens=400), agents=["writer"])
    token = endpoint.grant(cell)
    url = endpoint.base_url + "/messages"
    body = {"model": "default", "max_tokens": 100, "system": "You are terse.", "stop_sequences": ["\n\n"],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "What is 2 plus 2?"}]}],
            "metadata": {"user_id": "writer"}}
    async with httpx.AsyncClient() as h:
        r = await h.post(url, json=body, headers={"x-api-key": token, "anthropic-version": "2023-06-01"})
        assert r.status_code == 200, r.text
        msg = r.json()
        assert msg["type"] == "message" and msg["content"][0]["type"] == "text" and msg["content"][0]["text"]
        row = rows[0]
        assert (msg["usage"]["input_tokens"], msg["usage"]["output_tokens"]) == (row.prompt_tokens,
                                                                                 row.completion_tokens)
        assert row.agent == "writer" and json.loads(row.request)["stop"] == ["\n\n"]
        # what is not served is refused whole, in Anthropic's error shape, never half-translated
        for extra in ({"stream": True}, {"tools": [{"name": "t", "input_schema": {"type": "object"}}]}):
            r = await h.post(url, json={**body, **extra}, headers={"x-api-key": token})
            assert r.status_code == 400 and r.json()["type"] == "error" and r.headers["x-should-retry"] == "false"
        r = await h.post(url, json=body, headers={"x-api-key": "mb-nope"})
        assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
        while True:  # the budget: a 403 naming it, as on the chat route
            r = await h.post(url, json=body, headers={"x-api-key": token})
            if r.status_code != 200:
                break
        assert r.status_code == 403 and "budget" in r.json()["error"]["message"]
    assert cell.meter.tokens <= 400 and len(rows) == cell.totals[3]
    await gw.aclose()


def _held_gateway(rows: list, reply: str = "The answer is 4."):
    """A gateway whose one model answers only once ``release`` is set (``started``: a call reached it)."""
    started, release = asyncio.Event(), asyncio.Event()
    inner = ScriptBackend(lambda info: reply)

    async def held(a):
        started.set()
        await release.wait()
        return await inner(a)

    return Gateway({"default": ModelSpec(id="sim/perfect")}, backend=held, sink=rows.append), started, release


async def test_closing_waits_for_the_request_in_flight_and_refuses_new_ones():
    rows: list = []
    gw, started, release = _held_gateway(rows)
    ep = MeteringEndpoint()
    await ep.start()
    cell = _cell(gw)
    client = openai.AsyncOpenAI(base_url=ep.base_url, api_key=ep.grant(cell), max_retries=0)
    pending = asyncio.create_task(client.chat.completions.create(model="default", messages=_msgs()))
    await asyncio.wait_for(started.wait(), 30)
    assert ep.inflight == 1
    closing = asyncio.create_task(ep.aclose())
    # 1 s is twice aiohttp's shutdown timeout (0.5 s): a close that did not wait had cut the request by now
    await asyncio.sleep(1.0)
    assert not closing.done() and not pending.done()
    with pytest.raises(openai.AuthenticationError):  # meanwhile a new request is refused (its grant is revoked)
        await client.chat.completions.create(model="default", messages=_msgs())
    release.set()
    r = await asyncio.wait_for(pending, 30)
    assert r.choices[0].message.content == "The answer is 4."
    assert await asyncio.wait_for(closing, 30) is True
    assert ep.inflight == 0 and len(rows) == 1 and cell.totals[3] == 1  # the call was made, recorded and tallied
    await gw.aclose()


@pytest.mark.waits  # its bound is on the wall clock: run beside the xdist workers, not among them
async def test_closing_cuts_a_request_still_running_after_the_drain_time():
    rows: list = []
    gw, started, _release = _held_gateway(rows)  # never released
    ep = MeteringEndpoint()
    await ep.start()
    client = openai.AsyncOpenAI(base_url=ep.base_url, api_key=ep.grant(_cell(gw)), max_retries=0)
    pending = asyncio.create_task(client.chat.completions.create(model="default", messages=_msgs()))
    await asyncio.wait_for(started.wait(), 30)
    t0 = time.monotonic()
    assert await asyncio.wait_for(ep.aclose(drain_s=0.2), 30) is False  # one request was still running
    # the drain (0.2 s) then aiohttp's shutdown timeout (0.5 s) before the cut: ~0.7 s; a 1.5 s shutdown timeout
    # alone would pass 1.5 s (0.8 s of slack for a loaded machine)
    assert time.monotonic() - t0 < 1.5
    with pytest.raises(openai.APIConnectionError):
        await asyncio.wait_for(pending, 30)
    await gw.aclose()


# ----- the wire as sent: raw HTTP (httpx), every expected body written out from the OpenAI shapes -----------------

_NOT_JSON = {"error": {"message": "the request body is not JSON", "type": "invalid_request_error", "param": None,
                       "code": "invalid_request_error"}}


def _openai_error(code: str, message: str) -> dict:
    return {"error": {"message": message, "type": code, "param": None, "code": code}}


_NO_TOKEN = ("no valid masbench endpoint token (each task of a program run has its own; a token of an ended task "
             "is no longer valid)")


async def test_refusals_and_models_on_the_wire(endpoint):
    gw = Gateway({"default": ModelSpec(id="sim/p60")})
    token = endpoint.grant(_cell(gw))
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=endpoint.base_url) as h:
        for path in ("/models", "/chat/completions"):  # no token: the same 401 on every route
            r = await h.request("GET" if path == "/models" else "POST", path, json={})
            assert r.status_code == 401 and r.json() == _openai_error("invalid_api_key", _NO_TOKEN)
            assert r.headers["Content-Type"] == "application/json; charset=utf-8"
            assert r.headers["x-should-retry"] == "false"
        r = await h.get("/models", headers=auth)
        assert r.json() == {"object": "list", "data": [{"id": "default", "object": "model", "created": 0,
                                                        "owned_by": "masbench"}]}
        r = await h.post("/chat/completions", content=b"{not json", headers=auth)
        assert r.status_code == 400 and r.json() == _NOT_JSON and r.headers["x-should-retry"] == "false"
        r = await h.post("/chat/completions", json=[1, 2], headers=auth)
        assert r.status_code == 400 and r.json() == _openai_error("invalid_request_error",
                                                                  "the request body must be a JSON object")
    assert gw.stats["calls"] == 0
    await gw.aclose()


async def test_a_reply_names_the_alias_and_a_stream_is_server_sent_events(endpoint):
    rows: list = []
    gw = Gateway({"default": ModelSpec(id="sim/p60")}, sink=rows.append)
    auth = {"Authorization": f"Bearer {endpoint.grant(_cell(gw))}"}
    async with httpx.AsyncClient(base_url=endpoint.base_url) as h:
        before = int(time.time())
        r = await h.post("/chat/completions", json={"model": "default", "messages": _msgs()}, headers=auth)
        body = r.json()
        assert body["model"] == "default" and before <= body["created"] <= int(time.time())
        r = await h.post("/chat/completions", json={"model": "default", "messages": _msgs(), "stream": True},
                         headers=auth)
        assert r.headers["Content-Type"] == "text/event-stream" and r.headers["Cache-Control"] == "no-cache"
        events = r.content.split(b"\n\n")
        # three chunks (role + text, finish reason, usage), then the [DONE] sentinel, then nothing
        assert events[-2:] == [b"data: [DONE]", b""] and len(events) == 5
        chunks = [json.loads(e.removeprefix(b"data: ")) for e in events[:3]]
        assert all(c["model"] == "default" and c["object"] == "chat.completion.chunk" for c in chunks)
        r = await h.post("/messages", json={"model": "default", "max_tokens": 20, "messages": _msgs()},
                         headers={"x-api-key": auth["Authorization"][7:], AGENT_HEADER: "scribe"})
        assert r.json()["model"] == "default"
    # the agent header names the agent on the Anthropic route too (no agents declared: any name)
    assert [r.agent for r in rows] == ["program", "program", "scribe"]
    await gw.aclose()


async def test_a_request_of_up_to_64_mib_is_read_and_a_larger_one_refused(endpoint):
    gw = Gateway({"default": ModelSpec(id="sim/p60")})
    auth = {"Authorization": f"Bearer {endpoint.grant(_cell(gw))}"}
    cap = 64 * 1024 * 1024
    head, tail = b'{"model": "default", "messages": "', b'"}'  # messages not a list: read, then refused as malformed
    async with httpx.AsyncClient(base_url=endpoint.base_url, timeout=120) as h:
        for size, status in ((cap, 400), (cap + 1, 413)):
            body = head + b"x" * (size - len(head) - len(tail)) + tail
            r = await h.post("/chat/completions", content=body, headers=auth)
            assert r.status_code == status, (size, r.status_code)
    await gw.aclose()


async def test_serving_logs_nothing_and_leaves_the_signal_handlers(caplog):
    caplog.set_level(logging.DEBUG, logger="aiohttp.access")
    handlers = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    a, b = MeteringEndpoint(), MeteringEndpoint()
    with pytest.raises(RuntimeError):
        _ = a.base_url  # not started
    await a.start()
    await b.start()  # each binds its own free port
    assert a.base_url != b.base_url and ":8080/" not in a.base_url + b.base_url
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
    async with httpx.AsyncClient() as h:
        assert (await h.get(a.base_url + "/models")).status_code == 401
    assert not [r for r in caplog.records if r.name == "aiohttp.access"]  # no access log line per request
    token = a.grant(_cell(Gateway({"default": ModelSpec(id="sim/p60")})))
    assert re.fullmatch(r"mb-[A-Za-z0-9_-]{32}", token)  # 24 random bytes, URL-safe base64
    assert await a.aclose() is True and await a.aclose() is True  # closing twice is harmless
    with pytest.raises(RuntimeError):
        _ = a.base_url  # closed
    url = await a.start()  # and it can serve again
    async with httpx.AsyncClient() as h:
        assert (await h.get(url + "/models")).status_code == 401
    await a.aclose()
    await b.aclose()


async def test_one_shared_endpoint_per_loop():
    await close_shared_endpoint()  # none started: nothing to close
    first, second = await asyncio.gather(shared_endpoint(), shared_endpoint())  # started once, under the lock
    assert first is second and first.base_url.startswith("http://127.0.0.1:")
    assert await shared_endpoint() is first
    await close_shared_endpoint()
    with pytest.raises(RuntimeError):
        _ = first.base_url  # closed
    again = await shared_endpoint()
    assert again is not first
    await close_shared_endpoint()
