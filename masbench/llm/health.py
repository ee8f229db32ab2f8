"""Per-model health: the first call is a probe, a misconfigured model is dead, a model whose
provider keeps failing gets a circuit breaker, and ``Retry-After`` holds every call to it.

One :class:`ModelHealth` per model alias, owned by the gateway. Before each attempt a call
awaits :meth:`ModelHealth.acquire`:

* **unproven** (no call has answered yet): one call at a time goes out — the probe — so a
  missing key costs one call per model, not one per cell in flight;
* **dead** (a systemic error: auth, credentials, unknown model, or the same bad request on
  ``bad_request_streak`` distinct cells in a row): every call fails at once, without a request;
* **open** (``threshold`` consecutive retryable failures): calls wait ``cooldown_s`` (doubling
  up to ``max_cooldown_s``), then one probe goes out; its success closes the breaker;
* **held** (a ``Retry-After`` arrived): no call goes out before that moment.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field


@dataclass
class BreakerConfig:
    """Breaker limits, shared by every model of a gateway."""

    threshold: int = 5
    """Consecutive retryable failures that open the breaker."""
    cooldown_s: float = 5.0
    """First pause once open; doubles on every failed probe."""
    max_cooldown_s: float = 120.0
    """Longest pause."""
    bad_request_streak: int = 5
    """The same bad-request error on this many distinct cells in a row makes the model dead."""


@dataclass
class ModelHealth:
    """The health of one model alias (see the module docstring)."""

    alias: str
    config: BreakerConfig = field(default_factory=BreakerConfig)
    proven: bool = False
    dead: str | None = None
    """The systemic error that killed the model (every later call fails with it)."""
    failures: int = 0
    """Consecutive retryable failures."""
    open_until: float = 0.0
    """Breaker open (or Retry-After hold) until this monotonic time."""
    breaker_open: bool = False
    opened: int = 0
    """Times the breaker opened."""
    retry_after_waits: int = 0
    """Retry-After headers honoured."""
    _cooldown: float = 0.0
    _probing: bool = False
    _bad: tuple[str, set] = field(default_factory=lambda: ("", set()))  # one set per model, not one shared
    _changed: asyncio.Event | None = None

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def acquire(self) -> tuple[str | None, bool]:
        """Wait until an attempt may go out. Returns ``(dead_reason, is_probe)``: a reason means
        do not call; a probe must be followed by :meth:`report` (it always is, in the gateway)."""
        while True:
            if self.dead:
                return self.dead, False
            wait = self.open_until - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            if self.proven and not self.breaker_open:
                return None, False
            if not self._probing:
                self._probing = True
                return None, True
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()

    def release_probe(self) -> None:
        """A probe that was cancelled before its outcome: let another call probe (counts nothing)."""
        self._probing = False
        self._notify()

    def report(self, *, ok: bool, probe: bool, systemic: str | None = None, retryable: bool = False,
               bad_request: str | None = None, cell: tuple | None = None, retry_after: float | None = None) -> None:
        """Record one attempt's outcome."""
        now = time.monotonic()
        if probe:
            self._probing = False
        if retry_after:
            self.retry_after_waits += 1
            self.open_until = max(self.open_until, now + retry_after)
        if systemic:
            self.dead = systemic
        elif ok or (not retryable and bad_request is None):
            self.proven, self.failures, self.breaker_open, self._cooldown = True, 0, False, 0.0
            if ok:
                self._bad = ("", set())
        elif retryable:
            self.failures += 1
            if self.failures >= self.config.threshold or (probe and self.breaker_open):
                self._cooldown = min(self.config.max_cooldown_s, (self._cooldown * 2) or self.config.cooldown_s)
                self.open_until = max(self.open_until, now + self._cooldown)
                self.opened += not self.breaker_open
                self.breaker_open = True
        else:  # a bad request: the provider answered (credentials work), but maybe for every cell
            self.proven, self.failures = True, 0
            msg, cells = self._bad
            if msg != bad_request:
                msg, cells = bad_request or "", set()
            if cell is not None:
                cells.add(cell)
            self._bad = (msg, cells)
            if len(cells) >= self.config.bad_request_streak:
                self.dead = f"the same bad request on {len(cells)} distinct cells in a row: {bad_request}"
        self._notify()

    def state(self) -> str:
        """ok | probing | open | held | dead (for the progress line)."""
        if self.dead:
            return "dead"
        if self.breaker_open:
            return "open"
        if self.open_until > time.monotonic():
            return "held"
        return "ok" if self.proven else "probing"


__all__ = ["BreakerConfig", "ModelHealth"]
