"""The OpenAI chat-completions wire format the fake server speaks: usage counting, JSON bodies,
server-sent-event streams and error bodies."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web


def _content_chars(content: Any) -> int:
    """Characters of text in a message ``content`` (a string or a list of parts)."""
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, Mapping):
                text = part.get("text")
                if isinstance(text, str):
                    total += len(text)
            elif isinstance(part, str):
                total += len(part)
        return total
    return len(str(content))


def _error_response(status: int, code: str, message: str) -> web.Response:
    body = {"error": {"message": message, "type": code, "param": None, "code": code}}
    return web.Response(status=status, text=json.dumps(body), content_type="application/json")
