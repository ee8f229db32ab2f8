"""Node values: what a node produced, and how it is read back into prompts.

A value is small and immutable in practice: the text, the extracted normalized answers, the
parsed structured data (or a python function's return), or — for a fan-out, a shared channel or
a loop over a fan-out — the list of member values.
"""

from __future__ import annotations

import json
from typing import Any

OK = "ok"


class Val:
    """One node's value (or one branch's)."""

    __slots__ = ("text", "answers", "data", "items", "status", "error")

    def __init__(self, text: str = "", answers: tuple[str, ...] | None = None, data: Any = None,
                 items: list["Val"] | None = None, status: str = OK, error: str | None = None):
        self.text = text
        self.answers = answers
        """Extracted, normalized answers (None: nothing extractable)."""
        self.data = data
        """Parsed structured output (dict), a python function's return, or None."""
        self.items = items
        """Members of a fan-out / channel value (None for a single value)."""
        self.status = status
        """``ok``, ``error``, ``parse_failed``, ``budget_exhausted``, ``empty``, ``degraded``."""
        self.error = error

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        if self.items is not None:
            return f"Val(items={self.items!r}, status={self.status!r})"
        return f"Val({self.text[:40]!r}, answers={self.answers}, status={self.status!r})"

    @property
    def present(self) -> bool:
        """Has anything to show (text, data or members)."""
        if self.items is not None:
            return any(v.present for v in self.items)
        return bool(self.text) or self.data is not None

    def members(self) -> list["Val"]:
        """The member values (a single value is its own only member)."""
        return self.items if self.items is not None else [self]


def read(state: dict[str, Any], key: str, fan: bool) -> Val | None:
    """A value from langgraph state. Fan-out / channel keys hold ``(round, index, Val)`` entries
    accumulated by a list reducer; the latest round present is the current value."""
    v = state.get(key)
    if not fan or v is None:
        return v
    if not v:
        return None
    r = max(e[0] for e in v)
    entries = sorted((e for e in v if e[0] == r), key=lambda e: e[1])
    items = [e[2] for e in entries]
    bad = sum(1 for x in items if x.status != OK)
    status = OK if bad == 0 else ("error" if bad == len(items) else "degraded")
    return Val(items=items, status=status)


def fmt_data(x: Any) -> str:
    """A structured value as prompt text."""
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, list):
        return "\n".join(f"{i}. {fmt_data(e)}" for i, e in enumerate(x, 1))
    if isinstance(x, Val):
        return x.text
    return json.dumps(x, ensure_ascii=False, default=str)


def _single(v: Val, field: str | None) -> str:
    if field is None or field == "text":
        if v.text:
            return v.text
        return fmt_data(v.data) if v.data is not None else ""
    if field == "answer":
        return ", ".join(v.answers) if v.answers else ""
    if isinstance(v.data, dict):
        return fmt_data(v.data.get(field))
    return ""


def vtext(v: Val | None, field: str | None = None) -> str:
    """Render a value (or one of its fields) for a prompt. A fan-out renders as a numbered list
    of its members that have something to show."""
    if v is None:
        return ""
    if v.items is None:
        return _single(v, field)
    parts = []
    n = 0
    for m in v.items:
        s = _single(m, field) if m.items is None else vtext(m, field)
        if s:
            n += 1
            parts.append(f"[{n}] {s}")
    return "\n\n".join(parts)


def pyval(v: Val | None) -> Any:
    """A value as a python function sees it: members → list; else data, else answers, else text."""
    if v is None:
        return None
    if v.items is not None:
        return [pyval(m) for m in v.items]
    if v.data is not None:
        return v.data
    if v.answers:
        return v.answers[0] if len(v.answers) == 1 else list(v.answers)
    return v.text


def pyfield(v: Val | None, field: str) -> Any:
    """One field of a value as a python function sees it (per member for a fan-out)."""
    if v is None:
        return None
    if v.items is not None:
        return [pyfield(m, field) for m in v.items]
    if field == "answer":
        return (v.answers[0] if len(v.answers) == 1 else list(v.answers)) if v.answers else None
    if field == "text":
        return v.text
    return v.data.get(field) if isinstance(v.data, dict) else None


def truthy(x: Any) -> bool:
    """Truth of a structured field for loop conditions (``"true"``, ``"yes"``, ``"correct"`` count)."""
    if isinstance(x, str):
        return x.strip().lower() in ("true", "yes", "y", "correct", "1", "pass", "passed")
    if isinstance(x, list):
        return bool(x) and all(truthy(e) for e in x)
    return bool(x)
