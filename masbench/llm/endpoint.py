"""The metering endpoint: an OpenAI-compatible HTTP server on 127.0.0.1 (a free port) through which
a program design reaches its models. One per event loop (so one per engine and per worker
process), started by the first program cell that needs it.

Routes: ``POST /v1/chat/completions`` (whole, or ``stream: true`` as server-sent events whose last
chunk carries the usage; ``tools`` and ``tool_calls`` passed through), ``POST /v1/messages``
(Anthropic Messages, text only: :mod:`.endpoint_anthropic`) and ``GET /v1/models`` (the caller's
aliases). Each request is one gateway call of the cell that owns its bearer token
(:class:`~masbench.llm.program_cell.ProgramCell`); a request with no token, an unknown one, or the
token of a cell that has ended is refused (401). Refusals are OpenAI-shaped JSON errors with a 4xx
status and ``x-should-retry: false``, which the ``openai`` SDK raises at once instead of retrying
(it retries 408, 409, 429 and 5xx); a budget refusal is ``403 budget_exhausted`` naming the budget.

The agent of a call: the ``X-Masbench-Agent`` header, else the agent of a per-agent token
(:meth:`MeteringEndpoint.grant` with ``agent``), else the request's ``user`` field (see
:meth:`ProgramCell.agent_of`)."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
import weakref
from typing import Any

from aiohttp import web

from . import endpoint_anthropic as anthropic
from .program_cell import ProgramCell, Refusal
from .result import CallResult

AGENT_HEADER = "X-Masbench-Agent"
"""The request header that names a call's agent."""

_NO_RETRY = {"x-should-retry": "false"}

DRAIN_S = 10.0
"""How long :meth:`MeteringEndpoint.aclose` waits for the requests in flight (their gateway calls
recorded, their replies sent) before it stops serving and cuts what is left."""


def _error(status: int, code: str, message: str) -> web.Response:
    body = {"error": {"message": message, "type": code, "param": None, "code": code}}
    return web.Response(status=status, text=json.dumps(body), content_type="application/json", headers=_NO_RETRY)


def _usage(res: CallResult) -> dict[str, Any]:
    """The usage a program is told: what the call is counted (its budget's view)."""
    u: dict[str, Any] = {"prompt_tokens": res.prompt_tokens, "completion_tokens": res.completion_tokens,
                         "total_tokens": res.total_tokens}
    if res.cached_tokens:
        u["prompt_tokens_details"] = {"cached_tokens": res.cached_tokens}
    if res.reasoning_tokens:
        u["completion_tokens_details"] = {"reasoning_tokens": res.reasoning_tokens}
    return u


def _tool_calls(res: CallResult, with_index: bool = False) -> list[dict[str, Any]] | None:
    if not res.tool_calls:
        return None
    out = []
    for i, tc in enumerate(res.tool_calls):
        fn = tc.get("function") or {}
        one = {"id": tc.get("id") or f"call_{i}", "type": "function",
               "function": {"name": fn.get("name", ""), "arguments": fn.get("arguments") or "{}"}}
        out.append({"index": i, **one} if with_index else one)
    return out


def _finish(res: CallResult) -> str:
    return res.finish_reason or ("tool_calls" if res.tool_calls else "stop")


def completion_body(res: CallResult, alias: str) -> dict[str, Any]:
    """A ``chat.completion`` object for one call."""
    msg: dict[str, Any] = {"role": "assistant", "content": res.text if (res.text or not res.tool_calls) else None}
    tcs = _tool_calls(res)
    if tcs:
        msg["tool_calls"] = tcs
    return {"id": f"chatcmpl-{res.call_id}", "object": "chat.completion", "created": int(time.time()), "model": alias,
            "choices": [{"index": 0, "message": msg, "finish_reason": _finish(res), "logprobs": None}],
            "usage": _usage(res)}


