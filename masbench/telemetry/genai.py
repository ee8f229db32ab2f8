"""The OpenTelemetry GenAI semantic conventions we emit (opentelemetry-semantic-conventions as of
v1.41, the ``gen_ai_latest_experimental`` set of ``OTEL_SEMCONV_STABILITY_OPT_IN``) as plain
constants, and the pure functions that turn our values into their attribute values: the provider
name of a model id, the request model, the content JSON of ``gen_ai.input.messages`` /
``gen_ai.output.messages``, the allow-listed request parameters and the ``error.type`` of an
error line. Nothing here imports OpenTelemetry.

masbench is a new instrumentation, so it emits the latest experimental conventions only (the
conventions ask *existing* instrumentations to keep their old names unless opted in).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

SCHEMA_URL = "https://opentelemetry.io/schemas/1.41.0"
"""The semantic conventions version the attribute names below follow."""

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
FINISH_REASONS = "gen_ai.response.finish_reasons"
AGENT_NAME = "gen_ai.agent.name"
WORKFLOW_NAME = "gen_ai.workflow.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
ERROR_TYPE = "error.type"
TOOL_CALLS_REQUESTED = "masbench.tool_calls"
"""On a ``chat`` span: how many tool calls the reply asked for (the conventions have no count)."""
TOOLS_OFFERED = "masbench.tools"
"""On a ``chat`` span: the names of the tools the request offered (never their schemas)."""
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

CHAT = "chat"
INVOKE_AGENT = "invoke_agent"
INVOKE_WORKFLOW = "invoke_workflow"
EXECUTE_TOOL = "execute_tool"

CONTENT_ATTRIBUTES = (INPUT_MESSAGES, OUTPUT_MESSAGES, TOOL_CALL_ARGUMENTS, TOOL_CALL_RESULT)
"""The attributes that carry model or tool text: set only when content capture is opted in."""

REQUEST_PARAMS = {"temperature": "gen_ai.request.temperature", "max_tokens": "gen_ai.request.max_tokens",
                  "top_p": "gen_ai.request.top_p", "top_k": "gen_ai.request.top_k", "seed": "gen_ai.request.seed",
                  "frequency_penalty": "gen_ai.request.frequency_penalty",
                  "presence_penalty": "gen_ai.request.presence_penalty", "stop": "gen_ai.request.stop_sequences"}
"""The request parameters exported (request key → attribute): an allow-list, so nothing else a
model's ``params`` holds (a key, a header) can reach a span."""

# litellm's provider prefix → the conventions' well-known gen_ai.provider.name (others: the prefix)
_PROVIDERS = {"openai": "openai", "text-completion-openai": "openai", "azure": "azure.ai.openai",
              "azure_ai": "azure.ai.inference", "anthropic": "anthropic", "gemini": "gcp.gemini",
              "vertex_ai": "gcp.vertex_ai", "vertex_ai_beta": "gcp.vertex_ai", "bedrock": "aws.bedrock",
              "cohere": "cohere", "cohere_chat": "cohere", "watsonx": "ibm.watsonx.ai", "perplexity": "perplexity",
              "xai": "x_ai", "deepseek": "deepseek", "groq": "groq", "mistral": "mistral_ai"}

TAGS = {"run_id": "masbench.run_id", "design": "masbench.design", "task_id": "masbench.task_id",
        "seed": "masbench.seed", "purpose": "masbench.purpose", "node": "masbench.node", "agent": "masbench.agent"}
"""A call's / design run's tags (the store's run columns) → their ``masbench.*`` attributes."""


def provider_name(model_id: str) -> str:
    """``gen_ai.provider.name`` of a model id: litellm's provider prefix mapped to the conventions'
    well-known value (``gemini/…`` → ``gcp.gemini``); an unknown prefix as is (``sim``,
    ``hosted_vllm``, ``openrouter``); a bare id is litellm's default, ``openai``."""
    if "/" not in model_id:
        return "openai"
    head = model_id.split("/", 1)[0]
    return _PROVIDERS.get(head, head)


def request_model(model_id: str) -> str:
    """``gen_ai.request.model``: the id without its provider prefix (``openai/gpt-4o`` → ``gpt-4o``)."""
    return model_id.split("/", 1)[1] if "/" in model_id else model_id


