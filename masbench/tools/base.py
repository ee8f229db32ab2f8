"""Tools as data: what an agent may call, by name, with arguments checked against a schema.

A :class:`Tool` is one registered instance in :data:`TOOLS` (lazy ``"module:attr"`` entries for
the built-ins). It carries its name, a description the model reads, a pydantic ``Args`` model
(the only thing a model's arguments can become: nothing it writes is executed as code), a result
size cap and an async :meth:`Tool.run`. An agent lists tools by name in its YAML (``tools:``);
:func:`dispatch` is the one way a tool call is carried out:

- the name must be one the agent allows (else ``not_allowed``) and registered (``unknown_tool``);
- the arguments (a JSON object, its text, or a plain string for a one-field tool) are validated
  against ``Args`` (``invalid_args`` with pydantic's message — the model is told and may retry);
- the tool runs; an exception becomes ``error`` with its message (the run goes on);
- the result text is capped at ``max_result_chars`` (``truncated``), its full size kept in
  ``bytes_out``.

It never raises for anything a model wrote: every outcome is a :class:`ToolResult` whose ``text``
is what the model is shown as the observation.

User-registered python functions become tools with :func:`tool`::

    from masbench.tools import tool

    @tool("lookup_rate", description="Exchange rate between two currencies.")
    def lookup_rate(base: str, quote: str) -> str: ...
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from ..bench.types import TaskInstance

STATUSES = ("ok", "invalid_args", "unknown_tool", "not_allowed", "error", "refused")
"""A tool call's status (``tool_calls.status``); ``refused``: the budget or step limit stopped it
before it ran (set by the caller, never by :func:`dispatch`)."""

DEFAULT_MAX_RESULT_CHARS = 4000
"""The result cap of a tool that sets none."""


@dataclass(slots=True)
class ToolCall:
    """One call a model asked for."""

    name: str
    """The tool name as the model wrote it."""
    arguments: str | Mapping[str, object]
    """The arguments: a JSON object's text (function calling), a mapping, or a plain string (the
    text protocol's ``search[some words]``, given to a tool's single field)."""
    id: str = ""
    """The provider's tool-call id (function calling) or one of ours (text protocol)."""


@dataclass(slots=True)
class ToolResult:
    """What came of one :class:`ToolCall` (see :func:`dispatch`)."""

    call: ToolCall
    status: str
    """One of :data:`STATUSES`."""
    text: str
    """The observation the model is shown (the capped result, or the error explained)."""
    arguments: str
    """The arguments as JSON text: the validated object, or a JSON string of the raw text."""
    data: object = None
    """The tool's structured result, if it gave one (e.g. the document ids a search returned)."""
    error: str | None = None
    latency_s: float = 0.0
    bytes_out: int = 0
    """UTF-8 bytes of the full result before the cap."""
    truncated: bool = False
    t_start: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(slots=True)
class ToolOutput:
    """A tool's result: the text the model reads and, optionally, structured data for the caller."""

    text: str
    data: object = None


@dataclass(slots=True)
class ToolContext:
    """What a tool sees besides its arguments: the task being solved (a corpus tool finds its
    corpus there) and a per-process cache for expensive resources (an index built once)."""

    task: "TaskInstance | None" = None
    cache: dict[str, object] = field(default_factory=dict)
    tags: Mapping[str, object] = field(default_factory=dict)
    """The run's tags (design, task_id, seed, node) — for logging only."""


