"""The Anthropic Messages wire format (``POST /v1/messages``), so litellm's real ``anthropic/``
provider code can be pointed at the fake server.

Response shape (Anthropic's published format): ``{"type": "message", "role": "assistant",
"content": [{"type": "text", "text": …}], "stop_reason": "end_turn" | "max_tokens", "usage":
{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}}`` —
``input_tokens`` counts only the uncached part of the prompt. The usage object is
``ServerConfig.anthropic_usage`` verbatim when set. Faults (``fail_first``, ``fail_rate``) are
answered in Anthropic's error shape (:func:`anthropic_error`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from .config import ServerConfig
from .wire import _content_chars, _error_response

_STOP = {"stop": "end_turn", "length": "max_tokens"}
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error", 504: "timeout_error"}
"""Anthropic's error ``type`` per HTTP status (any other: ``api_error``)."""


async def anthropic_messages(cfg: ServerConfig, request: web.Request, n_request: int) -> web.Response:
    """Answer one Messages request with the configured reply and usage."""
    try:
        payload = json.loads(await request.read())
        messages = payload.get("messages") if isinstance(payload, dict) else None
        if not isinstance(messages, list):
            raise ValueError("'messages' must be a list")
    except ValueError as exc:
        return _error_response(400, "invalid_request_error", f"bad request: {exc}")
    model = cfg.model or str(payload.get("model") or "claude-fake")
    text = cfg.reply.format(model=model, n=n_request, seed=None, index=0) if "{" in cfg.reply else cfg.reply
    chars = _content_chars(payload.get("system")) + sum(
        _content_chars(m.get("content")) for m in messages if isinstance(m, Mapping))
    usage: dict[str, Any] = cfg.anthropic_usage if cfg.anthropic_usage is not None else {
        "input_tokens": cfg.prompt_tokens if cfg.prompt_tokens is not None else math.ceil(chars / 4),
        "output_tokens": cfg.completion_tokens if cfg.completion_tokens is not None else max(1, math.ceil(len(text) / 4)),
    }
    body: dict[str, Any] = {
        "id": f"msg_fake_{n_request}", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}] if text else [],
        "stop_reason": _STOP.get(cfg.finish_reason, cfg.finish_reason), "stop_sequence": None,
    }
    if not cfg.omit_usage:
        body["usage"] = usage
    return web.Response(text=json.dumps(body), content_type="application/json")


def anthropic_error(status: int, code: str, message: str) -> web.Response:
    """An error in Anthropic's shape: ``{"type": "error", "error": {"type", "message"}}`` (the
    fault's OpenAI-style ``code`` is not part of it)."""
    body = {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}
    return web.Response(status=status, text=json.dumps(body), content_type="application/json")


__all__ = ["anthropic_error", "anthropic_messages"]
