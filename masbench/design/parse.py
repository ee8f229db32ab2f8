"""Reply text → plain data, safely: the designer-specific parsing of what a model wrote. Nothing
here executes anything.

Cheapest first: a size limit on the text; the first fenced block (a ``python``/``bash`` block is
refused: designs are data, code is never run); a token scan that refuses YAML tags
(``!!python/...``), aliases (alias bombs) and deep nesting before anything is built; a safe parser
(PyYAML's safe composer via :func:`masbench.spec.yamlpos.parse_yaml`, ``json.loads`` as a
fallback). :class:`DesignLimits` says how big a generated design may be.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..spec.limits import YamlLimits
from ..spec.yamlpos import Located, YamlLimitExceeded, YamlSyntaxError, parse_yaml

SAFE_PYTHON = frozenset({"calculator", "sum_list", "majority", "identity"})
"""Registered python functions a generated design may call (pure, no I/O)."""
@dataclass(frozen=True)
class DesignLimits(YamlLimits):
    """What a generated design may be: the YAML limits of every file (:class:`YamlLimits`,
    tighter here: no aliases, no tags) plus design-shape limits. Anything over a limit is
    rejected (repeat / rounds / max_tokens are clamped instead, and the clamp is recorded as a
    repair)."""

    max_bytes: int = 65_536
    """Largest reply text (UTF-8 bytes) that is parsed at all."""
    max_depth: int = 12
    """Deepest YAML/JSON nesting."""
    allow_aliases: bool = False
    """Aliases refused outright (alias bombs)."""
    allow_tags: bool = False
    """Tags refused outright (``!!python/...``)."""
    max_nodes: int = 50
    """Most design nodes, loop bodies included."""
    max_repeat: int = 8
    """Largest ``repeat`` (clamped)."""
    max_rounds: int = 5
    """Largest loop ``max_rounds`` (clamped)."""
    max_tokens: int = 1024
    """Largest ``max_tokens`` of a node or inline agent (clamped)."""
    max_agents: int = 8
    """Most inline agents."""
    python_allow: frozenset[str] = SAFE_PYTHON
    """Python functions a generated design may name."""


class Rejected(ValueError):
    """A model-written design that cannot be used; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Refused(Rejected):
    """A hostile construct (YAML tag, alias, excessive nesting): final, no fallback parse."""


