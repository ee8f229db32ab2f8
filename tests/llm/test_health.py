"""A model's health step by step on a fake clock: the probe, the breaker's threshold and doubling
cooldown, the Retry-After hold, the bad-request streak that kills a model, and what each state lets
through (issue 29). Every expected time is worked by hand from the clock value; no real sleep."""

from __future__ import annotations

import asyncio
import types

import pytest

from masbench.llm import health as health_mod
from masbench.llm.health import BreakerConfig, ModelHealth


class Clock:
    """A monotonic clock that only moves when told (or when the health sleeps on it)."""

    def __init__(self, t: float = 100.0):
        self.t = t
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.t

    async def sleep(self, d: float) -> None:
        self.slept.append(d)
        self.t += d
        await asyncio.sleep(0)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(health_mod, "time", types.SimpleNamespace(monotonic=c.monotonic))
    monkeypatch.setattr(health_mod, "asyncio", types.SimpleNamespace(sleep=c.sleep, Event=asyncio.Event))
    return c


def _h(**cfg) -> ModelHealth:
    return ModelHealth("m", BreakerConfig(**cfg))


def test_defaults() -> None:
    c = BreakerConfig()
    assert (c.threshold, c.cooldown_s, c.max_cooldown_s, c.bad_request_streak) == (5, 5.0, 120.0, 5)
    h = ModelHealth("m")
    assert h.config == c and not h.proven and h.dead is None and h.failures == 0 and h.open_until == 0.0
    assert not h.breaker_open and h.opened == 0 and h.retry_after_waits == 0 and h.state() == "probing"


# ----- report ----------------------------------------------------------------------------------------

def test_breaker_opens_at_the_threshold_and_the_cooldown_doubles_up_to_the_cap(clock) -> None:
    h = _h(threshold=3, cooldown_s=5.0, max_cooldown_s=12.0)
    h.report(ok=True, probe=True)
    for _ in range(2):
        h.report(ok=False, probe=False, retryable=True)
    assert h.failures == 2 and not h.breaker_open and h.open_until == 0.0 and h.state() == "ok"
    h.report(ok=False, probe=False, retryable=True)  # the 3rd: open for 5 s (100 + 5)
    assert h.breaker_open and h.opened == 1 and h.open_until == 105.0 and h.state() == "open"
    clock.t = 106.0
    h.report(ok=False, probe=True, retryable=True)  # failed probe: 5 * 2 = 10 s, from 106
    assert h.open_until == 116.0 and h.opened == 1 and h.failures == 4
    clock.t = 117.0
    h.report(ok=False, probe=True, retryable=True)  # 10 * 2 = 20, capped at 12
    assert h.open_until == 129.0
    clock.t = 130.0
    h.report(ok=False, probe=True, retryable=True)  # stays at the cap
    assert h.open_until == 142.0
    h.report(ok=True, probe=True)  # a successful probe closes it and resets the cooldown
    assert not h.breaker_open and h.failures == 0 and h._cooldown == 0.0 and h.state() == "held"
    clock.t = 142.0
    assert h.state() == "ok"  # held only while open_until is ahead
    for _ in range(3):
        h.report(ok=False, probe=False, retryable=True)
    assert h.open_until == 147.0 and h.opened == 2  # the first cooldown again: 142 + 5


def test_a_longer_hold_is_never_shortened(clock) -> None:
    h = _h(threshold=1, cooldown_s=1.0)
    h.report(ok=False, probe=True, retryable=True, retry_after=30.0)  # hold to 130, breaker to 101
    assert h.open_until == 130.0 and h.retry_after_waits == 1 and h.breaker_open
    h.report(ok=False, probe=True, retryable=True, retry_after=2.0)
    assert h.open_until == 130.0 and h.retry_after_waits == 2


def test_retry_after_holds_every_call_until_then(clock) -> None:
    h = _h()
    h.report(ok=True, probe=True)
    h.report(ok=False, probe=False, retryable=True, retry_after=3.0)
    assert h.open_until == 103.0 and h.retry_after_waits == 1 and h.state() == "held"
    assert h.failures == 1 and not h.breaker_open
    h.report(ok=False, probe=False, retryable=True, retry_after=0.0)  # 0: nothing to hold, not counted
    h.report(ok=False, probe=False, retryable=True, retry_after=None)
    assert h.retry_after_waits == 1 and h.open_until == 103.0


