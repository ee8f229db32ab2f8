"""The attempt loop of one call: the model's health gate (probe, circuit breaker, Retry-After hold,
dead model — see :mod:`.health`), a per-model concurrency slot, and retries with exponential
backoff and jitter on retryable errors only. It knows nothing of usage, prices or rows: it returns
the reply of the attempt that succeeded, or the error of the last one."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from ..spec.model import ModelSpec
from .backends import Reply
from .errors import describe, is_retryable, retry_after_s, systemic_reason
from .health import BreakerConfig, ModelHealth
from .limits import CallLimiter, Limits, limiter_key


class ModelUnavailable(Exception):
    """A call not sent because its model is dead (misconfigured); never retried."""


@dataclass(slots=True)
class Outcome:
    """What the attempts of one call came to."""

    reply: Reply | None
    """The successful attempt's reply; None if every attempt failed."""
    error: BaseException | None
    """The last attempt's error when no attempt succeeded."""
    attempts: int
    """Attempts sent (a call refused by a dead model's gate sends none)."""
    log: list[str] = field(default_factory=list)
    """One description per failed attempt."""
    sent_at: float | None = None
    """Epoch seconds a rate limiter admitted the first attempt (None: the model has no limits)."""


Send = Callable[[int], Awaitable[Reply]]
"""Sends attempt number ``n`` (1-based) of the call and returns its reply, or raises."""


class AttemptLoop:
    """Per-model health and concurrency, and the retry loop every call goes through."""

    def __init__(self, breaker: BreakerConfig, retry_base_s: float, retry_max_s: float,
                 limiter: CallLimiter | None = None):
        self.breaker = breaker
        self.retry_base_s = retry_base_s
        self.retry_max_s = retry_max_s
        self.health: dict[str, ModelHealth] = {}
        """Per alias: probe, breaker, Retry-After hold, dead (see :mod:`.health`)."""
        self.fatal: tuple[str, str, str] | None = None
        """(alias, model id, error) of the first model found misconfigured: the run must stop."""
        self._sems: dict[str, asyncio.Semaphore] = {}
        self.limiter = limiter
        """The run's rate limiter (shared by every worker); None: no rpm/tpm/max_in_flight anywhere."""
        self.limits: dict[str, Limits] = {}
        """Per alias with limits: what its model YAML sets."""

    def add_model(self, alias: str, spec: ModelSpec) -> None:
        self._sems[alias] = asyncio.Semaphore(spec.concurrency)
        self.health[alias] = ModelHealth(alias, self.breaker)
        if (lim := Limits.of(spec)) is not None:
            self.limits[alias] = lim

    def limited(self, alias: str) -> Limits | None:
        """The alias's limits when a limiter enforces them (else None)."""
        return self.limits.get(alias) if self.limiter is not None else None

    async def _send(self, alias: str, spec: ModelSpec, send: Send, out: Outcome, reserve: int) -> Reply:
        """One attempt through the concurrency slot and, for a limited model, the run's limiter:
        admitted before it goes out, settled to its usage (or a 429's pause) after."""
        lim = self.limited(alias)
        if lim is None or self.limiter is None:
            async with self._sems[alias]:
                return await send(out.attempts)
        lease = await self.limiter.acquire(limiter_key(spec), lim, reserve)
        if out.sent_at is None:
            out.sent_at = lease.granted_at
        try:
            async with self._sems[alias]:
                reply = await send(out.attempts)
        except BaseException as exc:
            pause = None
            if isinstance(exc, Exception) and getattr(exc, "status_code", None) == 429:
                pause = retry_after_s(exc) or 0.0  # 0: the limiter's own back-off
            elif isinstance(exc, Exception) and (ra := retry_after_s(exc)):
                pause = ra
            await self.limiter.release(lease, None, pause)  # the reservation stays counted
            raise
        u = reply.usage()
        await self.limiter.release(lease, None if u is None else u.prompt_tokens + u.completion_tokens, None)
        return reply

    async def run(self, alias: str, spec: ModelSpec, send: Send, cell: tuple[object, ...],
                  reserve: int = 0) -> Outcome:
        """Attempt the call until it succeeds, fails for good, or runs out of attempts.
        ``cell``: (design, task, seed) of the call, for the health's bad-request bookkeeping;
        ``reserve``: the tokens each attempt reserves on a ``tpm``-limited model (its worst case)."""
        out = Outcome(None, None, 0)
        health = self.health[alias]

        async def attempt_once() -> Reply:
            dead, probe = await health.acquire()  # probe / breaker / Retry-After / dead model
            if dead:
                raise ModelUnavailable(f"not sent: model {alias!r} ({spec.id}) is unusable: {dead}")
            out.attempts += 1
            try:
                reply = await self._send(alias, spec, send, out, reserve)
            except asyncio.CancelledError:
                if probe:
                    health.release_probe()
                raise
            except Exception as exc:
                out.log.append(describe(exc))
                self._report(alias, spec, health, exc, probe, cell)
                raise
            health.report(ok=True, probe=probe)
            return reply

        # First attempt without tenacity (its bookkeeping costs ~30 µs a call); the retry loop
        # only starts once a retryable error has happened.
        try:
            out.reply = await attempt_once()
            return out
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            first: Exception = exc
        if not is_retryable(first) or spec.max_attempts <= out.attempts:
            out.error = first
            return out
        # tenacity's first try is immediate; the failed first attempt earns a jittered wait
        # (a Retry-After hold is waited for inside attempt_once, by the model's health).
        await asyncio.sleep(random.uniform(0, self.retry_base_s))
        # imported here: a run whose calls all succeed first time never loads tenacity (~60 modules
        # with the tornado it looks for), so the simulator's first call does not wait for it
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_random_exponential

        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(spec.max_attempts - 1),
                wait=wait_random_exponential(multiplier=self.retry_base_s, max=self.retry_max_s),
                retry=retry_if_exception(is_retryable),
                reraise=True,
            ):
                with attempt:
                    out.reply = await attempt_once()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the call failed for good
            out.error = exc
        return out

    def _report(self, alias: str, spec: ModelSpec, health: ModelHealth, exc: Exception, probe: bool,
                cell: tuple[object, ...]) -> None:
        systemic = systemic_reason(exc)
        retryable = systemic is None and is_retryable(exc)
        health.report(ok=False, probe=probe, systemic=systemic, retryable=retryable,
                      bad_request=None if systemic or retryable else describe(exc), cell=cell,
                      retry_after=retry_after_s(exc) if retryable else None)
        if health.dead and self.fatal is None:
            self.fatal = (alias, spec.id, health.dead)

    def breakers_open(self) -> int:
        return sum(h.breaker_open for h in self.health.values())

    def retry_after_waits(self) -> int:
        return sum(h.retry_after_waits for h in self.health.values())


__all__ = ["AttemptLoop", "ModelUnavailable", "Outcome", "Send"]