class Tool:
    """One tool. Subclass it (``Args``, ``description``, :meth:`run`) and register an instance in
    :data:`TOOLS`, or wrap a function with :func:`tool`."""

    name: str = ""
    """The registered name (set by :data:`TOOLS` users; the subclass may preset it)."""
    description: str = ""
    """What the tool does, as the model reads it."""
    Args: ClassVar[type[BaseModel]]
    """The arguments' schema: a model's arguments are validated against it, nothing else."""
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    """The observation is cut to this many characters (``truncated`` recorded)."""

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput | str:
        """Carry out one validated call; may raise (recorded as ``error``). Blocking work belongs
        in a thread (``asyncio.to_thread``): this runs on the run's event loop."""
        raise NotImplementedError

    def schema(self) -> dict[str, object]:
        """The OpenAI function-calling entry (``{"type": "function", "function": {...}}``)."""
        params = self.Args.model_json_schema()
        params.pop("title", None)
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": params}}

    def single_field(self) -> str | None:
        """The one required field, if the schema has exactly one (a plain-string argument fills it)."""
        fields = [n for n, f in self.Args.model_fields.items() if f.is_required()]
        return fields[0] if len(fields) == 1 else None


TOOLS: Registry[Tool] = Registry("tool", {
    "calculator": "masbench.tools.calculator:TOOL",
    "search": "masbench.tools.corpus:SEARCH",
    "read_document": "masbench.tools.corpus:READ",
}, plugins="masbench.tools", adapt=lambda name, obj: _plugin_tool(name, obj))
"""Tool name → :class:`Tool` instance (an agent's YAML names them in ``tools:``)."""


class _FunctionTool(Tool):
    """A registered python function as a tool (see :func:`tool`)."""

    def __init__(self, name: str, fn: Callable[..., object], description: str, max_result_chars: int):
        self.name, self.fn, self.description, self.max_result_chars = name, fn, description, max_result_chars
        fields: dict[str, Any] = {}
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"tool {name!r}: *args/**kwargs cannot be described to a model")
            ann = p.annotation if p.annotation is not inspect.Parameter.empty else str
            fields[p.name] = (ann, ... if p.default is inspect.Parameter.empty else p.default)
        self.Args = create_model(f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields)  # type: ignore[misc]

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput | str:
        kwargs = args.model_dump()
        if inspect.iscoroutinefunction(self.fn):
            out = await self.fn(**kwargs)
        else:
            import asyncio  # deferred: checking a design imports the tools, running one has asyncio loaded

            out = await asyncio.to_thread(self.fn, **kwargs)
        if isinstance(out, (ToolOutput, str)):
            return out
        return ToolOutput(json.dumps(out, ensure_ascii=False, default=str), out)


def _plugin_tool(name: str, obj: object) -> Tool:
    """What a ``masbench.tools`` entry point names, as a :class:`Tool`: an instance as it is, a
    :class:`Tool` subclass instantiated, a plain function wrapped as :func:`tool` wraps it."""
    if isinstance(obj, Tool):
        return obj
    if isinstance(obj, type) and issubclass(obj, Tool):
        return obj()
    if callable(obj):
        return _FunctionTool(name, obj, inspect.getdoc(obj) or name, DEFAULT_MAX_RESULT_CHARS)
    raise TypeError(f"tool {name!r}: a masbench.tools entry point names a Tool, a Tool subclass or a function, "
                    f"not a {type(obj).__name__}")


def tool(name: str, *, description: str | None = None,
         max_result_chars: int = DEFAULT_MAX_RESULT_CHARS) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """Decorator: register a python function as the tool ``name``. Its annotated parameters are
    the schema (``extra`` arguments refused); its docstring is the description unless given; it may
    be sync (run in a thread) or async; it returns text, a :class:`ToolOutput` or JSON-like data."""

    def deco(fn: Callable[..., object]) -> Callable[..., object]:
        desc = description or inspect.getdoc(fn) or name
        TOOLS.add(name, _FunctionTool(name, fn, desc, max_result_chars), replace=True)
        return fn

    return deco


def resolve(names: list[str]) -> dict[str, Tool]:
    """The registered tools of an agent's ``tools:`` list (raises :class:`masbench.registry.RegistryError` naming an
    unknown one and the known names)."""
    out: dict[str, Tool] = {}
    for n in names:
        t = TOOLS[n]
        if not t.name:
            t.name = n
        out[n] = t
    return out


