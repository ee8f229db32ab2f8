"""The conventions' values of our data (provider names, request model, the allow-listed request
parameters, server host, error type, the message JSON) and when the environment turns export and
content capture on."""

from __future__ import annotations

import json

import pytest

from masbench import telemetry
from masbench.telemetry import genai as g

from otelfix import clean_otel_env, otlp_receiver  # noqa: F401 - fixtures


@pytest.mark.parametrize("model_id, provider, model", [
    ("openai/gpt-4o-mini", "openai", "gpt-4o-mini"), ("gpt-4o", "openai", "gpt-4o"),
    ("anthropic/claude-3-5-haiku", "anthropic", "claude-3-5-haiku"), ("gemini/gemini-2.0-flash", "gcp.gemini",
                                                                     "gemini-2.0-flash"),
    ("bedrock/anthropic.claude-3", "aws.bedrock", "anthropic.claude-3"), ("sim/p60", "sim", "p60"),
    ("openrouter/meta-llama/llama-3-8b", "openrouter", "meta-llama/llama-3-8b"),
    ("hosted_vllm/Qwen2.5-7B", "hosted_vllm", "Qwen2.5-7B"), ("mistral/mistral-small", "mistral_ai", "mistral-small"),
])
def test_provider_and_request_model_of_a_model_id(model_id, provider, model):
    assert g.provider_name(model_id) == provider and g.request_model(model_id) == model


def test_only_the_allow_listed_request_parameters_are_exported():
    req = {"temperature": 0.7, "max_tokens": 100, "stop": "END", "seed": 3, "api_key": "sk-x",
           "extra_headers": {"Authorization": "Bearer x"}, "top_p": True, "response_format": {"type": "json"}}
    assert g.request_attributes(req) == {"gen_ai.request.temperature": 0.7, "gen_ai.request.max_tokens": 100,
                                         "gen_ai.request.stop_sequences": ["END"], "gen_ai.request.seed": 3}


def test_the_server_is_host_and_port_only():
    assert g.server_attributes("https://u:secret@api.example.com:8443/v1?key=secret") == {
        "server.address": "api.example.com", "server.port": 8443}
    assert g.server_attributes("http://localhost/v1") == {"server.address": "localhost"}
    assert g.server_attributes(None) == {} and g.server_attributes("http://[bad") == {}


def test_error_type_is_the_low_cardinality_head():
    assert g.error_type("RateLimitError[429]: slow down") == "RateLimitError[429]"
    assert g.error_type("usage_missing: the provider returned no token usage") == "usage_missing"
    assert g.error_type("") == "error"


def test_messages_become_the_conventions_json_with_tool_calls_and_responses():
    msgs = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "What is 6*7?"}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "calc", "arguments": '{"e": "6*7"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
            {"role": "user", "content": "Thanks", "name": "alice"}]
    assert json.loads(g.input_messages(msgs)) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "What is 6*7?"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "calc", "arguments": {"e": "6*7"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "42"}]},
        {"role": "user", "parts": [{"type": "text", "content": "Thanks"}], "name": "alice"}]
    assert json.loads(g.output_messages("Answer: 42", "length")) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Answer: 42"}], "finish_reason": "length"}]


@pytest.mark.slow
def test_the_environment_decides_export_and_content(clean_otel_env, otlp_receiver):
    mp = clean_otel_env
    assert telemetry.env_reason() is None and not telemetry.capture_from_env()
    mp.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlp_receiver.url + "/v1/traces")
    assert telemetry.env_reason() == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set"
    mp.setenv("OTEL_SDK_DISABLED", "true")
    assert telemetry.env_reason() is None
    mp.delenv("OTEL_SDK_DISABLED")
    mp.setenv("OTEL_TRACES_EXPORTER", "none")
    assert telemetry.env_reason() is None
    mp.delenv("OTEL_TRACES_EXPORTER")
    for v, on in (("true", True), ("SPAN_ONLY", True), ("span_and_event", True), ("false", False),
                  ("NO_CONTENT", False), ("event_only", False)):
        mp.setenv(telemetry.CAPTURE_VAR, v)
        assert telemetry.capture_from_env() is on, v
    # decided on first use: the variable turns it on, with the OTLP exporter (a worker can follow)
    assert telemetry.enabled()
    assert telemetry.carrier() == {"traceparent": None, "capture": False}
    with telemetry.run("r", "s", cells=0, simulated=True):
        tp = telemetry.carrier()["traceparent"]
    telemetry.disable()  # flushes: the span reached the receiver
    assert not telemetry.enabled() and telemetry.carrier() is None
    (span,) = otlp_receiver.spans
    assert span.name == "run s" and tp is not None and tp.split("-")[:3] == ["00", span.trace_id, span.span_id]