def test_a_failed_probe_reopens_an_open_breaker_below_the_threshold(clock) -> None:
    h = _h(threshold=3, cooldown_s=2.0)
    h.report(ok=True, probe=True)
    for _ in range(3):
        h.report(ok=False, probe=False, retryable=True)
    assert h.open_until == 102.0
    h.report(ok=False, probe=False, bad_request="E[400]: x", cell=("d", "t", 0))  # failures back to 0, still open
    assert h.failures == 0 and h.breaker_open
    clock.t = 103.0
    h.report(ok=False, probe=False, retryable=True)  # not a probe, 1 < 3: nothing changes
    assert h.open_until == 102.0 and h.failures == 1
    h.report(ok=False, probe=True, retryable=True)  # a probe: reopened, 2 * 2 = 4 s from 103
    assert h.open_until == 107.0 and h.opened == 1


def test_a_systemic_error_kills_the_model(clock) -> None:
    h = _h()
    h.report(ok=False, probe=True, systemic="AuthenticationError[401]: no key", retryable=True)
    assert h.dead == "AuthenticationError[401]: no key" and h.state() == "dead"
    assert h.failures == 0 and not h.proven and not h._probing  # a systemic error counts nothing else


def test_a_non_retryable_error_that_is_no_bad_request_proves_the_model(clock) -> None:
    h = _h()
    h._bad = ("E: x", {("d", "t1", 0)})
    h.report(ok=False, probe=True)
    assert h.proven and h.state() == "ok" and h._bad == ("E: x", {("d", "t1", 0)})  # the streak goes on


def test_the_same_bad_request_on_n_distinct_cells_kills_the_model(clock) -> None:
    h = _h(bad_request_streak=3, threshold=2)
    h.report(ok=False, probe=False, retryable=True)
    bad = "BadRequestError[400]: unknown parameter"
    h.report(ok=False, probe=True, bad_request=bad, cell=("d", "t1", 0))
    assert h.proven and h.failures == 0 and h.dead is None  # the provider answered: credentials work
    h.report(ok=False, probe=False, bad_request=bad, cell=("d", "t1", 0))  # the same cell again
    h.report(ok=False, probe=False, bad_request=bad, cell=None)  # no cell: not counted
    h.report(ok=False, probe=False, bad_request=bad, cell=("d", "t2", 0))
    assert h.dead is None and h._bad == (bad, {("d", "t1", 0), ("d", "t2", 0)})
    h.report(ok=False, probe=False, bad_request=bad, cell=("d", "t3", 0))
    assert h.dead == f"the same bad request on 3 distinct cells in a row: {bad}" and h.state() == "dead"


def test_a_different_bad_request_or_a_success_restarts_the_streak(clock) -> None:
    h = _h(bad_request_streak=2)
    h.report(ok=False, probe=False, bad_request="A", cell=("d", "t1", 0))
    h.report(ok=False, probe=False, bad_request="B", cell=("d", "t2", 0))
    assert h.dead is None and h._bad == ("B", {("d", "t2", 0)})
    h.report(ok=True, probe=False)
    assert h._bad == ("", set())
    h.report(ok=False, probe=False, bad_request="B", cell=("d", "t3", 0))
    assert h.dead is None
    h.report(ok=False, probe=False, bad_request="B", cell=("d", "t4", 0))
    assert h.dead == "the same bad request on 2 distinct cells in a row: B"


def test_a_report_ends_the_probe_and_wakes_the_waiters(clock) -> None:
    h = _h()
    h._probing = True
    h.report(ok=False, probe=False, retryable=True)
    assert h._probing  # not the probe's report
    ev = asyncio.Event()
    h._changed = ev
    h.report(ok=True, probe=True)
    assert not h._probing and ev.is_set() and h._changed is None


# ----- acquire ---------------------------------------------------------------------------------------

async def test_an_unproven_model_lets_one_probe_out_then_everyone_after_its_success(clock) -> None:
    h = _h()
    assert await h.acquire() == (None, True)
    waiter = asyncio.ensure_future(h.acquire())
    for _ in range(3):
        await asyncio.sleep(0)
    assert not waiter.done()  # a second caller waits for the probe's outcome
    h.report(ok=True, probe=True)
    assert await asyncio.wait_for(waiter, 10) == (None, False)
    assert await h.acquire() == (None, False) and clock.slept == []


