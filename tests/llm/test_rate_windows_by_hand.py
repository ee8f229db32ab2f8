"""The rate limiter's windows at hand-picked timestamps (masbench.llm.limits): each wait below is worked
from the model's limits — the full window (``rate_window_s``, limits prorated) and its sixth (a sixth of
the limit, at least 1) — and quotas are shared by every alias of one model id and base."""

from __future__ import annotations

import pytest

from masbench.llm.limits import PAUSE_429_S, Limits, RateLimiter, Window, limiter_key
from masbench.spec.model import ModelSpec


def test_a_minute_and_its_sixth_for_requests():
    """rpm 12 over 60 s: at most 12 a minute and 2 per 10 s."""
    w = Window(Limits(rpm=12))
    assert w.wait_for(1, 0.0) == 0.0
    w.admit(1, 0.0)
    w.admit(1, 0.0)
    assert w.wait_for(1, 0.0) == 10.0      # the 10 s window holds 2: the first leaves it at 0 + 10
    assert w.wait_for(1, 9.5) == 0.5
    assert w.wait_for(1, 10.0) == 0.0      # an entry at 0 is out of the window (0, 10]
    for t in (10.0, 10.0, 20.0, 20.0, 30.0, 30.0, 40.0, 40.0, 50.0, 50.0):
        assert w.wait_for(1, t) == 0.0
        w.admit(1, t)
    # 12 in the minute: the full window waits for t = 0's entries (until 60), the short one for 50's (60)
    assert w.wait_for(1, 55.0) == 5.0
    assert w.usage(55.0) == {"req": 12.0, "tok": 0.0}
    assert w.usage(60.0) == {"req": 10.0, "tok": 0.0}  # t = 0's two left the minute
    assert w.usage(200.0) == {"req": 0.0, "tok": 0.0}


def test_a_scaled_window_binds_on_its_own_length():
    """rpm 12 over a 6 s window: 1.2 per 6 s (prorated), and per 1 s max(1, ⌊0.2⌋) = 1; rpm 120 over
    6 s: 12 per 6 s and 2 per 1 s."""
    w = Window(Limits(rpm=12, window_s=6.0))
    w.admit(1, 0.0)
    assert w.wait_for(1, 0.5) == 5.5   # 1 + 1 > 1.2 in the 6 s window, until 0 + 6 (the 1 s window: 0.5)
    assert w.wait_for(1, 1.0) == 5.0
    assert w.wait_for(1, 6.0) == 0.0
    w = Window(Limits(rpm=120, window_s=6.0))
    w.admit(1, 0.0)
    w.admit(1, 0.0)
    assert w.wait_for(1, 0.5) == 0.5   # the 1 s window holds 2; the 6 s one has room (3 ≤ 12)
    assert w.wait_for(1, 1.0) == 0.0
    assert w.usage(0.5) == {"req": 2.0, "tok": 0.0}


def test_tokens_are_reserved_then_settled_down_never_up():
    """tpm 600: 600 per minute and 100 per 10 s."""
    w = Window(Limits(tpm=600))
    entries = w.admit(100, 0.0)
    assert w.wait_for(1, 1.0) == 9.0     # 100 reserved fill the 10 s window
    w.settle(entries, 40)
    assert w.wait_for(60, 1.0) == 0.0    # 40 + 60 = 100 fits
    assert w.wait_for(61, 1.0) == 9.0    # 101 does not: wait for t = 0's 40 to leave
    assert w.usage(1.0) == {"req": 0.0, "tok": 40.0}
    w.settle(entries, 150)               # more than reserved: a log only shrinks
    assert w.usage(1.0)["tok"] == 40.0
    later = w.admit(50, 70.0)
    assert w.usage(70.0) == {"req": 0.0, "tok": 50.0}  # t = 0's entry left both logs
    w.settle(entries, 0)                 # settling an entry out of the log changes no total
    assert w.usage(70.0) == {"req": 0.0, "tok": 50.0}
    w.settle(later, 20)
    assert w.usage(70.0)["tok"] == 20.0


def test_requests_and_tokens_each_hold_their_own_limit():
    """rpm 6 (1 per 10 s) and tpm 600 (100 per 10 s) together: the stricter one decides."""
    w = Window(Limits(rpm=6, tpm=600))
    w.admit(10, 0.0)
    assert w.wait_for(10, 2.0) == 8.0     # requests: 1 per 10 s is used
    w2 = Window(Limits(rpm=600, tpm=600))
    w2.admit(90, 0.0)
    assert w2.wait_for(20, 2.0) == 8.0    # tokens: 90 + 20 > 100
    assert w2.wait_for(10, 2.0) == 0.0


