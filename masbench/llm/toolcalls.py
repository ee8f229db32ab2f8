"""Function calling on the wire: the tool calls of a reply in the one shape masbench keeps
(the OpenAI protocol's ``{"id", "type": "function", "function": {"name", "arguments": "<json
text>"}}``), whether it came as a whole message or as streamed deltas, and what a request's
``tools`` weigh (their names for the ``calls`` row, their size for the budget's prompt bound).

Providers' objects (litellm's ``ChatCompletionMessageToolCall``, the ``openai`` SDK's pydantic
models, plain dicts from a JSON body) are read by attribute or key alike; nothing here imports
litellm. A model's arguments stay the text it wrote: they are validated later, by the tool's
schema (:func:`masbench.tools.dispatch`), never evaluated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _get(obj: object, key: str) -> Any:
    """``obj[key]`` for a mapping, else ``obj.key`` (None when absent)."""
    if isinstance(obj, Mapping):
        return obj.get(key)  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    return getattr(obj, key, None)


def _arguments_text(raw: object) -> str:
    """The arguments as JSON text: a string as sent, a mapping (some providers decode it) as JSON."""
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw
    return json.dumps(raw, ensure_ascii=False, default=str)


def normalize(calls: Iterable[object] | None) -> list[dict[str, Any]] | None:
    """The tool calls of a reply message (``message.tool_calls``) as OpenAI-shape dicts, in order;
    None when there are none. An entry without a function name is dropped (nothing to call); a
    missing id gets ``call_{i}`` so a later tool message can answer it."""
    if not calls:
        return None
    out: list[dict[str, Any]] = []
    for i, tc in enumerate(calls):
        fn = _get(tc, "function")
        name = _get(fn, "name") if fn is not None else None
        if not name:
            continue
        out.append({"id": str(_get(tc, "id") or f"call_{i}"), "type": "function",
                    "function": {"name": str(name), "arguments": _arguments_text(_get(fn, "arguments"))}})
    return out or None


class DeltaAssembler:
    """Joins the tool-call deltas of a streamed reply: the first delta of a call (by its
    ``index``) carries its id and name, later ones more of its ``arguments`` text."""

    __slots__ = ("_calls",)

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, Any]] = {}

    def add(self, deltas: Iterable[object] | None) -> None:
        """Take one chunk's ``delta.tool_calls``."""
        for d in deltas or ():
            idx = _get(d, "index")
            slot = self._calls.setdefault(int(idx) if isinstance(idx, int) else len(self._calls),
                                          {"id": None, "name": "", "arguments": []})
            if _get(d, "id"):
                slot["id"] = str(_get(d, "id"))
            fn = _get(d, "function")
            if fn is not None:
                if _get(fn, "name") and not slot["name"]:
                    slot["name"] = str(_get(fn, "name"))
                part = _get(fn, "arguments")
                if part:
                    slot["arguments"].append(_arguments_text(part))

    def result(self) -> list[dict[str, Any]] | None:
        """The assembled calls in index order (None: the stream carried none)."""
        return normalize([{"id": s["id"], "function": {"name": s["name"], "arguments": "".join(s["arguments"])}}
                          for _, s in sorted(self._calls.items())])


def tool_names(tools: Sequence[object] | None) -> list[str]:
    """The function names of a request's ``tools`` (what ``calls.request`` keeps of them)."""
    names: list[str] = []
    for t in tools or ():
        fn = _get(t, "function")
        name = _get(fn, "name") if fn is not None else _get(t, "name")
        if name:
            names.append(str(name))
    return names


def schema_bytes(tools: Sequence[object] | None) -> int:
    """UTF-8 bytes of a request's ``tools`` as compact JSON: a bound on the prompt tokens they are
    billed (a token is at least one byte; providers render the schemas into the prompt)."""
    if not tools:
        return 0
    return len(json.dumps(list(tools), ensure_ascii=False, separators=(",", ":"), default=str).encode())


__all__ = ["DeltaAssembler", "normalize", "schema_bytes", "tool_names"]