def tag_attributes(tags: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``masbench.*`` attributes of a tags dict (unknown keys and None values left out)."""
    if not tags:
        return {}
    return {TAGS[k]: v for k, v in tags.items() if k in TAGS and v is not None}


def request_attributes(request: Mapping[str, Any]) -> dict[str, Any]:
    """``gen_ai.request.*`` of the allow-listed parameters a request carries (see :data:`REQUEST_PARAMS`)."""
    out: dict[str, Any] = {}
    for key, attr in REQUEST_PARAMS.items():
        v = request.get(key)
        if v is None:
            continue
        if key == "stop":
            v = [v] if isinstance(v, str) else [str(s) for s in v]
            if not v:
                continue
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        out[attr] = v
    return out


def server_attributes(api_base: str | None) -> dict[str, Any]:
    """``server.address`` / ``server.port`` of a model's ``api_base`` (host and port only: never
    a path, query or user info)."""
    if not api_base:
        return {}
    try:
        u = urlsplit(api_base)
        host, port = u.hostname, u.port
    except ValueError:
        return {}
    out: dict[str, Any] = {}
    if host:
        out[SERVER_ADDRESS] = host
        if port:
            out[SERVER_PORT] = port
    return out


def error_type(error: str) -> str:
    """``error.type`` of a call's error line (``RateLimitError[429]: …`` → ``RateLimitError[429]``,
    ``usage_missing: …`` → ``usage_missing``): the low-cardinality part before the message."""
    head = error.split(":", 1)[0].strip()
    return head[:80] or "error"


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _parts(m: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = m.get("content")
    parts: list[dict[str, Any]] = []
    if m.get("role") == "tool":
        parts.append({"type": "tool_call_response", "id": m.get("tool_call_id"), "response": content})
    elif isinstance(content, str):
        if content:
            parts.append({"type": "text", "content": content})
    elif isinstance(content, Sequence):
        for p in content:
            if isinstance(p, Mapping) and p.get("type") == "text":
                parts.append({"type": "text", "content": p.get("text", "")})
            elif isinstance(p, Mapping):
                parts.append({"type": str(p.get("type", "unknown")), "content": json.dumps(p, default=str)})
            else:
                parts.append({"type": "text", "content": str(p)})
    elif content is not None:
        parts.append({"type": "text", "content": json.dumps(content, default=str)})
    for tc in m.get("tool_calls") or ():
        fn = tc.get("function") or {}
        parts.append({"type": "tool_call", "id": tc.get("id"), "name": fn.get("name"),
                      "arguments": _arguments(fn.get("arguments"))})
    return parts


def input_messages(messages: Sequence[Mapping[str, Any]]) -> str:
    """``gen_ai.input.messages``: the request's chat messages as the conventions' JSON
    (``[{"role", "parts": [{"type": "text", "content"}, …], "name"?}]``; tool calls as
    ``tool_call`` parts, a tool message as a ``tool_call_response`` part)."""
    out = []
    for m in messages:
        msg: dict[str, Any] = {"role": m.get("role", "user"), "parts": _parts(m)}
        if m.get("name"):
            msg["name"] = m["name"]
        out.append(msg)
    return json.dumps(out, ensure_ascii=False, default=str)


def output_messages(text: str, finish_reason: str | None,
                    tool_calls: Sequence[Mapping[str, Any]] | None = None) -> str:
    """``gen_ai.output.messages``: the reply as one assistant message with its finish reason (its
    tool calls as ``tool_call`` parts after its text)."""
    m: dict[str, Any] = {"role": "assistant", "content": text or None, "tool_calls": tool_calls}
    return json.dumps([{"role": "assistant", "parts": _parts(m), "finish_reason": finish_reason or "stop"}],
                      ensure_ascii=False, default=str)


def tool_names(tools: Sequence[Any]) -> list[str]:
    """The function names of a request's ``tools`` (OpenAI shape ``{"type": "function",
    "function": {"name", …}}``), in order."""
    out: list[str] = []
    for t in tools:
        fn = t.get("function") if isinstance(t, Mapping) else None
        name = fn.get("name") if isinstance(fn, Mapping) else (t.get("name") if isinstance(t, Mapping) else None)
        if name:
            out.append(str(name))
    return out


__all__ = ["CACHE_CREATION_TOKENS", "CACHE_READ_TOKENS", "CHAT", "CONTENT_ATTRIBUTES", "EXECUTE_TOOL", "INVOKE_AGENT",
           "INVOKE_WORKFLOW", "REQUEST_PARAMS", "SCHEMA_URL", "TAGS", "error_type", "input_messages",
           "output_messages", "provider_name", "request_attributes", "request_model", "server_attributes",
           "tag_attributes", "tool_names"]