async def test_a_failed_probe_hands_the_probe_to_the_next_caller(clock) -> None:
    h = _h()
    assert await h.acquire() == (None, True)
    waiter = asyncio.ensure_future(h.acquire())
    await asyncio.sleep(0)
    h.report(ok=False, probe=True, retryable=True)  # 1 < 5 failures: not open, just unproven
    assert await asyncio.wait_for(waiter, 10) == (None, True)


async def test_an_open_breaker_waits_out_the_cooldown_then_probes(clock) -> None:
    h = _h(threshold=1, cooldown_s=4.0)
    h.report(ok=True, probe=True)
    h.report(ok=False, probe=False, retryable=True)  # open until 104
    clock.t = 101.5
    assert await h.acquire() == (None, True)  # slept 104 - 101.5 = 2.5, then the one probe
    assert clock.slept == [2.5] and clock.t == 104.0
    waiter = asyncio.ensure_future(h.acquire())
    await asyncio.sleep(0)
    assert not waiter.done()  # open: one probe at a time
    h.report(ok=True, probe=True)
    assert await asyncio.wait_for(waiter, 10) == (None, False)


async def test_a_hold_delays_a_proven_model_without_a_probe(clock) -> None:
    h = _h()
    h.report(ok=True, probe=True)
    h.open_until = 100.0  # exactly now: no wait
    assert await h.acquire() == (None, False) and clock.slept == []
    h.report(ok=False, probe=False, retryable=True, retry_after=7.0)
    assert await h.acquire() == (None, False)
    assert clock.slept == [7.0] and clock.t == 107.0


async def test_a_dead_model_answers_at_once_even_while_held(clock) -> None:
    h = _h()
    h.open_until = 1000.0
    h.dead = "AuthenticationError[401]: no key"
    assert await h.acquire() == ("AuthenticationError[401]: no key", False) and clock.slept == []


async def test_a_model_killed_while_callers_wait_fails_them(clock) -> None:
    h = _h()
    assert await h.acquire() == (None, True)
    waiter = asyncio.ensure_future(h.acquire())
    await asyncio.sleep(0)
    h.report(ok=False, probe=True, systemic="E[401]: no")
    assert await asyncio.wait_for(waiter, 10) == ("E[401]: no", False)


async def test_release_probe_lets_the_next_caller_probe(clock) -> None:
    h = _h()
    assert await h.acquire() == (None, True)
    waiter = asyncio.ensure_future(h.acquire())
    await asyncio.sleep(0)
    h.release_probe()
    assert await asyncio.wait_for(waiter, 10) == (None, True) and h.failures == 0


def test_state_order(clock) -> None:
    h = _h()
    assert h.state() == "probing"
    h.proven = True
    assert h.state() == "ok"
    h.open_until = 100.5
    assert h.state() == "held"
    h.breaker_open = True
    assert h.state() == "open"
    h.dead = "x"
    assert h.state() == "dead"


async def test_a_hold_shorter_than_a_second_is_waited_too(clock) -> None:
    h = _h()
    h.report(ok=True, probe=True)
    h.open_until = 100.25
    assert await h.acquire() == (None, False)
    assert clock.slept == [0.25] and clock.t == 100.25


def test_the_streak_compares_messages_verbatim_even_an_empty_one(clock) -> None:
    h = _h(bad_request_streak=2)
    h.report(ok=False, probe=False, bad_request="", cell=("d", "t1", 0))
    assert h._bad == ("", {("d", "t1", 0)})
    h.report(ok=False, probe=False, bad_request="", cell=("d", "t2", 0))
    assert h.dead == "the same bad request on 2 distinct cells in a row: "


def test_models_do_not_share_their_bad_request_cells(clock) -> None:
    a, b = _h(bad_request_streak=2), _h(bad_request_streak=2)
    a.report(ok=False, probe=False, bad_request="", cell=("d", "t1", 0))
    assert b._bad == ("", set())  # the default was one set shared by every ModelHealth
    b.report(ok=False, probe=False, bad_request="", cell=("d", "t2", 0))
    assert a.dead is None and b.dead is None


def test_an_empty_bad_request_after_another_one_starts_its_own_streak(clock) -> None:
    h = _h(bad_request_streak=2)
    h.report(ok=False, probe=False, bad_request="A", cell=("d", "t1", 0))
    h.report(ok=False, probe=False, bad_request="", cell=("d", "t2", 0))
    h.report(ok=False, probe=False, bad_request="", cell=("d", "t3", 0))
    assert h.dead == "the same bad request on 2 distinct cells in a row: "