def _clean(x: object) -> object:
    """``x`` with lone surrogates (``"\\ud800"`` in a model's JSON) replaced: they cannot be
    encoded, stored or shown."""
    if isinstance(x, str):
        return x.encode("utf-8", "replace").decode("utf-8") if not x.isascii() else x
    if isinstance(x, Mapping):
        return {_clean(k): _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def _parse_args(t: Tool, raw: str | Mapping[str, object]) -> tuple[BaseModel | None, str, str | None]:
    """(validated args or None, the arguments' JSON text, the error)."""
    obj = _clean(raw)
    if isinstance(obj, str):
        text = obj.strip()
        try:
            obj = _clean(json.loads(text)) if text.startswith("{") else None
        except json.JSONDecodeError as e:
            return None, json.dumps(text), f"arguments are not valid JSON: {e.msg} at position {e.pos}"
        if obj is None:  # a plain string fills a one-field tool
            one = t.single_field()
            if one is None:
                return None, json.dumps(text), (f"{t.name} takes a JSON object with "
                                                f"{', '.join(t.Args.model_fields)}")
            obj = {one: text}
    if not isinstance(obj, Mapping):
        return None, json.dumps(str(obj)), "arguments must be a JSON object"
    try:
        args = t.Args.model_validate(dict(obj))
    except ValidationError as e:
        msgs = "; ".join(f"{'.'.join(str(x) for x in err['loc']) or 'arguments'}: {err['msg']}" for err in e.errors())
        return None, json.dumps(dict(obj), ensure_ascii=False, default=str), msgs
    return args, args.model_dump_json(), None


async def dispatch(call: ToolCall, allowed: Mapping[str, Tool], ctx: ToolContext) -> ToolResult:
    """Carry out one tool call (see the module docstring); never raises for what a model wrote."""
    t_start = time.time()
    raw_args = call.arguments if isinstance(call.arguments, str) else json.dumps(dict(call.arguments), default=str)
    t = allowed.get(call.name)
    if t is None:
        if call.name in TOOLS:  # a name test: loading a registered tool the agent may not use is not needed
            status, why = "not_allowed", f"tool {call.name!r} is not one this agent may use"
        else:
            status, why = "unknown_tool", f"there is no tool {call.name!r}"
        why += f" (available: {', '.join(sorted(allowed)) or 'none'})"
        return ToolResult(call, status, f"Error: {why}.", json.dumps(raw_args), error=why, t_start=t_start)
    args, args_json, err = _parse_args(t, call.arguments)
    if args is None:
        assert err is not None
        return ToolResult(call, "invalid_args", f"Error: {call.name}: {err}.", args_json, error=err, t_start=t_start)
    t0 = time.perf_counter()
    try:
        out: ToolOutput | str = await t.run(args, ctx)
    except Exception as e:  # a tool that raises is an error the model is told about; the run goes on
        why = f"{type(e).__name__}: {e}"
        return ToolResult(call, "error", f"Error: {call.name} failed: {why}", args_json, error=why,
                          latency_s=time.perf_counter() - t0, t_start=t_start)
    latency = time.perf_counter() - t0
    res = out if isinstance(out, ToolOutput) else ToolOutput(str(out))
    full = _clean(res.text if isinstance(res.text, str) else str(res.text))  # a sloppy tool's non-str text
    assert isinstance(full, str)
    text, n = full, len(full.encode())
    cut = len(text) > t.max_result_chars
    if cut:
        text = text[: t.max_result_chars] + f"\n[… cut: {len(full) - t.max_result_chars} more characters]"
    return ToolResult(call, "ok", text, args_json, data=res.data, latency_s=latency, bytes_out=n, truncated=cut,
                      t_start=t_start)


ToolFn = Callable[..., object | Awaitable[object]]

__all__ = ["DEFAULT_MAX_RESULT_CHARS", "STATUSES", "TOOLS", "Tool", "ToolCall", "ToolContext", "ToolFn", "ToolOutput",
           "ToolResult", "dispatch", "resolve", "tool"]