def test_a_wait_counts_entries_until_enough_have_left():
    """tpm 600 (100 per 10 s): 30 at 0, 30 at 2, 30 at 4; 40 more need 30 + 40 − 100 = 0 at first... and 70
    need 90 + 70 − 100 = 60 freed: t = 0 and t = 2 (30 + 30) must leave, at 2 + 10."""
    w = Window(Limits(tpm=600))
    for t in (0.0, 2.0, 4.0):
        w.admit(30, t)
    assert w.wait_for(10, 5.0) == 0.0
    assert w.wait_for(40, 5.0) == 5.0     # 30 must leave: t = 0's, at 10
    assert w.wait_for(70, 5.0) == 7.0     # 60 must leave: t = 2's too, at 12
    assert w.wait_for(95, 5.0) == 9.0     # 85: all three, t = 4's at 14
    assert w.wait_for(150, 5.0) == 9.0    # 140 > the 90 the log holds: when the last (t = 4) leaves, at 14


def test_aliases_of_one_model_share_one_quota_key():
    a = ModelSpec(id="openai/m", api_base="http://127.0.0.1:9/v1", rpm=10)
    b = ModelSpec(id="openai/m", api_base="http://127.0.0.1:9/v1", tpm=100)
    other_base = ModelSpec(id="openai/m", api_base="http://127.0.0.1:8/v1")
    no_base = ModelSpec(id="openai/m")
    assert limiter_key(a) == limiter_key(b) == "openai/m@http://127.0.0.1:9/v1"
    assert limiter_key(other_base) != limiter_key(a) and limiter_key(no_base) == "openai/m"
    assert Limits.of(a) == Limits(rpm=10) and Limits.of(b) == Limits(tpm=100) and Limits.of(no_base) is None
    assert Limits.of(ModelSpec(id="x", max_in_flight=3, rate_window_s=6.0)) == Limits(None, None, 3, 6.0)
    assert Limits(rpm=600, tpm=60_000, max_in_flight=4).describe() == "600 rpm, 60,000 tpm, 4 open"
    assert Limits(tpm=1000).describe() == "1,000 tpm"


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


async def test_every_key_sharing_a_quota_counts_against_it():
    clock = Clock()
    lim = RateLimiter(clock=clock)
    limits = Limits(rpm=600)
    key = limiter_key(ModelSpec(id="openai/m", api_base="http://h/v1"))
    leases = [await lim.acquire(key, limits, 0) for _ in range(3)]  # aliases a, b, a of the same model
    other = await lim.acquire("openai/m", limits, 0)
    snap = lim.snapshot()
    assert snap[key]["requests"] == 3 and snap[key]["open"] == 3 and snap["openai/m"]["requests"] == 1
    assert leases[0].granted_at == 1000.0 and [x.id for x in leases + [other]] == [1, 2, 3, 4]
    for x in leases:
        await lim.release(x, 0, None)
    assert lim.snapshot()[key]["open"] == 0 and lim.snapshot()[key]["requests"] == 3  # releasing frees slots, not quota


async def test_429_pauses_double_while_they_repeat_and_reset_after_a_success():
    clock = Clock()
    lim = RateLimiter(clock=clock)
    limits = Limits(rpm=6000)
    holds = []
    for pause in (0.0, 0.0, 0.0, 2.5):  # no Retry-After three times, then Retry-After: 2.5
        lease = await lim.acquire("m", limits, 0)
        await lim.release(lease, None, pause)
        holds.append(lim.snapshot()["m"]["paused_s"])
        clock.t += 100
    # 1 s, doubling: 1, 2, 4; a Retry-After is taken as given
    assert holds == [PAUSE_429_S, 2.0, 4.0, 2.5] and lim.snapshot()["m"]["pauses"] == 4
    lease = await lim.acquire("m", limits, 0)
    await lim.release(lease, 10, None)  # a success ends the streak
    lease = await lim.acquire("m", limits, 0)
    await lim.release(lease, None, 0.0)
    assert lim.snapshot()["m"]["paused_s"] == 1.0
    clock.t += 100
    lease = await lim.acquire("m", limits, 0)
    await lim.release(lease, None, None)  # no usage (a failed attempt): the streak goes on
    clock.t += 100
    lease = await lim.acquire("m", limits, 0)
    await lim.release(lease, None, 0.0)
    assert lim.snapshot()["m"]["paused_s"] == 2.0


