"""Provider rate limits of one model: requests per minute, tokens per minute and attempts open at
once (the model YAML's ``rpm``, ``tpm``, ``max_in_flight``), enforced wherever the limiter lives.

:class:`Window` is the arithmetic, with an injected clock: a sliding log of admitted attempts
(time, tokens) checked over the whole window (``rate_window_s``, limits prorated) and over each
sixth of it at a sixth of the limit, so any window of that length holds at most the limit —
an admission is refused when the attempt would push either log past its limit, and a log entry
only ever shrinks (settling a reservation to the reported usage), so a check once passed stays
true. :class:`RateLimiter` is the asyncio side: attempts wait their turn, ``max_in_flight`` is a
count with a condition, and a 429 or ``Retry-After`` pauses the model for everyone.

One :class:`RateLimiter` serves one run: in the process itself (``local``), in the parent behind a
local socket (``processes``, :mod:`.limits_remote`) or in a Ray actor (``ray``) — every worker's
gateway goes through the same one (:class:`CallLimiter` is what the gateway needs of it).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ..spec.model import ModelSpec

SUB_WINDOWS = 6
"""The short window is this fraction of the window, with this fraction of the limit (10 s at 1/6 of a minute's)."""
PAUSE_429_S = 1.0
"""How long a 429 without ``Retry-After`` pauses the model for every worker (doubles while they repeat, to 30 s)."""


@dataclass(frozen=True)
class Limits:
    """One model's limits (see :class:`~masbench.spec.model.ModelSpec`)."""

    rpm: int | None = None
    tpm: int | None = None
    max_in_flight: int | None = None
    window_s: float = 60.0

    @classmethod
    def of(cls, spec: ModelSpec) -> Limits | None:
        """The spec's limits; None when it sets none."""
        if spec.rpm is None and spec.tpm is None and spec.max_in_flight is None:
            return None
        return cls(spec.rpm, spec.tpm, spec.max_in_flight, spec.rate_window_s)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        parts = [f"{self.rpm} rpm" if self.rpm else "", f"{self.tpm:,} tpm" if self.tpm else "",
                 f"{self.max_in_flight} open" if self.max_in_flight else ""]
        return ", ".join(p for p in parts if p)


def limiter_key(spec: ModelSpec) -> str:
    """Quotas are per provider account and model: aliases of one model id and base share one."""
    return f"{spec.id}@{spec.api_base}" if spec.api_base else spec.id


class _Log:
    """A sliding log of (time, amount) over ``span`` seconds, holding at most ``cap``."""

    def __init__(self, span: float, cap: float):
        self.span, self.cap = span, cap
        self.items: deque[list[float]] = deque()
        self.total = 0.0

    def expire(self, now: float) -> None:
        while self.items and self.items[0][0] <= now - self.span:
            e = self.items.popleft()
            self.total -= e[1]
            e[2] = 0.0  # out of the log: settling it changes no total

    def add(self, now: float, amount: float) -> list[float]:
        e = [now, amount, 1.0]
        self.items.append(e)
        self.total += amount
        return e

    def shrink(self, e: list[float], to: float) -> None:
        new = min(e[1], to)
        if e[2]:
            self.total -= e[1] - new
        e[1] = new

    def wait_for(self, amount: float, now: float) -> float:
        """0 if ``amount`` fits now; else seconds until enough of the log has expired. An amount
        above the cap fits an empty log (it could never fit otherwise)."""
        self.expire(now)
        if self.total + amount <= self.cap or not self.items:
            return 0.0
        need, freed = self.total + amount - self.cap, 0.0
        for t, a, _ in self.items:
            freed += a
            if freed >= need:
                return t + self.span - now
        return self.items[-1][0] + self.span - now


class Window:
    """The rate arithmetic of one model (pure; ``now`` is given)."""

    def __init__(self, limits: Limits):
        self.limits = limits
        w = limits.window_s
        scale = w / 60.0
        self._logs: list[tuple[str, _Log]] = []
        for what, per_min in (("req", limits.rpm), ("tok", limits.tpm)):
            if per_min:
                cap = per_min * scale
                self._logs.append((what, _Log(w, cap)))
                self._logs.append((what, _Log(w / SUB_WINDOWS, max(1.0, math.floor(cap / SUB_WINDOWS)))))
        self.paused_until = 0.0

    def wait_for(self, tokens: int, now: float) -> float:
        """Seconds to wait before an attempt reserving ``tokens`` may go out (0: now)."""
        wait = max(0.0, self.paused_until - now)
        for what, log in self._logs:
            wait = max(wait, log.wait_for(1 if what == "req" else tokens, now))
        return wait

    def admit(self, tokens: int, now: float) -> list[tuple[_Log, list[float]]]:
        """Record an admitted attempt; returns its token entries (to settle later)."""
        return [(log, e) for what, log in self._logs
                if (e := log.add(now, 1.0 if what == "req" else float(tokens))) and what == "tok"]

    def settle(self, entries: list[tuple[_Log, list[float]]], used: int) -> None:
        """Replace a reservation by the tokens the attempt used (never more than reserved: a log
        only shrinks, so the windows already checked stay within their limits)."""
        for log, e in entries:
            log.shrink(e, float(used))

    def usage(self, now: float) -> dict[str, float]:
        """Requests and tokens in the current full window."""
        out = {"req": 0.0, "tok": 0.0}
        for what, log in self._logs:
            if log.span == self.limits.window_s:
                log.expire(now)
                out[what] = log.total
        return out


@dataclass
class Lease:
    """One admitted attempt: what to settle when it ends."""

    key: str
    id: int
    tokens: int
    granted_at: float
    """Epoch seconds the limiter admitted it (when it counts against the quota)."""


@dataclass
class _Model:
    limits: Limits
    window: Window
    open: int = 0
    waits: int = 0
    paused: int = 0
    streak_429: int = 0
    leases: dict[int, tuple[list[tuple[_Log, list[float]]], str]] = field(default_factory=dict)
    cond: asyncio.Condition | None = None


class CallLimiter(Protocol):
    """What the gateway needs of a limiter (in-process, over a socket, or a Ray actor)."""

    async def acquire(self, key: str, limits: Limits, tokens: int) -> Lease: ...

    async def release(self, lease: Lease, used: int | None, pause_s: float | None) -> None: ...


class RateLimiter:
    """Every model's limits for one run, on one asyncio loop. ``owner`` names the worker a lease
    belongs to, so a worker that dies gives its open slots back (:meth:`release_owner`)."""

    def __init__(self, clock=time.time):
        self._models: dict[str, _Model] = {}
        self._ids = itertools.count(1)
        self._clock = clock

    def _model(self, key: str, limits: Limits) -> _Model:
        m = self._models.get(key)
        if m is None:
            m = self._models[key] = _Model(limits, Window(limits))
        return m

    async def acquire(self, key: str, limits: Limits, tokens: int, owner: str = "") -> Lease:
        m = self._model(key, limits)
        if m.cond is None:
            m.cond = asyncio.Condition()
        waited = False
        async with m.cond:
            while True:
                if limits.max_in_flight and m.open >= limits.max_in_flight:
                    waited = True
                    await m.cond.wait()
                    continue
                now = self._clock()
                wait = m.window.wait_for(tokens, now)
                if wait <= 0:
                    break
                waited = True
                try:  # sleep, but wake early if a release frees tokens or a slot
                    await asyncio.wait_for(m.cond.wait(), timeout=wait + 1e-3)
                except asyncio.TimeoutError:
                    pass
            entries = m.window.admit(tokens, now)
            m.open += 1
            m.waits += waited
            lid = next(self._ids)
            m.leases[lid] = (entries, owner)
        return Lease(key, lid, tokens, now)

    async def release(self, lease: Lease, used: int | None, pause_s: float | None) -> None:
        m = self._models[lease.key]
        held = m.leases.pop(lease.id, None)
        if held is None:  # released already (its owner died and gave it back)
            return
        if used is not None:
            m.window.settle(held[0], used)
        if pause_s is not None:  # a 429 / Retry-After: every worker holds
            m.streak_429 += 1
            hold = pause_s if pause_s > 0 else min(30.0, PAUSE_429_S * 2 ** (m.streak_429 - 1))
            m.window.paused_until = max(m.window.paused_until, self._clock() + hold)
            m.paused += 1
        elif used is not None:
            m.streak_429 = 0
        m.open -= 1
        assert m.cond is not None
        async with m.cond:
            m.cond.notify_all()

    async def release_owner(self, owner: str) -> int:
        """Give back every open slot of ``owner`` (a worker that died); returns how many."""
        n = 0
        for m in self._models.values():
            for lid in [lid for lid, (_, o) in m.leases.items() if o == owner]:
                del m.leases[lid]
                m.open -= 1
                n += 1
            if m.cond is not None:
                async with m.cond:
                    m.cond.notify_all()
        return n

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Per model key: its limits and what the current window holds (for the progress line and status)."""
        now = self._clock()
        out = {}
        for key, m in self._models.items():
            u = m.window.usage(now)
            out[key] = {"limits": m.limits.to_dict(), "requests": int(u["req"]), "tokens": int(u["tok"]),
                        "open": m.open, "waits": m.waits, "pauses": m.paused,
                        "paused_s": round(max(0.0, m.window.paused_until - now), 1)}
        return out


__all__ = ["CallLimiter", "Lease", "Limits", "RateLimiter", "Window", "limiter_key"]
