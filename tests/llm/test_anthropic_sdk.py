"""``client: litellm`` on Anthropic's Messages wire through the ``anthropic`` SDK
(:mod:`masbench.llm.anthropic_sdk`): the same request (path, ``x-api-key``, ``anthropic-version``,
JSON body) and the same ``calls`` rows — every column but ids, timestamps and latency, cost and
``usage_raw`` included — as ``litellm.acompletion`` itself, which each case also runs
(``MASBENCH_LITELLM_SDK=0``) against its own server on 127.0.0.1; errors classified and described as
litellm's; and the calls litellm would rewrite still go through litellm."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from masbench.llm import anthropic_sdk, errors, litellm_sdk
from masbench.llm.backends import Attempt
from masbench.llm.litellm_sdk import LitellmClient
from masbench.spec import ModelSpec

from gateway_rows import calls_rows

pytest.importorskip("anthropic")

MODEL = "anthropic/claude-haiku-4-5"
USAGE = {"input_tokens": 30, "output_tokens": 11, "cache_read_input_tokens": 400, "cache_creation_input_tokens": 20}
PRICES = {"input_usd_per_mtok": 1.0, "cached_input_usd_per_mtok": 0.1, "cache_write_usd_per_mtok": 1.25,
          "output_usd_per_mtok": 5.0}


def message(*blocks: Any, stop: Any = "end_turn", usage: Any = USAGE, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-served",
                            "content": list(blocks) if blocks else [{"type": "text", "text": "Answer: 7"}],
                            "stop_reason": stop, "stop_sequence": None, **extra}
    if usage is not None:
        body["usage"] = usage
    return body


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


class Capture:
    """A server on 127.0.0.1 that records each request (path, ``x-api-key``, ``anthropic-version``,
    ``Authorization``, JSON body) and answers every Messages request with ``reply``."""

    def __init__(self, reply: dict[str, Any]):
        self.reply = reply
        self.seen: list[tuple[str, str | None, str | None, str | None, dict[str, Any]]] = []
        self.runner: web.AppRunner | None = None
        self.base = ""

    async def handle(self, request: web.Request) -> web.Response:
        h = request.headers
        self.seen.append((request.path, h.get("x-api-key"), h.get("anthropic-version"), h.get("Authorization"),
                          json.loads(await request.read())))
        return web.json_response(self.reply)

    async def __aenter__(self) -> "Capture":
        app = web.Application()
        app.router.add_post("/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.base = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.runner is not None
        await self.runner.cleanup()


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-ant-test-not-a-secret")
    for var in (litellm_sdk.SWITCH, "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_BASE",
                "ANTHROPIC_BASE_URL", "LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX"):
        monkeypatch.delenv(var, raising=False)


async def _calls(tmp_path, base: str | None, calls: list[dict[str, Any]], **spec: Any) -> list[dict[str, Any]]:
    """The ``calls`` rows of ``calls`` (each: messages, params, max_tokens) through one gateway."""
    model = ModelSpec(**{"id": MODEL, "api_base": base, "client": "litellm", "api_key_env": "MASBENCH_TEST_KEY",
                         **spec})
    return await calls_rows(tmp_path, model, calls)


async def _both(tmp_path, monkeypatch, litellm_spy, reply: dict[str, Any], calls: list[dict[str, Any]],
                **spec: Any):
    """Each call through the SDK path and through litellm (each against its own capture server):
    returns (requests, rows) of each, after asserting that the SDK path never reached litellm."""
    out = {}
    for sdk in (True, False):
        monkeypatch.setenv(litellm_sdk.SWITCH, "1" if sdk else "0")
        before = len(litellm_spy)
        async with Capture(reply) as srv:
            rows = await _calls(tmp_path, srv.base, calls, **spec)
        assert len(litellm_spy) - before == (0 if sdk else len(calls)), sdk
        out[sdk] = (srv.seen, rows)
    return out[True], out[False]


CONVERSATION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},
                {"role": "assistant", "content": "4  "}, {"role": "user", "content": "and 3+3? ünïcødé"}]
MERGED = [{"role": "system", "content": "A."}, {"role": "system", "content": ""}, {"role": "system", "content": "B."},
          {"role": "user", "content": "one"}, {"role": "user", "content": "two"},
          {"role": "assistant", "content": "x"}, {"role": "assistant", "content": "y \n"}]


@pytest.mark.parametrize("messages,params,spec", [
    (CONVERSATION, None, {}),
    (CONVERSATION, {"temperature": 0.2, "top_p": 0.9, "top_k": 5, "stop": ["END", "\n\n"], "seed": 3}, {}),
    (CONVERSATION, {"user": "u-1", "temperature": None}, {}),
    (MERGED, {"max_completion_tokens": 32}, {}),  # merged turns, the last assistant turn right-stripped
    ([{"role": "user", "content": "q"}], {"stop": "END"}, {"id": "anthropic/claude-sonnet-4-5", **PRICES}),
    ([{"role": "user", "content": "q"}], {"temperature": 0.5, "top_p": 0.9, "top_k": 3},
     {"id": "anthropic/claude-opus-4-7"}),  # a model whose sampling parameters litellm gates
    ([{"role": "user", "content": "q"}], None, {"id": "anthropic/claude-sonnet-5"}),
])
async def test_same_request_and_rows_as_litellm(tmp_path, monkeypatch, litellm_spy, messages, params, spec):
    (sdk_seen, sdk_rows), (ll_seen, ll_rows) = await _both(
        tmp_path, monkeypatch, litellm_spy, message(), [{"messages": messages, "params": params}] * 2, **spec)
    assert len(sdk_seen) == len(ll_seen) == 2
    assert sdk_seen == ll_seen  # path, x-api-key, anthropic-version, Authorization (none), body
    path, key, version, auth, body = sdk_seen[0]
    assert (path, key, version, auth) == ("/v1/messages", "sk-ant-test-not-a-secret", "2023-06-01", None)
    assert body["model"] == (spec.get("id") or MODEL).split("/", 1)[1]
    assert sdk_rows == ll_rows
    r = sdk_rows[0]
    assert (r["status"], r["prompt_tokens"], r["cached_tokens"], r["cache_write_tokens"]) == ("ok", 450, 400, 20)
    assert r["cost_source"] == ("yaml" if "input_usd_per_mtok" in spec else "litellm-map")
    if "input_usd_per_mtok" in spec:  # 30 × $1/M + 400 × $0.1/M + 20 × $1.25/M + 11 × $5/M = 0.00015
        assert r["cost_usd"] == pytest.approx(30e-6 + 40e-6 + 25e-6 + 55e-6)
    assert json.loads(r["usage_raw"])["cache_read_input_tokens"] == 400


def test_the_body_written_out_by_hand():
    fields = anthropic_sdk.body_params("claude-haiku-4-5", {"max_tokens": 16, "temperature": 0.2, "stop": ["END"],
                                                            "seed": 3, "user": "u"})
    # litellm renames stop and user, drops seed (drop_params) and keeps the rest
    assert fields == {"temperature": 0.2, "stop_sequences": ["END"], "max_tokens": 16, "metadata": {"user_id": "u"}}
    system, turns = anthropic_sdk.wire_messages(MERGED) or ([], [])
    assert system == [text("A."), text("B.")]
    assert turns == [{"role": "user", "content": [text("one"), text("two")]},
                     {"role": "assistant", "content": [text("x"), text("y")]}]


def _litellm_body(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig
    from litellm.utils import get_optional_params

    mapped = dict(get_optional_params(model=model, custom_llm_provider="anthropic", **params))
    return AnthropicConfig().transform_request(model=model, messages=[dict(m) for m in messages],
                                               optional_params=mapped, litellm_params={}, headers={})


_TEXTS = st.sampled_from(["a", "b ", " c", "two words", "x\n", "ü", "  ", "", "4  ", "\t", "y \n "])
_TURN = st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["system", "user", "assistant"]), _TEXTS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(_TURN, min_size=1, max_size=7))
def test_random_conversations_are_laid_out_as_litellm_lays_them_out(messages):
    laid = anthropic_sdk.wire_messages([dict(m) for m in messages])
    if laid is None:  # kept on litellm: the conversation has something litellm rewrites
        roles = [m["role"] for m in messages]
        lead = next((i for i, r in enumerate(roles) if r != "system"), len(roles))
        rest = messages[lead:]
        assert (not rest or rest[0]["role"] != "user" or any(m["role"] == "system" for m in rest)
                or any(not m["content"].strip() for m in rest))
        return
    system, turns = laid
    want = _litellm_body("claude-haiku-4-5", messages, {"max_tokens": 8})
    got = {"model": "claude-haiku-4-5", "messages": turns, **(anthropic_sdk.body_params("claude-haiku-4-5",
                                                                                        {"max_tokens": 8}) or {})}
    if system:
        got["system"] = system
    assert got == want


@pytest.mark.parametrize("reply,text_,finish", [
    (message(text("Answer: "), text("4")), "Answer: 4", "stop"),  # text blocks joined
    (message(stop="max_tokens"), "Answer: 7", "length"),  # litellm maps Anthropic's stop reasons
    (message(stop="stop_sequence"), "Answer: 7", "stop"),
    (message(text("")), "", "stop"),
    (message(usage={"input_tokens": 5, "output_tokens": 2}), "Answer: 7", "stop"),  # no cache fields
    (message(usage={"input_tokens": 5, "output_tokens": 2, "cache_creation_input_tokens": 9,
                    "cache_creation": {"ephemeral_5m_input_tokens": 4, "ephemeral_1h_input_tokens": 5},
                    "service_tier": "standard"}), "Answer: 7", "stop"),
    (message({"type": "thinking", "thinking": "2+2 is 4", "signature": "s"}, text("Answer: 4")), "Answer: 4",
     "stop"),  # read by litellm's whole transform (reasoning tokens estimated from the thinking text)
    (message({"type": "tool_use", "id": "t1", "name": "calc", "input": {"x": 1}}, stop="tool_use"), "",
     "tool_calls"),
    (message({"type": "text", "text": "cited", "citations": [{"type": "char_location", "cited_text": "c",
                                                              "document_index": 0, "start_char_index": 0,
                                                              "end_char_index": 1}]}), "cited", "stop"),
])
async def test_replies_are_read_as_litellm_reads_them(tmp_path, monkeypatch, litellm_spy, reply, text_, finish):
    (_, sdk_rows), (_, ll_rows) = await _both(tmp_path, monkeypatch, litellm_spy, reply, [{}])
    assert sdk_rows == ll_rows
    assert sdk_rows[0]["finish_reason"] == finish
    got = anthropic_sdk.reply_parts(json.loads(json.dumps(reply)))
    assert (got[0], got[1]) == (text_, finish)


async def test_a_reply_without_usage_fails_as_on_litellm(tmp_path, monkeypatch, litellm_spy):
    (_, sdk_rows), (_, ll_rows) = await _both(tmp_path, monkeypatch, litellm_spy, message(usage=None), [{}],
                                             max_attempts=1)
    assert sdk_rows == ll_rows
    assert sdk_rows[0]["status"] == "error" and sdk_rows[0]["error"]


@pytest.mark.parametrize("what,params,messages,spec,env", [
    ("streamed", {"stream": True}, None, {}, {}),
    ("tools", {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]},
     None, {}, {}),
    ("response_format", {"response_format": {"type": "json_object"}}, None, {}, {}),
    ("reasoning_effort", {"reasoning_effort": "low"}, None, {}, {}),
    ("litellm's own keyword", {"metadata": {"a": 1}}, None, {}, {}),
    ("multi-part content", None, [{"role": "user", "content": [{"type": "text", "text": "q"}]}], {}, {}),
    ("a named turn", None, [{"role": "user", "content": "q", "name": "bob"}], {}, {}),
    ("a system turn after the first", None, [{"role": "user", "content": "q"}, {"role": "system", "content": "s"}],
     {}, {}),
    ("an empty turn", None, [{"role": "user", "content": " "}], {}, {}),
    ("the assistant first", None, [{"role": "assistant", "content": "a"}, {"role": "user", "content": "q"}], {}, {}),
    ("an OAuth token", None, None, {"api_key_env": "OAUTH"}, {"OAUTH": "sk-ant-oat01-x"}),
    ("no suffix", None, None, {}, {"LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX": "true"}),
])
async def test_what_litellm_would_rewrite_stays_on_litellm(tmp_path, monkeypatch, litellm_spy, what, params,
                                                           messages, spec, env):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv(litellm_sdk.SWITCH, "1")
    before = len(litellm_spy)
    async with Capture(message()) as srv:
        call = {"params": params, **({"messages": messages} if messages else {})}
        await _calls(tmp_path, srv.base, [call], max_attempts=1, **spec)
    assert len(litellm_spy) == before + 1, what


async def test_the_model_switch_and_the_environment_switch(tmp_path, monkeypatch, litellm_spy):
    async with Capture(message()) as srv:
        for env, sdk_wire, via_litellm in (("1", True, 0), ("1", False, 1), ("0", True, 1), (" 0 ", True, 1)):
            monkeypatch.setenv(litellm_sdk.SWITCH, env)
            before = len(litellm_spy)
            await _calls(tmp_path, srv.base, [{}], sdk_wire=sdk_wire)
            assert len(litellm_spy) - before == via_litellm, (env, sdk_wire)


def test_the_url_and_key_are_litellms(monkeypatch):
    assert anthropic_sdk.messages_url(None) == anthropic_sdk.DEFAULT_URL == "https://api.anthropic.com/v1/messages"
    assert anthropic_sdk.messages_url("http://127.0.0.1:9") == "http://127.0.0.1:9/v1/messages"
    assert anthropic_sdk.messages_url("http://127.0.0.1:9/v1/messages") == "http://127.0.0.1:9/v1/messages"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8")
    assert anthropic_sdk.messages_url(None) is None  # litellm reads its own setting: its path
    assert anthropic_sdk.messages_url("http://127.0.0.1:9") == "http://127.0.0.1:9/v1/messages"  # api_base wins
    hosted = ModelSpec(id=MODEL)
    assert anthropic_sdk.wire_key(hosted) is None  # no key: litellm's path (and its own error)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  sk-ant-env  ")
    assert anthropic_sdk.wire_key(hosted) == "sk-ant-env"  # stripped, as litellm does
    assert anthropic_sdk.wire_key(ModelSpec(id=MODEL, api_key_env="MASBENCH_TEST_KEY")) == "sk-ant-test-not-a-secret"
    with pytest.raises(PermissionError):  # the same error as litellm's path: the model's key is unset
        anthropic_sdk.wire_key(ModelSpec(id=MODEL, api_key_env="MASBENCH_NOT_SET"))


def test_the_client_picks_the_wire_of_the_provider():
    client = LitellmClient()
    wire = client.wire(ModelSpec(id=MODEL))
    assert type(wire).__name__ == "AnthropicWire"
    assert client.wire(ModelSpec(id="anthropic/claude-3-haiku-20240307")) is wire
    assert type(client.wire(ModelSpec(id="openai/x", api_base="http://127.0.0.1:9/v1"))).__name__ == "LitellmWire"
    assert client.wire(ModelSpec(id="gemini/gemini-2.0-flash")) is None


# ----- errors: the local server's faults, over real HTTP on 127.0.0.1 ---------------------------------

async def _both_fake(tmp_path, monkeypatch, litellm_spy, http_server, server: dict[str, Any], n: int = 1,
                     **spec: Any):
    out = {}
    for sdk in (True, False):
        monkeypatch.setenv(litellm_sdk.SWITCH, "1" if sdk else "0")
        srv = http_server(**server)
        before = len(litellm_spy)
        rows = await _calls(tmp_path, srv.base_url[: -len("/v1")], [{"params": None}] * n, **spec)
        assert (len(litellm_spy) - before > 0) is (not sdk)
        out[sdk] = (rows, srv)
    assert out[True][0] == out[False][0]
    return out[True]


async def test_errors_and_retries_make_the_same_rows(tmp_path, monkeypatch, litellm_spy, http_server):
    for kind, name in (("500", "InternalServerError[500]"), ("429", "RateLimitError[429]"),
                       ("503", "InternalServerError[503]"), ("disconnect", "InternalServerError[500]")):
        rows, _ = await _both_fake(tmp_path, monkeypatch, litellm_spy, http_server,
                                   {"anthropic_usage": USAGE, "fail_first": 2, "fail_kinds": (kind,)}, max_attempts=3)
        assert (rows[0]["status"], rows[0]["attempts"]) == ("ok", 3), kind
        assert all(e.startswith(name) for e in json.loads(rows[0]["attempt_errors"])), kind
    rows, srv = await _both_fake(tmp_path, monkeypatch, litellm_spy, http_server,
                                 {"fail_first": 1, "fail_kinds": ("400",)}, max_attempts=3)
    assert (rows[0]["status"], rows[0]["attempts"]) == ("error", 1) and rows[0]["error"].startswith(
        "BadRequestError[400]") and srv.stats.requests == 1
    rows, _ = await _both_fake(tmp_path, monkeypatch, litellm_spy, http_server,
                               {"anthropic_usage": USAGE, "reply": "The answer is", "finish_reason": "length"})
    assert (rows[0]["finish_reason"], rows[0]["status"]) == ("length", "truncated")


async def test_a_timeout_is_retried_as_on_litellm(tmp_path, monkeypatch, litellm_spy, http_server):
    rows, _ = await _both_fake(tmp_path, monkeypatch, litellm_spy, http_server,
                               {"anthropic_usage": USAGE, "fail_first": 1, "fail_kinds": ("timeout",),
                                "timeout_sleep_s": 3.0}, max_attempts=2, timeout_s=1.0)  # room for a loaded machine
    assert (rows[0]["status"], rows[0]["attempts"]) == ("ok", 2)
    assert json.loads(rows[0]["attempt_errors"]) == ["APITimeoutError: Request timed out."]


@pytest.mark.parametrize("kind,name", [("401", "AuthenticationError[401]"), ("404", "NotFoundError[404]")])
async def test_a_401_or_404_stops_the_model_with_the_same_rows(tmp_path, monkeypatch, litellm_spy, http_server,
                                                               kind, name):
    rows, srv = await _both_fake(tmp_path, monkeypatch, litellm_spy, http_server,
                                 {"fail_first": 5, "fail_kinds": (kind,)}, n=2, max_attempts=3)
    first, second = rows
    assert first["error"].startswith(name) and (second["status"], second["attempts"]) == ("error", 0)
    assert srv.stats.requests == 1


def _attempt(spec: ModelSpec) -> Attempt:
    return Attempt("m", spec, [{"role": "user", "content": "q"}], {"max_tokens": 8}, 0, 0, {}, {})


@pytest.mark.parametrize("server,timeout_s", [
    ({"fail_first": 1, "fail_kinds": ("429",), "retry_after": "7"}, 30.0),
    ({"fail_first": 1, "fail_kinds": ("503",), "retry_after": "3"}, 30.0),
    ({"fail_first": 1, "fail_kinds": ("500",)}, 30.0),
    ({"fail_first": 1, "fail_kinds": ("400",)}, 30.0),
    ({"fail_first": 1, "fail_kinds": ("401",)}, 30.0),
    ({"fail_first": 1, "fail_kinds": ("404",)}, 30.0),
    ({"fail_first": 1, "fail_kinds": ("disconnect",)}, 30.0),
    ({"fail_first": 1, "fail_kinds": ("timeout",), "timeout_sleep_s": 2.0}, 0.3),
    (None, 30.0),  # nothing listens: connection refused
])
async def test_each_error_classifies_as_litellms(monkeypatch, http_server, unused_tcp_port, server, timeout_s):
    """The exception each path raises: the same type, description, retry decision, systemic reason and
    ``Retry-After`` (a connection error's message names the TLS setting — litellm's an SSL context at
    an address, which no two runs share, the SDK's ``default`` — compared without it)."""
    got = {}
    for sdk in (True, False):
        monkeypatch.setenv(litellm_sdk.SWITCH, "1" if sdk else "0")
        base = http_server(**server).base_url[: -len("/v1")] if server else f"http://127.0.0.1:{unused_tcp_port}"
        spec = ModelSpec(id=MODEL, api_base=base, api_key_env="MASBENCH_TEST_KEY", timeout_s=timeout_s)
        client = LitellmClient()
        with pytest.raises(Exception) as info:
            await client(_attempt(spec))
        await client.aclose()
        exc = info.value
        told = re.sub(r"ssl:(default|<[^>]*>)", "ssl:…", errors.describe(exc))
        got[sdk] = (type(exc), told, errors.is_retryable(exc), errors.systemic_reason(exc) is not None,
                    errors.retry_after_s(exc))
    assert got[True] == got[False]
    if server and server.get("retry_after"):
        assert got[True][4] == float(server["retry_after"])
