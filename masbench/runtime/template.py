"""Prompt templates: ``{name}`` and ``{name.field}`` references, parsed once at compile time.

A ``{...}`` whose content is not a plain (dotted) name is literal text, so JSON examples in
prompts need no escaping; ``{{`` and ``}}`` are literal braces.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_\-]*)(?:\.([A-Za-z_][A-Za-z0-9_\-]*))?\}")

Part = str | tuple[str, str | None]


def parse(text: str) -> list[Part]:
    """Split a template into literal strings and ``(name, field)`` references."""
    parts: list[Part] = []
    pos = 0
    buf = []
    for m in _TOKEN.finditer(text):
        buf.append(text[pos:m.start()])
        tok = m.group(0)
        if tok == "{{":
            buf.append("{")
        elif tok == "}}":
            buf.append("}")
        else:
            if buf:
                s = "".join(buf)
                if s:
                    parts.append(s)
                buf = []
            parts.append((m.group(1), m.group(2)))
        pos = m.end()
    buf.append(text[pos:])
    s = "".join(buf)
    if s:
        parts.append(s)
    return parts


def refs(text: str | None) -> list[tuple[str, str | None]]:
    """The references in a template, in order."""
    if not text:
        return []
    return [p for p in parse(text) if isinstance(p, tuple)]


def param_text(v: Any) -> str:
    """How a design param is written into a prompt."""
    if isinstance(v, (list, tuple)):
        return ", ".join(param_text(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


Getter = Callable[[Any], str]


class Template:
    """A compiled template: literals and getters, rendered by joining."""

    __slots__ = ("parts", "names", "static")

    def __init__(self, parts: list[str | Getter], names: set[str]):
        self.parts = tuple(parts)
        self.names = names
        """Every name the template references (after params were substituted)."""
        literals = [p for p in parts if isinstance(p, str)]
        self.static = "".join(literals) if len(literals) == len(parts) else None

    def render(self, env: Any) -> str:
        if self.static is not None:
            return self.static
        return "".join(p if isinstance(p, str) else p(env) for p in self.parts)


def compile_template(text: str, params: dict[str, Any], resolve: Callable[[str, str | None], Getter]) -> Template:
    """Substitute params now; turn every other reference into a getter via ``resolve``."""
    out: list[str | Getter] = []
    names: set[str] = set()
    for p in parse(text):
        if isinstance(p, str):
            if out and isinstance(out[-1], str):
                out[-1] = out[-1] + p
            else:
                out.append(p)
            continue
        name, field = p
        if name in params and field is None:
            s = param_text(params[name])
            if out and isinstance(out[-1], str):
                out[-1] = out[-1] + s
            else:
                out.append(s)
            continue
        names.add(name)
        out.append(resolve(name, field))
    return Template(out, names)


def substitute_params(value: Any, params: dict[str, Any]) -> Any:
    """Resolve a ``{param}`` template in a scalar node field (``repeat``, ``max_rounds``, ``map``).
    A field that is exactly ``{name}`` takes the param's value (any type)."""
    if not isinstance(value, str):
        return value
    m = re.fullmatch(r"\s*\{([A-Za-z_][A-Za-z0-9_\-]*)\}\s*", value)
    if m:
        if m.group(1) not in params:
            raise KeyError(m.group(1))
        return params[m.group(1)]
    return value