async def test_a_pause_is_capped_at_30_seconds_and_never_shortened():
    clock = Clock()
    lim = RateLimiter(clock=clock)
    limits = Limits(rpm=6000)
    for _ in range(7):  # 1, 2, 4, 8, 16, 32 → 30, 64 → 30
        lease = await lim.acquire("m", limits, 0)
        await lim.release(lease, None, 0.0)
        clock.t += 31
    assert lim.snapshot()["m"]["paused_s"] == 0.0
    early = await lim.acquire("m", limits, 0)
    lease = await lim.acquire("m", limits, 0)
    await lim.release(lease, None, 0.0)
    assert lim.snapshot()["m"]["paused_s"] == 30.0
    # a lease granted before the pause ends later with a shorter Retry-After: the longer pause stays
    await lim.release(early, None, 5.0)
    assert lim.snapshot()["m"]["paused_s"] == pytest.approx(30.0)


class _Asyncio:
    """The limiter's view of asyncio, with ``wait_for`` replaced: a timed wait records its timeout and
    moves the fake clock past it (so a test never sleeps)."""

    def __init__(self, clock: Clock):
        import asyncio
        self.Condition, self.TimeoutError = asyncio.Condition, asyncio.TimeoutError
        self.clock, self.timeouts = clock, []

    async def wait_for(self, aw, timeout):
        aw.close()
        self.timeouts.append(timeout)
        self.clock.t += timeout
        raise self.TimeoutError


async def test_the_limiter_waits_exactly_the_windows_wait_and_counts_it(monkeypatch):
    import masbench.llm.limits as limits_mod
    clock = Clock()
    fake = _Asyncio(clock)
    monkeypatch.setattr(limits_mod, "asyncio", fake)
    lim = RateLimiter(clock=clock)
    limits = Limits(tpm=600)  # 100 tokens per 10 s
    first = await lim.acquire("m", limits, 100)
    assert fake.timeouts == [] and lim.snapshot()["m"]["tokens"] == 100 and first.tokens == 100
    second = await lim.acquire("m", limits, 30)  # the 10 s window is full until 1000 + 10
    assert fake.timeouts == [10.0 + 1e-3] and second.granted_at == pytest.approx(1010.001)
    await lim.release(first, 40, None)  # settled to its usage (it left the 10 s window; the minute keeps 40)
    assert lim.snapshot()["m"] == {"limits": {"rpm": None, "tpm": 600, "max_in_flight": None, "window_s": 60.0},
                                   "requests": 0, "tokens": 70, "open": 1, "waits": 1, "pauses": 0, "paused_s": 0.0}
    await lim.release(first, 40, None)  # released twice (its owner died first): nothing changes
    assert lim.snapshot()["m"]["open"] == 1
    await lim.release(second, None, 0.44)  # a Retry-After under a second is taken as given (shown to 0.1 s)
    snap = lim.snapshot()["m"]
    assert (snap["tokens"], snap["paused_s"], snap["pauses"], snap["open"]) == (70, 0.4, 1, 0)
    clock.t += 100
    third = await lim.acquire("m", limits, 100)   # the minute holds 70: 100 more wait for the 10 s window
    fourth = await lim.acquire("m", limits, 100)  # ... waits 10 s
    await lim.acquire("m", limits, 0)             # 0 tokens fit: no wait
    assert lim.snapshot()["m"]["waits"] == 2 and third.tokens == fourth.tokens == 100


async def test_a_wait_for_a_free_slot_is_counted():
    import asyncio
    lim = RateLimiter()
    limits = Limits(max_in_flight=1)
    held = await lim.acquire("m", limits, 0)
    waiting = asyncio.ensure_future(lim.acquire("m", limits, 0))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    await lim.release(held, 0, None)
    await asyncio.wait_for(waiting, 1.0)
    assert lim.snapshot()["m"]["waits"] == 1
    assert await lim.release_owner("") == 1  # a lease taken without an owner belongs to ""


def test_describe_names_only_the_limits_set():
    assert Limits(rpm=5).describe() == "5 rpm" and Limits(max_in_flight=2).describe() == "2 open"
    assert Limits().describe() == "" and Limits(rpm=5).to_dict()["window_s"] == 60.0
