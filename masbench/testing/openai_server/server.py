"""The fake OpenAI-compatible server: routes, fault injection and lifecycle (on the current loop,
in a thread, or as a process — see :mod:`masbench.testing.openai_server`)."""

from __future__ import annotations

import asyncio
import json
import math
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from aiohttp import web

from .anthropic_wire import anthropic_error, anthropic_messages
from .config import _ERROR_BODIES, ServerConfig, ServerStats
from .tool_wire import ToolCall, prompt_chars, tool_turn
from .wire import _error_response


class FakeOpenAIServer:
    """A local OpenAI-compatible server; see the module docstring for usage.

    Args:
        config: behaviour; defaults to ``ServerConfig()``.
        **overrides: fields of :class:`ServerConfig` to override, e.g. ``latency_ms=5``.

    Attributes:
        config: the active configuration (may be replaced between requests).
        stats: the live :class:`ServerStats`.
    """

    def __init__(self, config: ServerConfig | None = None, **overrides: Any) -> None:
        cfg = config or ServerConfig()
        self.config: ServerConfig = replace(cfg, **overrides) if overrides else cfg
        self.stats = ServerStats()
        self._rng = random.Random(self.config.seed)
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None
        self._created = int(time.time())

    # ------------------------------------------------------------------ properties
    @property
    def port(self) -> int:
        """The bound TCP port (valid after start)."""
        if self._port is None:
            raise RuntimeError("server not started")
        return self._port

    @property
    def base_url(self) -> str:
        """OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1`` (valid after start)."""
        return f"http://{self.config.host}:{self.port}/v1"

    def reset_stats(self) -> None:
        """Clear the counters (in place) and reseed the fault generator."""
        self.stats.__dict__.update(ServerStats().__dict__)
        self._rng = random.Random(self.config.seed)

    # ------------------------------------------------------------------ app
    def make_app(self) -> web.Application:
        """The aiohttp application (routes only; no middleware, for speed)."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/messages", self._anthropic)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/models", self._models)
        app.router.add_get("/stats", self._stats)
        app.router.add_post("/stats/reset", self._stats_reset)
        app.router.add_get("/health", self._health)
        return app

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/messages``: the same latency and faults as a chat completion (each error in
        Anthropic's error shape), else the configured reply in Anthropic's Messages format."""
        stats = self.stats
        stats.requests += 1
        n_request = stats.requests
        if len(stats.auth_headers) < self.config.auth_log_limit:
            stats.auth_headers.append(request.headers.get("x-api-key"))
        if self.config.latency_ms > 0:
            await asyncio.sleep(self.config.latency_ms / 1000.0)
        fault = await self._fault(request, n_request, anthropic_error)
        if fault is not None:
            return fault
        self._count(200)
        return await anthropic_messages(self.config, request, n_request)

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _stats(self, request: web.Request) -> web.Response:
        return web.Response(text=json.dumps(self.stats.as_dict()), content_type="application/json")

    async def _stats_reset(self, request: web.Request) -> web.Response:
        self.reset_stats()
        return web.Response(text="{}", content_type="application/json")

    async def _models(self, request: web.Request) -> web.Response:
        name = self.config.model or "fake-model"
        body = {
            "object": "list",
            "data": [{"id": name, "object": "model", "created": self._created, "owned_by": "masbench"}],
        }
        return web.Response(text=json.dumps(body), content_type="application/json")

    async def _fault(self, request: web.Request, n_request: int,
                     error: Callable[[int, str, str], web.Response]) -> web.Response | None:
        """The fault request ``n_request`` is answered with (``fail_first``, else drawn at
        ``fail_rate``), its error body made by ``error`` (the wire's shape), or None: no fault."""
        cfg = self.config
        stats = self.stats
        outage = n_request <= cfg.fail_first
        if not (outage or (cfg.fail_rate > 0 and self._rng.random() < cfg.fail_rate)):
            return None
        kind = cfg.fail_kinds[(n_request - 1) % len(cfg.fail_kinds)] if outage else self._rng.choice(cfg.fail_kinds)
        stats.faults[kind] = stats.faults.get(kind, 0) + 1
        if kind == "disconnect":
            self._count("disconnect")
            transport = request.transport
            if transport is not None:
                transport.abort()
            raise asyncio.CancelledError  # aiohttp drops the request silently
        if kind == "timeout":
            await asyncio.sleep(cfg.timeout_sleep_s)
        status, code, message = _ERROR_BODIES[kind]
        self._count(status)
        resp = error(status, code, message)
        if cfg.retry_after is not None and status in (429, 503):
            resp.headers["Retry-After"] = cfg.retry_after
        if len(stats.fault_times) < cfg.auth_log_limit:
            stats.fault_times.append(time.monotonic())
        return resp

    def _count(self, status: int | str) -> None:
        by = self.stats.by_status
        by[status] = by.get(status, 0) + 1

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        stats = self.stats
        stats.open_now += 1
        stats.open_max = max(stats.open_max, stats.open_now)
        try:
            return await self._chat_open(request)
        finally:
            stats.open_now -= 1

    async def _chat_open(self, request: web.Request) -> web.StreamResponse:
        cfg = self.config
        stats = self.stats
        stats.requests += 1
        n_request = stats.requests
        if len(stats.auth_headers) < cfg.auth_log_limit:
            stats.auth_headers.append(request.headers.get("Authorization"))
            stats.request_times.append(time.monotonic())

        try:
            payload = json.loads(await request.read())
            if not isinstance(payload, dict):
                raise ValueError("body must be a JSON object")
            messages = payload.get("messages")
            if not isinstance(messages, list):
                raise ValueError("'messages' must be a list")
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            self._count(400)
            return _error_response(400, "invalid_request_error", f"bad request: {exc}")
        if len(stats.messages) < cfg.auth_log_limit:
            stats.messages.append(messages)
            stats.tools.append({"tools": payload.get("tools"), "tool_choice": payload.get("tool_choice")})

        if cfg.latency_ms > 0:
            await asyncio.sleep(cfg.latency_ms / 1000.0)

        fault = await self._fault(request, n_request, _error_response)
        if fault is not None:
            return fault

        model = cfg.model or str(payload.get("model") or "fake-model")
        seed = payload.get("seed")
        try:
            n_choices = max(1, int(payload.get("n") or 1))
        except (TypeError, ValueError):
            n_choices = 1
        calls, tool_text = tool_turn(payload, messages, cfg.tool_script, n_request)
        template = cfg.reply if tool_text is None else tool_text
        if tool_text is None and "{" in template:
            texts = [
                template.format(model=model, n=n_request, seed=seed, index=i) for i in range(n_choices)
            ]
        else:
            texts = [template] * n_choices

        if cfg.prompt_tokens is not None:
            prompt_tokens = cfg.prompt_tokens
        else:
            prompt_tokens = math.ceil(prompt_chars(payload, messages) / 4)
        if cfg.completion_tokens is not None:
            completion_tokens = cfg.completion_tokens * n_choices
        elif calls:
            completion_tokens = max(1, math.ceil(len(json.dumps(calls)) / 4)) * n_choices
        else:
            completion_tokens = sum(max(1, math.ceil(len(t) / 4)) for t in texts)
        usage: dict[str, Any] | None = cfg.usage if cfg.usage is not None else {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": min(cfg.cached_tokens, prompt_tokens)},
            "completion_tokens_details": {"reasoning_tokens": 0},
        }
        if cfg.omit_usage:
            usage = None
        stats.prompt_tokens += prompt_tokens
        stats.completion_tokens += completion_tokens
        self._count(200)
        rid = f"chatcmpl-fake-{n_request}"
        created = int(time.time())

        if payload.get("stream"):
            return await self._stream(request, payload, rid, created, model, texts, usage, calls)

        def reply_message(t: str) -> dict[str, Any]:
            if calls:
                return {"role": "assistant", "content": None, "tool_calls": calls}
            return {"role": "assistant", "content": t}

        body = {
            "id": rid,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {
                    "index": i,
                    "message": reply_message(t),
                    "logprobs": None,
                    "finish_reason": "tool_calls" if calls else cfg.finish_reason,
                }
                for i, t in enumerate(texts)
            ],
            "system_fingerprint": "fp_masbench_fake",
        }
        if usage is not None:
            body["usage"] = usage
        return web.Response(text=json.dumps(body), content_type="application/json")

    async def _stream(
        self,
        request: web.Request,
        payload: dict[str, Any],
        rid: str,
        created: int,
        model: str,
        texts: list[str],
        usage: dict[str, Any] | None,
        calls: list[ToolCall] | None = None,
    ) -> web.StreamResponse:
        """Server-sent events: a role+content chunk and a finish chunk per choice, then usage. A
        tool-call reply streams per call a delta with its id and name, then its arguments in two
        pieces (as providers split them), then the ``tool_calls`` finish chunk."""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)

        def chunk(choices: list[dict[str, Any]], usage_obj: dict[str, Any] | None = None) -> bytes:
            obj: dict[str, Any] = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": choices,
            }
            if usage_obj is not None:
                obj["usage"] = usage_obj
            return b"data: " + json.dumps(obj).encode() + b"\n\n"

        parts = []
        for i, t in enumerate(texts):
            if calls:
                parts.append(chunk([{"index": i, "delta": {"role": "assistant", "content": None}, "finish_reason": None}]))
                for j, c in enumerate(calls):
                    args = c["function"]["arguments"]
                    half = len(args) // 2
                    head = {"index": j, "id": c["id"], "type": "function",
                            "function": {"name": c["function"]["name"], "arguments": args[:half]}}
                    parts.append(chunk([{"index": i, "delta": {"tool_calls": [head]}, "finish_reason": None}]))
                    tail = {"index": j, "function": {"arguments": args[half:]}}
                    parts.append(chunk([{"index": i, "delta": {"tool_calls": [tail]}, "finish_reason": None}]))
                parts.append(chunk([{"index": i, "delta": {}, "finish_reason": "tool_calls"}]))
                continue
            parts.append(
                chunk([{"index": i, "delta": {"role": "assistant", "content": t}, "finish_reason": None}])
            )
            parts.append(chunk([{"index": i, "delta": {}, "finish_reason": self.config.finish_reason}]))
        opts = payload.get("stream_options") or {}
        if usage is not None and isinstance(opts, Mapping) and opts.get("include_usage"):
            parts.append(chunk([], usage))
        parts.append(b"data: [DONE]\n\n")
        await resp.write(b"".join(parts))
        await resp.write_eof()
        return resp

    # ------------------------------------------------------------------ lifecycle (async)
    async def start(self) -> str:
        """Start serving on the current event loop; returns :attr:`base_url`."""
        if self._runner is not None:
            raise RuntimeError("server already started")
        # Short shutdown grace: a hanging "timeout" fault must not hold stop() for long.
        runner = web.AppRunner(self.make_app(), access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.config.host, self.config.port, reuse_address=True, backlog=1024)
        await site.start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])
        return self.base_url

    async def _astop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    def stop(self) -> Any:
        """Stop the server.

        After :meth:`start_in_thread` this is synchronous: it shuts the thread down before
        returning (the returned value may be awaited or ignored). After :meth:`start` it
        returns a coroutine: ``await server.stop()``.
        """
        if self._thread is not None:
            self._stop_thread()
            return _Done()
        return self._astop()

    async def __aenter__(self) -> FakeOpenAIServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._astop()

    # ------------------------------------------------------------------ lifecycle (thread)
    def start_in_thread(self, timeout: float = 10.0) -> str:
        """Run the server on its own event loop in a daemon thread; returns :attr:`base_url`."""
        if self._thread is not None or self._runner is not None:
            raise RuntimeError("server already started")
        ready = threading.Event()
        errors: list[BaseException] = []
        loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the starting thread
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._astop())
                loop.close()

        self._thread_loop = loop
        self._thread = threading.Thread(target=run, name="fake-openai-server", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError("fake OpenAI server did not start in time")
        if errors:
            self._thread.join()
            self._thread = None
            self._thread_loop = None
            raise errors[0]
        return self.base_url

    def _stop_thread(self, timeout: float = 10.0) -> None:
        thread, loop = self._thread, self._thread_loop
        self._thread = None
        self._thread_loop = None
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout)

    def __enter__(self) -> FakeOpenAIServer:
        self.start_in_thread()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop_thread()


class _Done:
    """An already-finished awaitable (what the synchronous ``stop()`` returns)."""

    def __await__(self) -> Iterator[None]:
        return iter(())
