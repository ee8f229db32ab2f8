"""What the metering endpoint sends and reads, without a server: the Chat Completions bodies and
stream chunks of one call (masbench.llm.endpoint) and the Anthropic Messages translation both ways
(masbench.llm.endpoint_anthropic). Expected bodies are written out by hand from the two wire
formats."""

from __future__ import annotations

import json
import time

import pytest

from masbench.llm.endpoint import completion_body, stream_chunks
from masbench.llm.endpoint_anthropic import chat_request, error, message_body
from masbench.llm.program_cell import Refusal
from masbench.llm.result import CallResult
from masbench.llm.usage import Usage


def _res(text: str = "4", *, fresh: int = 10, cached: int = 0, visible: int = 3, reasoning: int = 0,
         finish: str | None = "stop", tool_calls=None) -> CallResult:
    u = Usage(prompt_fresh=fresh, cached_read=cached, completion_visible=visible, reasoning=reasoning)
    return CallResult(text=text, model="sim/p60", alias="default", call_id="abc", simulated=True, usage=u, counted=u,
                      cost_usd=0.0, finish_reason=finish, tool_calls=tool_calls)


def test_a_completion_body_and_its_usage():
    before = int(time.time())
    body = completion_body(_res(), "default")
    assert before <= body["created"] <= int(time.time())  # Unix seconds of the reply
    assert before <= stream_chunks(_res(), "default")[0]["created"] <= int(time.time())
    assert body["id"] == "chatcmpl-abc" and body["object"] == "chat.completion" and body["model"] == "default"
    assert body["choices"] == [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop",
                                "logprobs": None}]
    # no cached or reasoning tokens: no details objects
    assert body["usage"] == {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
    # 6 fresh + 4 cached = 10 prompt tokens; 3 visible + 2 reasoning = 5 completion tokens
    u = completion_body(_res(fresh=6, cached=4, reasoning=2), "default")["usage"]
    assert u == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                 "prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens_details": {"reasoning_tokens": 2}}


def test_tool_calls_in_a_body_and_the_finish_reason():
    calls = [{"id": "call_x", "function": {"name": "search", "arguments": '{"q": "a"}'}},
             {"function": {"name": "read"}}]  # no id, no arguments
    nameless = completion_body(_res("", tool_calls=[{"function": {}}]), "m")["choices"][0]["message"]["tool_calls"]
    assert nameless == [{"id": "call_0", "type": "function", "function": {"name": "", "arguments": "{}"}}]
    msg = completion_body(_res("", finish=None, tool_calls=calls), "m")
    assert msg["choices"][0]["message"] == {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call_x", "type": "function", "function": {"name": "search", "arguments": '{"q": "a"}'}},
                       {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]}
    assert msg["choices"][0]["finish_reason"] == "tool_calls"  # none given, tool calls made
    # text beside tool calls is kept; a given finish reason is kept
    both = completion_body(_res("let me look", finish="length", tool_calls=calls[:1]), "m")["choices"][0]
    assert both["message"]["content"] == "let me look" and both["finish_reason"] == "length"
    assert completion_body(_res("x", finish=None), "m")["choices"][0]["finish_reason"] == "stop"
    assert completion_body(_res("", finish=None), "m")["choices"][0]["message"] == {"role": "assistant", "content": ""}


def test_stream_chunks_end_with_the_usage():
    calls = [{"function": {"name": "search", "arguments": "{}"}}]
    first, second, last = stream_chunks(_res("", finish=None, tool_calls=calls), "m")
    assert first["object"] == "chat.completion.chunk" and first["id"] == "chatcmpl-abc" and first["model"] == "m"
    assert first["choices"] == [{"index": 0, "finish_reason": None, "delta": {
        "role": "assistant", "content": None,
        "tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                        "function": {"name": "search", "arguments": "{}"}}]}}]
    assert second["choices"] == [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]
    assert last["choices"] == [] and last["usage"] == {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
    plain = stream_chunks(_res("4"), "m")
    assert plain[0]["choices"][0]["delta"] == {"role": "assistant", "content": "4"}
    assert stream_chunks(_res(""), "m")[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}


def test_a_messages_request_as_chat():
    body = {"model": "default", "max_tokens": 50, "system": [{"type": "text", "text": "Be "}, {"type": "text", "text": "terse."}],
            "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "text", "text": "Yes?"}]},
                         {"role": "user", "content": "2+2?"}],
            "temperature": 0.0, "top_p": 0.9, "stop_sequences": ["END"], "metadata": {"user_id": "critic"}}
    assert chat_request(body) == {
        "model": "default", "max_tokens": 50, "temperature": 0.0, "top_p": 0.9, "stop": ["END"], "user": "critic",
        "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"},
                     {"role": "assistant", "content": "Yes?"}, {"role": "user", "content": "2+2?"}]}
    # no system, no options, metadata without a user id: none of them appear
    short = chat_request({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}],
                          "metadata": {"other": 1}, "system": ""})
    assert short == {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}