def stream_chunks(res: CallResult, alias: str) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of one call streamed: the role, the text, the tool
    calls, the finish reason, then a last chunk with no choices and the usage."""
    base = {"id": f"chatcmpl-{res.call_id}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": alias}
    delta: dict[str, Any] = {"role": "assistant", "content": res.text or ("" if not res.tool_calls else None)}
    tcs = _tool_calls(res, with_index=True)
    if tcs:
        delta["tool_calls"] = tcs
    return [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish(res)}]},
            {**base, "choices": [], "usage": _usage(res)}]


class MeteringEndpoint:
    """The OpenAI-compatible server in front of the gateway; see the module docstring."""

    def __init__(self) -> None:
        self._grants: dict[str, tuple[ProgramCell, str | None]] = {}
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (after :meth:`start`)."""
        if self._port is None:
            raise RuntimeError("the metering endpoint is not started")
        return f"http://127.0.0.1:{self._port}/v1"

    async def start(self) -> str:
        """Bind 127.0.0.1 on a free port and serve on the running loop; the base URL."""
        if self._runner is None:
            app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=[self._counted])
            app.router.add_post("/v1/chat/completions", self._chat)
            app.router.add_post("/v1/messages", self._messages)
            app.router.add_get("/v1/models", self._models)
            runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
            await site.start()
            self._runner = runner
            self._port = int(runner.addresses[0][1])
        return self.base_url

    @property
    def inflight(self) -> int:
        """Requests being served now."""
        return self._inflight

    @web.middleware
    async def _counted(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self._inflight += 1
        self._idle.clear()
        try:
            return await handler(request)
        finally:
            self._inflight -= 1
            if not self._inflight:
                self._idle.set()

    async def aclose(self, drain_s: float = DRAIN_S) -> bool:
        """Stop serving: every grant is revoked (a new request is refused), the requests in flight
        are waited for (at most ``drain_s`` seconds: their calls are recorded and their replies
        sent), then the server stops, cutting any request still running. True when none was cut."""
        self._grants.clear()
        drained = True
        if self._runner is not None:
            try:
                await asyncio.wait_for(self._idle.wait(), drain_s)
            except asyncio.TimeoutError:
                drained = False
            await self._runner.cleanup()
            self._runner = None
            self._port = None
        return drained

    # ----- tokens ------------------------------------------------------------------------------
    def grant(self, cell: ProgramCell, agent: str | None = None) -> str:
        """A new random bearer token for ``cell`` (its calls attributed to ``agent`` when given)."""
        token = "mb-" + secrets.token_urlsafe(24)
        self._grants[token] = (cell, agent)
        return token

    def revoke(self, cell: ProgramCell) -> None:
        """Revoke every token of ``cell``: its later requests are refused."""
        for t in [t for t, (c, _a) in self._grants.items() if c is cell]:
            del self._grants[t]

    def _holder(self, request: web.Request) -> tuple[ProgramCell, str | None]:
        auth = request.headers.get("Authorization", "")
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else (request.headers.get("x-api-key") or "")
        held = self._grants.get(token) if token else None
        if held is None:
            raise Refusal(401, "invalid_api_key", "no valid masbench endpoint token (each task of a program run "
                                                  "has its own; a token of an ended task is no longer valid)")
        return held

    # ----- routes ------------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        try:
            cell, _ = self._holder(request)
        except Refusal as r:
            return _error(r.status, r.code, r.message)
        data = [{"id": a, "object": "model", "created": 0, "owned_by": "masbench"} for a in cell.aliases]
        return web.json_response({"object": "list", "data": data})

    async def _body(self, request: web.Request) -> tuple[ProgramCell, str | None, dict[str, Any]]:
        cell, token_agent = self._holder(request)
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise Refusal(400, "invalid_request_error", "the request body is not JSON") from None
        if not isinstance(body, dict):
            raise Refusal(400, "invalid_request_error", "the request body must be a JSON object")
        return cell, request.headers.get(AGENT_HEADER) or token_agent, body

    async def _messages(self, request: web.Request) -> web.Response:
        """Anthropic Messages (text only): see :mod:`.endpoint_anthropic`."""
        try:
            cell, named, body = await self._body(request)
            chat = anthropic.chat_request(body)
            res = await cell.complete(chat, cell.agent_of(named, chat.get("user")))
        except Refusal as r:
            return anthropic.error(r)
        return web.json_response(anthropic.message_body(res, str(body["model"])))

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            cell, named, body = await self._body(request)
            agent = cell.agent_of(named, body.get("user"))
            res = await cell.complete(body, agent)
        except Refusal as r:
            return _error(r.status, r.code, r.message)
        alias = str(body["model"])
        if not body.get("stream"):
            return web.json_response(completion_body(res, alias))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        for chunk in stream_chunks(res, alias):
            await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, MeteringEndpoint] = weakref.WeakKeyDictionary()
_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


async def shared_endpoint() -> MeteringEndpoint:
    """The running loop's endpoint, started on first use."""
    loop = asyncio.get_running_loop()
    ep = _SHARED.get(loop)
    if ep is not None:
        return ep
    lock = _LOCKS.setdefault(loop, asyncio.Lock())
    async with lock:
        ep = _SHARED.get(loop)
        if ep is None:
            ep = MeteringEndpoint()
            await ep.start()
            _SHARED[loop] = ep
    return ep


async def close_shared_endpoint() -> None:
    """Stop the running loop's endpoint, if one was started (an engine closing), after the
    requests in flight (see :meth:`MeteringEndpoint.aclose`)."""
    ep = _SHARED.pop(asyncio.get_running_loop(), None)
    if ep is not None:
        await ep.aclose()


__all__ = ["AGENT_HEADER", "DRAIN_S", "MeteringEndpoint", "close_shared_endpoint", "completion_body", "shared_endpoint",
           "stream_chunks"]
