"""The Anthropic Messages wire of the metering endpoint (``POST /v1/messages``): a request in
Anthropic's shape becomes the same one gateway call of the cell as a Chat Completions request
(:meth:`~masbench.llm.program_cell.ProgramCell.complete`), and its reply is sent back in
Anthropic's shape (``content`` blocks, ``stop_reason``, ``usage.input_tokens`` / ``output_tokens``).

Served: text conversations (``system`` as a string or text blocks, user/assistant turns of strings
or text blocks), ``max_tokens``, ``temperature``, ``top_p``, ``stop_sequences``, and
``metadata.user_id`` as the ``user`` field of attribution. Not served (refused with a 400 that says
so, never half-translated): ``stream``, ``tools`` and tool blocks, images and documents — a
program that needs them uses ``/v1/chat/completions``."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from .program_cell import Refusal
from .result import CallResult

_STOP_REASON = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
_ERROR_TYPE = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 502: "api_error"}


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
                kind = block.get("type") if isinstance(block, dict) else type(block).__name__
                raise Refusal(400, "invalid_request_error", f"{where}: only text blocks are served on /v1/messages "
                                                            f"(got {kind!r}); use /v1/chat/completions")
            parts.append(block["text"])
        return "".join(parts)
    raise Refusal(400, "invalid_request_error", f"{where}: content must be a string or a list of text blocks")


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """The Chat Completions request a Messages request stands for (raises :class:`Refusal`)."""
    for key in ("stream", "tools", "tool_choice"):
        if body.get(key):
            raise Refusal(400, "invalid_request_error", f"{key!r} is not served on /v1/messages; "
                                                        "use /v1/chat/completions")
    messages: list[dict[str, Any]] = []
    if body.get("system"):
        messages.append({"role": "system", "content": _text(body["system"], "system")})
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        raise Refusal(400, "invalid_request_error", "messages must be a non-empty list")
    for i, m in enumerate(turns):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise Refusal(400, "invalid_request_error", f"messages[{i}]: role must be user or assistant")
        messages.append({"role": m["role"], "content": _text(m.get("content"), f"messages[{i}]")})
    if not isinstance(body.get("max_tokens"), int):
        raise Refusal(400, "invalid_request_error", "max_tokens is required (an integer)")
    out: dict[str, Any] = {"model": body.get("model"), "messages": messages, "max_tokens": body["max_tokens"]}
    for a, b in (("temperature", "temperature"), ("top_p", "top_p"), ("stop_sequences", "stop")):
        if body.get(a) is not None:
            out[b] = body[a]
    meta = body.get("metadata")
    if isinstance(meta, dict) and meta.get("user_id"):
        out["user"] = meta["user_id"]
    return out


def message_body(res: CallResult, alias: str) -> dict[str, Any]:
    """A ``message`` object for one call (what the call is counted, as ``usage``)."""
    return {"id": f"msg_{res.call_id}", "type": "message", "role": "assistant", "model": alias,
            "content": [{"type": "text", "text": res.text}],
            "stop_reason": _STOP_REASON.get(res.finish_reason or "stop", "end_turn"), "stop_sequence": None,
            "usage": {"input_tokens": res.prompt_tokens - res.cached_tokens, "output_tokens": res.completion_tokens,
                      "cache_read_input_tokens": res.cached_tokens, "cache_creation_input_tokens": 0}}


def error(r: Refusal) -> web.Response:
    """A refusal in Anthropic's error shape (``x-should-retry: false``)."""
    body = {"type": "error", "error": {"type": _ERROR_TYPE.get(r.status, "invalid_request_error"),
                                       "message": f"{r.code}: {r.message}"}}
    return web.Response(status=r.status, text=json.dumps(body), content_type="application/json",
                        headers={"x-should-retry": "false"})


__all__ = ["chat_request", "error", "message_body"]