_TEXT_ONLY = "only text blocks are served on /v1/messages (got {!r}); use /v1/chat/completions"


@pytest.mark.parametrize("extra, message", [
    ({"stream": True}, "'stream' is not served on /v1/messages; use /v1/chat/completions"),
    ({"tools": [{"name": "t"}]}, "'tools' is not served on /v1/messages; use /v1/chat/completions"),
    ({"tool_choice": {"type": "auto"}}, "'tool_choice' is not served on /v1/messages; use /v1/chat/completions"),
    ({"messages": []}, "messages must be a non-empty list"),
    ({"messages": {"role": "user"}}, "messages must be a non-empty list"),
    ({"messages": [{"role": "system", "content": "x"}]}, "messages[0]: role must be user or assistant"),
    ({"messages": [{"role": "user", "content": "x"}, "y"]}, "messages[1]: role must be user or assistant"),
    ({"messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]},
     "messages[0]: " + _TEXT_ONLY.format("image")),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]}, "messages[0]: " + _TEXT_ONLY.format("text")),
    ({"messages": [{"role": "user", "content": ["plain"]}]}, "messages[0]: " + _TEXT_ONLY.format("str")),
    ({"messages": [{"role": "user", "content": 7}]}, "messages[0]: content must be a string or a list of text blocks"),
    ({"system": [{"type": "document"}]}, "system: " + _TEXT_ONLY.format("document")),
    ({"max_tokens": None}, "max_tokens is required (an integer)"),
    ({"max_tokens": "50"}, "max_tokens is required (an integer)"),
])
def test_what_a_messages_request_may_not_be(extra, message):
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], **extra}
    with pytest.raises(Refusal) as ei:
        chat_request(body)
    assert (ei.value.status, ei.value.code, ei.value.message) == (400, "invalid_request_error", message)


def test_a_message_body_counts_cached_tokens_apart():
    # 6 fresh + 4 cached prompt tokens: Anthropic's input_tokens is the 6 not read from the cache
    m = message_body(_res("four", fresh=6, cached=4, visible=2, finish="length"), "default")
    assert m == {"id": "msg_abc", "type": "message", "role": "assistant", "model": "default",
                 "content": [{"type": "text", "text": "four"}], "stop_reason": "max_tokens", "stop_sequence": None,
                 "usage": {"input_tokens": 6, "output_tokens": 2, "cache_read_input_tokens": 4,
                           "cache_creation_input_tokens": 0}}
    assert [message_body(_res(finish=f), "d")["stop_reason"] for f in ("stop", None, "tool_calls", "content_filter")] \
        == ["end_turn", "end_turn", "tool_use", "end_turn"]


@pytest.mark.parametrize("status, kind", [(400, "invalid_request_error"), (401, "authentication_error"),
                                          (403, "permission_error"), (404, "not_found_error"), (502, "api_error"),
                                          (418, "invalid_request_error")])
def test_a_refusal_in_anthropics_error_shape(status, kind):
    r = error(Refusal(status, "some_code", "why"))
    assert r.status == status and r.headers["x-should-retry"] == "false" and r.content_type == "application/json"
    # the header as sent (aiohttp's content_type property lower-cases what it parses; some SDKs compare the raw
    # value case-sensitively, e.g. `endswith("json")`)
    assert r.headers["Content-Type"] == "application/json; charset=utf-8"
    assert r.text is not None and json.loads(r.text) == {"type": "error", "error": {"type": kind, "message": "some_code: why"}}
