"""The run's :class:`~.limits.RateLimiter` shared by worker processes over a local socket.

The parent of a ``--workers N`` run serves its limiter on a Unix socket (:class:`LimiterServer`,
on the parent's event loop); each worker's gateway holds a :class:`SocketLimiter`, one connection
multiplexing every call of the worker (JSON lines, request ids). An acquire is answered when the
limiter admits the attempt; a release needs no answer. When a worker's connection closes (it
finished, or died) its open slots go back to the others.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from typing import Any

from .limits import Lease, Limits, RateLimiter


class LimiterServer:
    """Serves ``limiter`` on the Unix socket ``path`` (call :meth:`start`, then :meth:`close`)."""

    def __init__(self, limiter: RateLimiter, path: str):
        self.limiter, self.path = limiter, path
        self._server: asyncio.AbstractServer | None = None
        self._conns = itertools.count()

    async def start(self) -> None:
        if os.path.exists(self.path):
            os.unlink(self.path)
        self._server = await asyncio.start_unix_server(self._serve, path=self.path)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        if os.path.exists(self.path):
            os.unlink(self.path)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        owner = f"conn{next(self._conns)}"
        pending: set[asyncio.Task] = set()

        async def admit(msg: dict[str, Any]) -> None:
            lease = await self.limiter.acquire(msg["key"], Limits(**msg["limits"]), int(msg["tokens"]), owner)
            writer.write(json.dumps({"id": msg["id"], "lease": lease.id, "t": lease.granted_at}).encode() + b"\n")

        try:
            async for line in reader:
                msg = json.loads(line)
                if msg["op"] == "acquire":
                    t = asyncio.ensure_future(admit(msg))
                    pending.add(t)
                    t.add_done_callback(pending.discard)
                else:
                    await self.limiter.release(Lease(msg["key"], msg["lease"], 0, 0.0), msg.get("used"),
                                               msg.get("pause"))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            for t in list(pending):
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            await self.limiter.release_owner(owner)
            writer.close()


class SocketLimiter:
    """A worker's side: the :class:`~.limits.CallLimiter` of its gateway, talking to the parent."""

    def __init__(self, path: str):
        self.path = path
        self._ids = itertools.count()
        self._waiting: dict[int, asyncio.Future] = {}
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task | None = None
        self._lock: asyncio.Lock | None = None

    async def _connect(self) -> asyncio.StreamWriter:
        if self._writer is None:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                if self._writer is None:
                    reader, writer = await asyncio.open_unix_connection(self.path)
                    self._reader_task = asyncio.ensure_future(self._read(reader))
                    self._writer = writer
        return self._writer

    async def _read(self, reader: asyncio.StreamReader) -> None:
        async for line in reader:
            msg = json.loads(line)
            fut = self._waiting.pop(msg["id"], None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
        for fut in self._waiting.values():  # the parent went away: no call may go out unchecked
            if not fut.done():
                fut.set_exception(ConnectionError("the run's rate limiter (the parent process) went away"))

    async def acquire(self, key: str, limits: Limits, tokens: int) -> Lease:
        w = await self._connect()
        rid = next(self._ids)
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._waiting[rid] = fut
        w.write(json.dumps({"op": "acquire", "id": rid, "key": key, "limits": limits.to_dict(),
                            "tokens": tokens}).encode() + b"\n")
        try:
            msg = await fut
        finally:
            self._waiting.pop(rid, None)
        return Lease(key, int(msg["lease"]), tokens, float(msg["t"]))

    async def release(self, lease: Lease, used: int | None, pause_s: float | None) -> None:
        w = await self._connect()
        w.write(json.dumps({"op": "release", "key": lease.key, "lease": lease.id, "used": used,
                            "pause": pause_s}).encode() + b"\n")

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._reader_task is not None:
            self._reader_task.cancel()


__all__ = ["LimiterServer", "SocketLimiter"]
