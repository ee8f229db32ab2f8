"""The span sites: run → cell → design (``invoke_workflow``) → node (``invoke_agent`` for an
agent's node) → model call (``chat``), and ``execute_tool`` for tools (a leaf written after the
tool returns, like ``chat``: :func:`execute_tool`). Each site is one call that
returns a context manager (the model call, a leaf, is one call made after it returns: its span is
written with the call's own start and end times).

Off, every site returns the same do-nothing context manager and handle (one global check, no
attribute built). On, a span is started as a child of the current OpenTelemetry context (it rides
on contextvars, so asyncio tasks and langgraph's node tasks inherit it) and made current inside
the block. The handles' ``*_result`` methods fill in what the block found out. This layer cannot
import the records it reads, so each is a small Protocol here.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from . import genai as g
from . import state

if TYPE_CHECKING:  # pragma: no cover - the SDK loads only when telemetry is on
    from opentelemetry.trace import Span

    from .state import Live


T = TypeVar("T")


class UsageLike(Protocol):
    """A call's usage by token class (:class:`masbench.llm.usage.Usage`)."""

    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def cached_read(self) -> int: ...
    @property
    def cache_write(self) -> int: ...
    @property
    def reasoning(self) -> int: ...


class CallLike(Protocol):
    """One model call's outcome (:class:`masbench.llm.result.CallResult`)."""

    @property
    def text(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def alias(self) -> str: ...
    @property
    def call_id(self) -> str: ...
    @property
    def usage(self) -> UsageLike | None: ...
    @property
    def cost_usd(self) -> float: ...
    @property
    def cost_source(self) -> str: ...
    @property
    def latency_s(self) -> float: ...
    @property
    def cache_hit(self) -> bool: ...
    @property
    def attempts(self) -> int: ...
    @property
    def error(self) -> str | None: ...
    @property
    def finish_reason(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def simulated(self) -> bool: ...
    @property
    def tool_calls(self) -> Sequence[Mapping[str, Any]] | None: ...


class DesignLike(Protocol):
    """A design run's outcome (:class:`masbench.runtime.types.DesignResult`)."""

    @property
    def status(self) -> str: ...
    @property
    def calls(self) -> int: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def cost_usd(self) -> float: ...
    @property
    def error(self) -> str | None: ...


class ValueLike(Protocol):
    """A node execution's value (:class:`masbench.runtime.values.Val`): its status and error."""

    @property
    def status(self) -> str: ...
    @property
    def error(self) -> str | None: ...


class StatsLike(Protocol):
    """A node execution's counted usage (:class:`masbench.charge.Tally`)."""

    @property
    def calls(self) -> int: ...
    @property
    def tokens(self) -> int: ...
    @property
    def cost(self) -> float: ...


class Handle:
    """What a span site's block is given to fill its span in. This base class is the off one: every
    method does nothing."""

    __slots__ = ()

    def set(self, attrs: Mapping[str, Any]) -> None:
        """Set attributes (None values skipped)."""

    def cell_result(self, ok: bool) -> None:
        """A cell's outcome: not ``ok`` (its result is ``failed``) marks the span an error."""

    def design_result(self, res: DesignLike) -> None:
        """A design run's status, counted usage and cost; ``failed`` marks the span an error."""

    def node_result(self, val: ValueLike, st: StatsLike) -> None:
        """A node execution's status and counted usage; a status other than ``ok`` marks an error."""



OFF = Handle()
"""The one handle of every site while telemetry is off."""


class _Off:
    __slots__ = ()

    def __enter__(self) -> Handle:
        return OFF

    def __exit__(self, *exc: object) -> None:
        return None


_OFF = _Off()

Site = AbstractContextManager[Handle, None]
"""What a span site returns: ``with site as handle: …``."""


class _LiveHandle(Handle):
    __slots__ = ("span", "lv")

    def __init__(self, span: Span, lv: Live):
        self.span = span
        self.lv = lv

    def set(self, attrs: Mapping[str, Any]) -> None:
        self.span.set_attributes({k: v for k, v in attrs.items() if v is not None})

    def fail(self, error_type: str, message: str | None = None) -> None:
        self.span.set_attribute(g.ERROR_TYPE, error_type)
        self.span.set_status(self.lv.sdk.error, (message or error_type)[:500])

    def cell_result(self, ok: bool) -> None:
        self.span.set_attribute("masbench.ok", ok)
        if not ok:
            self.fail("cell_failed")

    def design_result(self, res: DesignLike) -> None:
        self.set({"masbench.status": res.status, "masbench.calls": res.calls,
                  "masbench.prompt_tokens": res.prompt_tokens, "masbench.completion_tokens": res.completion_tokens,
                  "masbench.cost_usd": res.cost_usd})
        if res.status == "failed":
            self.fail("design_failed", res.error)

    def node_result(self, val: ValueLike, st: StatsLike) -> None:
        self.set({"masbench.status": val.status, "masbench.calls": st.calls, "masbench.tokens": st.tokens,
                  "masbench.cost_usd": st.cost})
        if val.status != "ok":
            self.fail(val.status, val.error)



class _Open:
    """A live span site: starts the span as a child of the current context and makes it current."""

    __slots__ = ("lv", "name", "kind", "attrs", "span", "token")

    def __init__(self, lv: Live, name: str, attrs: dict[str, Any], client: bool = False):
        self.lv = lv
        self.name = name
        self.kind = lv.sdk.client if client else lv.sdk.internal
        self.attrs = {k: v for k, v in attrs.items() if v is not None}
        self.span: Span | None = None
        self.token: object = None

    def __enter__(self) -> Handle:
        sdk = self.lv.sdk
        span = self.span = sdk.tracer.start_span(self.name, kind=self.kind, attributes=self.attrs)
        self.token = sdk.context.attach(sdk.trace.set_span_in_context(span))
        return _LiveHandle(span, self.lv)

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: object) -> None:
        sdk = self.lv.sdk
        sdk.context.detach(self.token)  # pyright: ignore[reportArgumentType]  # the token attach returned
        span = self.span
        assert span is not None
        if ev is not None:
            kind = "cancelled" if et is not None and et.__name__ == "CancelledError" else type(ev).__name__
            span.set_attribute(g.ERROR_TYPE, kind)
            span.set_status(sdk.error, f"{type(ev).__name__}: {ev}"[:500])
        span.end()


async def within(site: AbstractContextManager[object, None], work: Awaitable[T]) -> T:
    """Await ``work`` inside ``site``'s span (``await within(telemetry.run(...), run_cells(...))``):
    the span is current while the work runs, so what it starts nests under it."""
    with site:
        return await work


def run(run_id: str, suite: str, *, cells: int, simulated: bool) -> Site:
    """The span of one run (a session of ``masbench run``): ``run {suite}``, the root of its trace."""
    lv = state.current()
    if lv is None:
        return _OFF
    return _Open(lv, f"run {suite}", {"masbench.run_id": run_id, "masbench.suite": suite, "masbench.cells": cells,
                                      "masbench.simulated": simulated})


def cell(run_id: str, kind: str, design: str, task_id: str, seed: int) -> Site:
    """The span of one cell: ``cell {design}`` (``kind``: ``design`` or ``pool``; a pool cell's
    design is the store's pool tag)."""
    lv = state.current()
    if lv is None:
        return _OFF
    return _Open(lv, f"cell {design}", {"masbench.run_id": run_id, "masbench.cell_kind": kind,
                                         "masbench.design": design, "masbench.task_id": task_id, "masbench.seed": seed})


def workflow(name: str, tags: Mapping[str, Any], prefix: str = "") -> Site:
    """The span of one design run: ``invoke_workflow {design}`` (a sub-design's run nests under its
    ``design`` node). ``tags``: the run's tags (run_id, design label, task_id, seed, purpose)."""
    lv = state.current()
    if lv is None:
        return _OFF
    attrs = g.tag_attributes(tags)
    attrs.update({g.OPERATION: g.INVOKE_WORKFLOW, g.WORKFLOW_NAME: name, "masbench.design_name": name,
                  "masbench.sub_design": prefix.rstrip("/") or None})
    return _Open(lv, f"{g.INVOKE_WORKFLOW} {name}", attrs)


def node(node: str, op: str, agent: str | None, tags: Mapping[str, Any], *, round: int | None = None,
         branch: int | None = None) -> Site:
    """The span of one node execution: ``invoke_agent {agent}`` for a node with an agent, else
    ``{op} {node}`` (a vote, a python function, a sub-design, a loop)."""
    lv = state.current()
    if lv is None:
        return _OFF
    attrs = g.tag_attributes(tags)
    attrs.update({"masbench.node": node, "masbench.op": op, "masbench.round": round, "masbench.branch": branch})
    if agent is not None:
        attrs.update({g.OPERATION: g.INVOKE_AGENT, g.AGENT_NAME: agent})
        return _Open(lv, f"{g.INVOKE_AGENT} {agent}", attrs)
    return _Open(lv, f"{op} {node}", attrs)


def execute_tool(name: str, *, call_id: str | None, status: str, error: str | None = None, latency_s: float = 0.0,
                 bytes_out: int | None = None, truncated: bool | None = None, t_start: float | None = None,
                 step: int | None = None, arguments: str | None = None, result: str | None = None,
                 tags: Mapping[str, Any] | None = None, tool_type: str = "function") -> None:
    """Export one finished tool call as an ``execute_tool {name}`` span (INTERNAL), a child of the
    current context (the node's ``invoke_agent`` span while its block runs), spanning the call's
    own time: from ``t_start`` (epoch seconds; default: ``latency_s`` before now) for
    ``latency_s``. Call it once per tool call, after the tool returned (or was refused).

    ``name``: the tool as the model named it; ``call_id``: the tool call's id (the provider's, or
    ours for the text protocol) → ``gen_ai.tool.call.id``; ``status``: ``ok`` | ``invalid_args``
    | ``unknown_tool`` | ``not_allowed`` | ``error`` | ``refused`` (any but ``ok`` marks the span
    an error, ``error.type`` = the status; ``error``: its message); ``bytes_out``: UTF-8 bytes of
    the full result before the size cap; ``truncated``: whether the cap cut it; ``step``: the
    ReAct step; ``tags``: the call's run tags (``masbench.*``). ``arguments`` (the JSON text the
    model wrote) and ``result`` (the observation shown) are exported only with content capture."""
    lv = state.current()
    if lv is None:
        return
    sdk = lv.sdk
    start = int(t_start * 1e9) if t_start is not None else time.time_ns() - int(latency_s * 1e9)
    attrs: dict[str, Any] = {g.OPERATION: g.EXECUTE_TOOL, g.TOOL_NAME: name, g.TOOL_TYPE: tool_type,
                             g.TOOL_CALL_ID: call_id, "masbench.tool.status": status,
                             "masbench.tool.bytes_out": bytes_out, "masbench.tool.truncated": truncated,
                             "masbench.tool.latency_s": latency_s, "masbench.step": step}
    attrs.update(g.tag_attributes(tags))
    if lv.capture:
        attrs[g.TOOL_CALL_ARGUMENTS] = arguments
        attrs[g.TOOL_CALL_RESULT] = result
    span = sdk.tracer.start_span(f"{g.EXECUTE_TOOL} {name}", kind=sdk.internal,
                                 attributes={k: v for k, v in attrs.items() if v is not None}, start_time=start)
    if status != "ok":
        span.set_attribute(g.ERROR_TYPE, status)
        span.set_status(sdk.error, (error or status)[:500])
    span.end(end_time=start + int(latency_s * 1e9))


def chat(res: CallLike, request: Mapping[str, Any], messages: Sequence[Mapping[str, Any]],
         tags: Mapping[str, Any] | None, api_base: str | None = None) -> None:
    """Export one finished model call as a ``chat {model}`` span (CLIENT), a child of the current
    context, spanning the call's latency. Token counts are the provider-reported ones (the
    ``calls`` row's: absent when usage is missing); ``request``: the parameters sent (only the
    allow-listed ones are read); ``messages``: exported only with content capture."""
    lv = state.current()
    if lv is None:
        return
    sdk = lv.sdk
    end = time.time_ns()
    model = g.request_model(res.model)
    attrs: dict[str, Any] = {g.OPERATION: g.CHAT, g.PROVIDER: g.provider_name(res.model), g.REQUEST_MODEL: model,
                             "masbench.model_alias": res.alias, "masbench.call_id": res.call_id,
                             "masbench.cache_hit": res.cache_hit, "masbench.attempts": res.attempts,
                             "masbench.status": res.status, "masbench.cost_source": res.cost_source,
                             "masbench.simulated": res.simulated}
    attrs.update(g.request_attributes(request))
    attrs.update(g.server_attributes(api_base))
    attrs.update(g.tag_attributes(tags))
    u = res.usage
    if u is not None:
        attrs.update({g.RESPONSE_MODEL: model, g.INPUT_TOKENS: u.prompt_tokens, g.OUTPUT_TOKENS: u.completion_tokens,
                      g.CACHE_READ_TOKENS: u.cached_read, g.CACHE_CREATION_TOKENS: u.cache_write,
                      g.REASONING_TOKENS: u.reasoning, "masbench.cost_usd": res.cost_usd})
    if res.finish_reason:
        attrs[g.FINISH_REASONS] = [res.finish_reason]
    if res.tool_calls:
        attrs[g.TOOL_CALLS_REQUESTED] = len(res.tool_calls)
    if request.get("tools"):
        attrs[g.TOOLS_OFFERED] = g.tool_names(request["tools"])
    if lv.capture:
        attrs[g.INPUT_MESSAGES] = g.input_messages(messages)
        if res.text or res.error is None:
            attrs[g.OUTPUT_MESSAGES] = g.output_messages(res.text, res.finish_reason, res.tool_calls)
    span = sdk.tracer.start_span(f"{g.CHAT} {model}", kind=sdk.client, attributes=attrs,
                                 start_time=end - int(res.latency_s * 1e9))
    if res.error is not None:
        span.set_attribute(g.ERROR_TYPE, g.error_type(res.error))
        span.set_status(sdk.error, res.error[:500])
    span.end(end_time=end)


__all__ = ["CallLike", "DesignLike", "Handle", "OFF", "Site", "StatsLike", "UsageLike", "ValueLike", "cell", "chat",
           "execute_tool", "node", "run", "within", "workflow"]
