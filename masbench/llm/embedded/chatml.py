"""SmolLM2's chat format (ChatML), rendered exactly as its own chat template does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .locate import _DEFAULT_SYSTEM, _IM_END


def _text_of(content: Any) -> str:
    """Text of a message ``content``: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, Mapping):
                if isinstance(part.get("text"), str):
                    out.append(part["text"])
            elif isinstance(part, str):
                out.append(part)
        return "".join(out)
    return str(content)


def format_chatml(messages: list[Mapping[str, Any]]) -> str:
    """Render chat messages exactly as SmolLM2's own chat template does (ChatML, with the
    model's default system message when the conversation has none), ending with the
    assistant generation prompt.
    """
    parts: list[str] = []
    if not messages or messages[0].get("role") != "system":
        parts.append(f"<|im_start|>system\n{_DEFAULT_SYSTEM}{_IM_END}\n")
    for m in messages:
        role = str(m.get("role") or "user")
        if role in ("tool", "function"):
            role = "user"
        parts.append(f"<|im_start|>{role}\n{_text_of(m.get('content'))}{_IM_END}\n")
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)
