"""The fake server's function calling: what it answers a chat completion that offers ``tools``.

A request that carries ``tools`` (and no ``tool_choice: "none"``) is a tool turn:

- with a ``ServerConfig.tool_script``, turn *t* (the number of assistant messages with
  ``tool_calls`` already in the request) answers the script's entry *t*: one ``{"name",
  "arguments"}`` call, or a list of them (parallel calls in one reply); ``arguments`` is a mapping
  (sent as its JSON) or a string (sent verbatim, so a test can send arguments that do not parse).
  Past the script's end the reply is text, as below;
- without a script, a request whose last message is not a ``tool`` message gets one call of the
  first tool offered with ``{"query": <the last user message's first 40 characters>}``;
- a request whose last message is a ``tool`` message (and no script turn left) gets the text
  ``Answer: <the first line of that tool message's content>``.

A tool-call reply has ``content: null``, ``finish_reason: "tool_calls"`` and call ids
``call_<request>_<i>``. The schemas sent count as prompt characters, like message text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .wire import _content_chars

ToolCall = dict[str, Any]
"""One tool call as the wire sends it: ``{"id", "type": "function", "function": {"name", "arguments"}}``."""


def _text(content: Any) -> str:
    """The text of a message content (a string or a list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content)  # pyright: ignore[reportUnknownMemberType,reportUnknownArgumentType]
    return "" if content is None else str(content)


def _first_tool(tools: Sequence[Any]) -> str:
    for t in tools:
        fn = t.get("function") if isinstance(t, Mapping) else None
        if isinstance(fn, Mapping) and fn.get("name"):
            return str(fn["name"])  # pyright: ignore[reportUnknownArgumentType]
    return "tool"


def _turn(messages: Sequence[Any]) -> int:
    """How many tool-call turns the conversation already holds."""
    return sum(1 for m in messages if isinstance(m, Mapping) and m.get("role") == "assistant" and m.get("tool_calls"))


def _call(entry: Mapping[str, Any], rid: int, i: int) -> ToolCall:
    args = entry.get("arguments", {})
    return {"id": f"call_{rid}_{i}", "type": "function",
            "function": {"name": str(entry.get("name", "tool")),
                         "arguments": args if isinstance(args, str) else json.dumps(args)}}


def tool_turn(payload: Mapping[str, Any], messages: Sequence[Any], script: Sequence[Any] | None,
              n_request: int) -> tuple[list[ToolCall] | None, str | None]:
    """What a request that may offer tools is answered: ``(tool_calls, None)`` for a tool turn,
    ``(None, text)`` for the final answer after a tool result, ``(None, None)`` when tools play no
    part (the server's usual reply)."""
    tools = payload.get("tools")
    if not tools or not isinstance(tools, list) or payload.get("tool_choice") == "none":
        return None, None
    last = messages[-1] if messages and isinstance(messages[-1], Mapping) else {}
    if script is not None:
        t = _turn(messages)
        if t < len(script):
            step = script[t]
            entries = step if isinstance(step, list) else [step]
            return [_call(e, n_request, i) for i, e in enumerate(entries) if isinstance(e, Mapping)], None
    elif last.get("role") != "tool":
        user = next((m for m in reversed(messages) if isinstance(m, Mapping) and m.get("role") == "user"), {})
        return [_call({"name": _first_tool(tools), "arguments": {"query": _text(user.get("content"))[:40]}},
                      n_request, 0)], None
    if last.get("role") == "tool":
        lines = _text(last.get("content")).splitlines()
        return None, f"Answer: {lines[0] if lines else ''}"
    return None, None


def prompt_chars(payload: Mapping[str, Any], messages: Sequence[Any]) -> int:
    """Characters a request is billed as prompt: its messages' text, the tool calls assistant
    messages carry, and the ``tools`` schemas it sends."""
    chars = 0
    for m in messages:
        if isinstance(m, Mapping):
            chars += _content_chars(m.get("content"))
            if m.get("tool_calls"):
                chars += len(json.dumps(m["tool_calls"]))
    tools = payload.get("tools")
    if tools:
        chars += len(json.dumps(tools))
    return chars


__all__ = ["ToolCall", "prompt_chars", "tool_turn"]
