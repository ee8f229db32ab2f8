"""``client: litellm`` through the ``openai`` SDK where litellm would send the request unchanged
(:mod:`masbench.llm.litellm_sdk`): the same request (body, URL, key) and the same ``calls`` rows —
every column but ids, timestamps and latency, ``usage_raw`` included — as ``litellm.acompletion``
itself, which each case also runs (``MASBENCH_LITELLM_SDK=0``) against its own copy of a server
on 127.0.0.1; and the calls litellm would rewrite still go through litellm."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

from masbench.llm import litellm_sdk
from masbench.spec import ModelSpec

from gateway_rows import calls_rows

USAGE = {"prompt_tokens": 37, "completion_tokens": 11, "total_tokens": 48,
         "prompt_tokens_details": {"cached_tokens": 5}, "completion_tokens_details": {"reasoning_tokens": 4}}
PRICES = {"input_usd_per_mtok": 2.0, "cached_input_usd_per_mtok": 1.0, "output_usd_per_mtok": 8.0,
          "reasoning_usd_per_mtok": 10.0}


def completion(content: Any = "Answer: 7", finish: Any = "stop", usage: Any = USAGE, **message: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"id": "cmpl-1", "object": "chat.completion", "created": 1, "model": "served",
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, **message},
                                         "finish_reason": finish}]}
    if usage is not None:
        body["usage"] = usage
    return body


class Capture:
    """A server on 127.0.0.1 that records each request (path, Authorization, JSON body) and answers
    every chat completion with ``reply`` (any path ending in ``/chat/completions``)."""

    def __init__(self, reply: dict[str, Any]):
        self.reply = reply
        self.seen: list[tuple[str, str | None, dict[str, Any]]] = []
        self.runner: web.AppRunner | None = None
        self.base = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append((request.path, request.headers.get("Authorization"), json.loads(await request.read())))
        return web.json_response(self.reply)

    async def __aenter__(self) -> "Capture":
        app = web.Application()
        app.router.add_post("/{tail:.*}chat/completions", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = self.runner.addresses[0][1]
        self.base = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.runner is not None
        await self.runner.cleanup()


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test-not-a-secret")
    monkeypatch.delenv(litellm_sdk.SWITCH, raising=False)
    monkeypatch.delenv("HOSTED_VLLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


async def _calls(tmp_path, base: str, calls: list[dict[str, Any]], **spec: Any) -> list[dict[str, Any]]:
    """The ``calls`` rows of ``calls`` (each: messages, params, max_tokens) through one gateway."""
    model = ModelSpec(**{"id": "openai/served", "api_base": base, "client": "litellm", **PRICES, **spec})
    return await calls_rows(tmp_path, model, calls)


async def _both(tmp_path, monkeypatch, litellm_spy, reply: dict[str, Any], calls: list[dict[str, Any]],
                sdk_expected: bool = True, **spec: Any):
    """Each call through the SDK path and through litellm (each against its own capture server):
    returns (requests, rows) of each, after asserting which path each took."""
    out = {}
    for sdk in (True, False):
        monkeypatch.setenv(litellm_sdk.SWITCH, "1" if sdk else "0")
        before = len(litellm_spy)
        async with Capture(reply) as srv:
            rows = await _calls(tmp_path, srv.base, calls, **spec)
        went_litellm = len(litellm_spy) - before
        assert went_litellm == (0 if sdk and sdk_expected else len(calls)), (sdk, went_litellm)
        out[sdk] = (srv.seen, rows)
    return out[True], out[False]


CONVERSATION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},
                {"role": "assistant", "content": "4"}, {"role": "user", "content": "and 3+3? ünïcødé"}]


@pytest.mark.parametrize("model,params", [
    ("openai/served", None),
    ("openai/served", {"temperature": 0.2, "top_p": 0.9, "stop": ["\n\n"], "seed": 3, "presence_penalty": 0.1,
                       "frequency_penalty": 0.2}),
    ("openai/served", {"temperature": 0.0, "top_k": 5, "min_p": 0.05, "repetition_penalty": 1.1}),
    ("hosted_vllm/Qwen/Qwen2.5-7B", {"temperature": 0.7}),
])
async def test_same_request_and_rows_as_litellm(tmp_path, monkeypatch, litellm_spy, model, params):
    (sdk_seen, sdk_rows), (ll_seen, ll_rows) = await _both(
        tmp_path, monkeypatch, litellm_spy, completion(), [{"messages": CONVERSATION, "params": params}] * 2,
        id=model, api_key_env=None)
    assert len(sdk_seen) == len(ll_seen) == 2
    for (s_path, s_auth, s_body), (l_path, l_auth, l_body) in zip(sdk_seen, ll_seen):
        assert (s_path, s_auth, s_body) == (l_path, l_auth, l_body)
    # the body written out by hand: what litellm sends for a model it maps as is
    assert sdk_seen[0][2] == {"model": model.split("/", 1)[1], "messages": CONVERSATION, "max_tokens": 16,
                              **(params or {})}
    assert sdk_seen[0][1] == ("Bearer fake-api-key" if model.startswith("hosted_vllm/") else "Bearer sk-no-key")
    assert sdk_rows == ll_rows
    r = sdk_rows[0]
    # fresh 32 at $2/M + cached 5 at $1/M + visible 7 at $8/M + reasoning 4 at $10/M = 165e-6
    assert (r["status"], r["cost_usd"], r["cost_source"]) == ("ok", pytest.approx(165e-6), "yaml")
    assert json.loads(r["usage_raw"])["prompt_tokens_details"]["cached_tokens"] == 5


@pytest.mark.parametrize("reply,text,finish", [
    (completion("<think>2+2 is 4</think>Answer: 4"), "Answer: 4", "stop"),  # litellm splits the reasoning off
    (completion("Answer: 5", reasoning_content="thought"), "Answer: 5", "stop"),
    (completion("Answer: 6", finish="eos"), "Answer: 6", "stop"),  # litellm maps provider finish reasons
    (completion("Answer: 6", finish="max_tokens"), "Answer: 6", "length"),
    (completion("Answer: 8", finish=None), "Answer: 8", "stop"),
    (completion(None), "", "stop"),
    (completion("Answer: 9", usage={**USAGE, "cost": 0.25}), "Answer: 9", "stop"),  # a provider-reported cost
    (completion("Answer: 9", usage=None), "Answer: 9", "stop"),  # no usage: usage_missing either way
    (completion(None, finish="tool_calls", tool_calls=[{"id": "c1", "type": "function", "function": {
        "name": "calc", "arguments": "{\"x\": 1}"}}]), "", "tool_calls"),  # read by litellm's whole conversion
])
async def test_replies_are_read_as_litellm_reads_them(tmp_path, monkeypatch, litellm_spy, reply, text, finish):
    (_, sdk_rows), (_, ll_rows) = await _both(tmp_path, monkeypatch, litellm_spy, reply, [{}],
                                             api_key_env="MASBENCH_TEST_KEY")
    assert sdk_rows == ll_rows
    assert sdk_rows[0]["finish_reason"] == finish
    got = litellm_sdk.litellm_parts(reply)
    assert (got[0], got[1]) == (text, finish)


@pytest.mark.parametrize("what,model,params,messages", [
    ("o-series renames max_tokens", "openai/o3-mini", None, None),
    ("litellm drops user", "openai/served", {"user": "u1"}, None),
    ("streamed", "openai/served", {"stream": True}, None),
    ("n", "openai/served", {"n": 2}, None),
    ("litellm's own keyword", "openai/served", {"metadata": {"a": 1}}, None),
    ("multi-part content", "openai/served", None, [{"role": "user", "content": [{"type": "text", "text": "q"}]}]),
    ("a named turn", "openai/served", None, [{"role": "user", "content": "q", "name": "bob"}]),
])
async def test_what_litellm_would_rewrite_stays_on_litellm(tmp_path, monkeypatch, litellm_spy, what, model, params,
                                                           messages):
    monkeypatch.setenv(litellm_sdk.SWITCH, "1")
    before = len(litellm_spy)
    async with Capture(completion()) as srv:
        call = {"params": params, **({"messages": messages} if messages else {})}
        await _calls(tmp_path, srv.base, [call], id=model, api_key_env="MASBENCH_TEST_KEY")
    assert len(litellm_spy) == before + 1, what


async def test_the_model_switch_and_the_environment_switch(tmp_path, monkeypatch, litellm_spy):
    async with Capture(completion()) as srv:
        for env, sdk_wire, via_litellm in (("1", True, 0), ("1", False, 1), ("0", True, 1), (" 0 ", True, 1)):
            monkeypatch.setenv(litellm_sdk.SWITCH, env)
            before = len(litellm_spy)
            await _calls(tmp_path, srv.base, [{}], sdk_wire=sdk_wire, api_key_env="MASBENCH_TEST_KEY")
            assert len(litellm_spy) - before == via_litellm, (env, sdk_wire)


def test_takes_needs_an_api_base_and_a_plain_provider():
    msgs = [{"role": "user", "content": "q"}]
    req = {"max_tokens": 16, "timeout": 5.0}
    assert litellm_sdk.takes(ModelSpec(id="openai/served", api_base="http://127.0.0.1:9/v1"), msgs, req)
    assert not litellm_sdk.takes(ModelSpec(id="openai/gpt-4o-mini"), msgs, req)  # hosted: no api_base
    assert not litellm_sdk.takes(ModelSpec(id="anthropic/claude-haiku-4-5", api_base="http://127.0.0.1:9"), msgs,
                                 req)
    assert not litellm_sdk.takes(ModelSpec(id="openai/gpt-5", api_base="http://127.0.0.1:9/v1"), msgs, req)
    assert not litellm_sdk.takes(ModelSpec(id="openai/served", api_base="http://127.0.0.1:9/v1"),
                                 msgs, {"max_tokens": 16, "temperature": None})  # litellm drops a None


# ----- errors and retries: the same rows through the fake OpenAI server's faults -----------------

async def _both_fake(tmp_path, monkeypatch, litellm_spy, http_server, server: dict[str, Any], n: int = 1,
                     **spec: Any):
    out = {}
    for sdk in (True, False):
        monkeypatch.setenv(litellm_sdk.SWITCH, "1" if sdk else "0")
        srv = http_server(**server)
        before = len(litellm_spy)
        rows = await _calls(tmp_path, srv.base_url, [{"params": None}] * n, api_key_env="MASBENCH_TEST_KEY", **spec)
        assert (len(litellm_spy) - before > 0) is (not sdk)
        out[sdk] = (rows, srv)
    assert out[True][0] == out[False][0]
    return out[True]


async def test_errors_and_retries_make_the_same_rows(tmp_path, monkeypatch, litellm_spy, http_server):
    rows, _ = await _both_fake(tmp_path, monkeypatch, litellm_spy, http_server,
                               {"usage": USAGE, "fail_first": 2, "fail_kinds": ("500",)}, max_attempts=3)
    assert (rows[0]["status"], rows[0]["attempts"]) == ("ok", 3)
    assert all(e.startswith("InternalServerError[500]") for e in json.loads(rows[0]["attempt_errors"]))
    rows, srv = await _both_fake(tmp_path, monkeypatch, litellm_spy, http_server,
                                 {"fail_first": 1, "fail_kinds": ("400",)}, max_attempts=3)
    assert (rows[0]["status"], rows[0]["attempts"]) == ("error", 1) and rows[0]["error"].startswith(
        "BadRequestError[400]") and srv.stats.requests == 1
    rows, _ = await _both_fake(tmp_path, monkeypatch, litellm_spy, http_server,
                               {"usage": USAGE, "reply": "The answer is", "finish_reason": "length"})
    assert (rows[0]["finish_reason"], rows[0]["status"]) == ("length", "truncated")


async def test_a_401_stops_the_model_with_the_same_rows(tmp_path, monkeypatch, litellm_spy, http_server):
    rows, srv = await _both_fake(tmp_path, monkeypatch, litellm_spy, http_server,
                                 {"fail_first": 5, "fail_kinds": ("401",)}, n=2, max_attempts=3)
    first, second = rows
    assert first["error"].startswith("AuthenticationError[401]") and (second["status"], second["attempts"]) == (
        "error", 0)
    assert srv.stats.requests == 1