# --------------------------------------------------------------------------- text → data

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+\-]*)[ \t]*\r?\n(.*?)(?:```|\Z)", re.S)
_CODE_LANGS = {"python", "py", "python3", "bash", "sh", "shell", "zsh", "console", "javascript", "js", "ts",
               "typescript", "ruby", "perl", "powershell", "ps1", "cmd", "bat", "c", "cpp", "go", "rust", "sql",
               "html", "xml"}
_DATA_LANGS = {"", "yaml", "yml", "json", "jsonc"}
_CODE_HINT = re.compile(r"^\s*(def \w+\s*\(|class \w+[(:]|import \w+|from [\w.]+ import |async def |#!/|"
                        r"for \w+ in .*:\s*$|while .*:\s*$|if __name__)", re.M)
_SHELL_HINT = re.compile(r"^\s*(\$ |sudo |rm -|curl |wget |chmod |bash |sh -c|python3? -c|pip install|cd /|echo )", re.M)


def extract_block(text: str) -> tuple[str, str | None]:
    """The first fenced block of a reply (body, language), else the whole reply (text, None)."""
    m = _FENCE.search(text)
    if m:
        return m.group(2), m.group(1).strip().lower()
    return text, None


def _tail(text: str, expect: tuple[str, ...]) -> str | None:
    """An unfenced reply from its first line that can start the expected data (a preamble such
    as "Here is the design:" dropped), or None."""
    keys = "|".join(re.escape(k) for k in expect + ("name", "description"))
    m = re.search(rf"^({keys})\s*:", text, re.M)
    return text[m.start():] if m and m.start() > 0 else None


def _code_hint(body: str) -> str | None:
    if _CODE_HINT.search(body):
        return "it looks like Python code"
    if _SHELL_HINT.search(body):
        return "it looks like shell commands"
    return None


def _json_depth_ok(body: str, limits: DesignLimits) -> None:
    depth = 0
    in_str = esc = False
    for ch in body:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limits.max_depth:
                raise Refused(f"nesting deeper than {limits.max_depth} levels")
        elif ch in "]}":
            depth -= 1


def _parse(body: str, limits: DesignLimits, file: str) -> tuple[Any, Located]:
    if body.lstrip().startswith(("{", "[")):
        _json_depth_ok(body, limits)
    try:
        located = parse_yaml(body, file, limits)
        return located.data, located
    except YamlLimitExceeded as exc:  # a hostile construct: final, no fallback parse
        raise Refused(exc.msg) from None
    except YamlSyntaxError as exc:
        if body.lstrip().startswith("{"):
            try:
                data = json.loads(body)
                return data, Located(data=data, file=file)
            except (ValueError, RecursionError):
                pass
        hint = _code_hint(body)
        raise Rejected(f"not a design: {hint}; designs are YAML/JSON data and code is never run" if hint else
                       f"not valid YAML/JSON (line {exc.line}, column {exc.col}: {exc.msg})") from None
    except RecursionError:
        raise Refused(f"nesting deeper than {limits.max_depth} levels") from None


def load_data(text: str, limits: DesignLimits, *, file: str = "<design>",
              expect: tuple[str, ...] = ("nodes",), allow_list: bool = False,
              what: str = "design") -> tuple[Any, Located]:
    """Reply text → plain data (dicts, lists, scalars) with positions. ``expect``: keys one of
    which the data should have (used to skip a preamble and to explain a failure). Raises
    :class:`Rejected`."""
    if not isinstance(text, str) or not text.strip():
        raise Rejected("empty reply: no design found")
    size = len(text.encode("utf-8", "replace"))
    if size > limits.max_bytes:
        raise Rejected(f"reply is {size} bytes, over the {limits.max_bytes}-byte limit (not parsed)")
    body, lang = extract_block(text)
    if lang is not None and lang not in _DATA_LANGS:
        what = "code" if lang in _CODE_LANGS else f"a {lang!r} block"
        raise Rejected(f"the reply is {what} (```{lang}), not a design: designs are YAML/JSON data and code is "
                       "never run")
    if not body.strip():
        raise Rejected("empty block: no data found")

    def has_expected(d: Any) -> bool:
        if allow_list and isinstance(d, list) and d:
            return True
        return isinstance(d, dict) and (any(k in d for k in expect) or (
            len(d) == 1 and isinstance(next(iter(d.values())), dict)
            and any(k in next(iter(d.values())) for k in expect)))

    first: Rejected | None = None
    try:
        data, located = _parse(body, limits, file)
    except Refused:
        raise
    except Rejected as exc:
        first, data, located = exc, None, None
    if not has_expected(data) and lang is None:
        tail = _tail(body, expect)
        if tail is not None:
            try:
                data, located = _parse(tail, limits, file)
                first = None
            except Refused:
                raise
            except Rejected:
                pass
    if first is not None:
        raise first
    assert located is not None, "a parse succeeded (else `first` was raised)"
    if not has_expected(data):
        hint = _code_hint(body)
        if hint:
            raise Rejected(f"not a {what}: {hint}; {what}s are YAML/JSON data and code is never run")
        if not isinstance(data, dict):
            kind = "text" if isinstance(data, str) else type(data).__name__ if data is not None else "nothing"
            raise Rejected(f"not a {what}: expected a mapping with {' or '.join(map(repr, expect))}, got {kind}")
    return data, located


__all__ = ["DesignLimits", "Refused", "Rejected", "SAFE_PYTHON", "extract_block", "load_data"]
