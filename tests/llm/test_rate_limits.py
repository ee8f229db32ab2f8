"""The rate limiter of masbench.llm.limits: its windows checked by brute force over simulated time,
max_in_flight, 429 pauses, slots given back by a dead worker, and the socket the processes engine
shares it over."""

from __future__ import annotations

import asyncio
import bisect
import random
import tempfile
from pathlib import Path

from masbench.llm.limits import Lease, Limits, RateLimiter, Window
from masbench.llm.limits_remote import LimiterServer, SocketLimiter


def most_in_any_window(times: list[float], amounts: list[float], span: float) -> float:
    """The largest sum of ``amounts`` whose ``times`` fall in one half-open window [t, t + span)
    (brute force: a window worth checking starts at an event)."""
    order = sorted(range(len(times)), key=lambda i: times[i])
    ts = [times[i] for i in order]
    am = [amounts[i] for i in order]
    best = 0.0
    for j, t in enumerate(ts):
        k = bisect.bisect_left(ts, t + span)
        best = max(best, sum(am[j:k]))
    return best


def drive(window: Window, n: int, reserve, used, seed: int = 0) -> tuple[list[float], list[float], float]:
    """Admit ``n`` attempts as fast as the window lets them, arrivals jittered; settle each to its
    usage right after. Returns (admission times, tokens used, end time)."""
    rng = random.Random(seed)
    now, times, toks = 0.0, [], []
    for _ in range(n):
        now += rng.choice([0.0, 0.0, 0.001, 0.05])
        r = reserve(rng)
        while (w := window.wait_for(r, now)) > 0:
            now += w
        entries = window.admit(r, now)
        u = used(rng, r)
        window.settle(entries, u)
        times.append(now)
        toks.append(u)
    return times, toks, now


def test_rpm_600_never_more_than_600_a_minute_nor_100_in_10_seconds():
    w = Window(Limits(rpm=600))
    times, _, end = drive(w, 2500, lambda r: 1, lambda r, x: 1)
    assert most_in_any_window(times, [1] * len(times), 60.0) <= 600
    assert most_in_any_window(times, [1] * len(times), 10.0) <= 100
    # and not slower than it must be: 2,500 requests at 100 per 10 s need ~240 s, not much more
    assert 235 <= end <= 260, end


def test_tpm_counts_the_reservation_then_the_usage():
    lim = Limits(tpm=60_000)
    w = Window(lim)
    times, toks, end = drive(w, 3000, lambda r: r.randint(300, 1500), lambda r, x: r.randint(50, x))
    assert most_in_any_window(times, toks, 60.0) <= 60_000
    assert most_in_any_window(times, toks, 10.0) <= 10_000
    # settling returns the unused reservation: far more calls than reservations alone would allow
    reserved_only = Window(lim)
    _, _, end_unsettled = drive(reserved_only, 3000, lambda r: r.randint(300, 1500), lambda r, x: x)
    assert end < 0.6 * end_unsettled, (end, end_unsettled)


def test_a_scaled_window_prorates_the_limits():
    w = Window(Limits(rpm=600, window_s=6.0))
    times, _, _ = drive(w, 1000, lambda r: 1, lambda r, x: 1)
    assert most_in_any_window(times, [1] * 1000, 6.0) <= 60 * 10
    assert most_in_any_window(times, [1] * 1000, 1.0) <= 100


def test_an_attempt_larger_than_the_short_window_still_goes_out_alone():
    w = Window(Limits(tpm=600))  # 100 tokens per 10 s
    assert w.wait_for(5000, 0.0) == 0.0  # an empty log takes it (it would never fit otherwise)
    w.admit(5000, 0.0)
    assert w.wait_for(1, 1.0) > 0


async def most_open(limiters: list, limits: Limits, n: int) -> int:
    """The most attempts open at once when ``n`` calls, spread over ``limiters``, hold a slot 5 ms each."""
    open_now, most = 0, 0

    async def call(lim):
        nonlocal open_now, most
        lease = await lim.acquire("m", limits, 0)
        open_now += 1
        most = max(most, open_now)
        await asyncio.sleep(0.005)
        open_now -= 1
        await lim.release(lease, 1, None)

    await asyncio.gather(*[call(limiters[i % len(limiters)]) for i in range(n)])
    return most


async def test_max_in_flight_caps_open_attempts():
    assert await most_open([RateLimiter()], Limits(max_in_flight=4), 40) == 4


async def test_a_429_pauses_the_model_for_everyone():
    lim = RateLimiter()
    limits = Limits(rpm=6000)
    lease = await lim.acquire("m", limits, 0)
    await lim.release(lease, None, 0.4)  # Retry-After: 0.4 s
    t0 = asyncio.get_running_loop().time()
    await lim.acquire("m", limits, 0)
    assert asyncio.get_running_loop().time() - t0 >= 0.35
    assert lim.snapshot()["m"]["pauses"] == 1


async def test_a_dead_owner_gives_its_slots_back():
    lim = RateLimiter()
    limits = Limits(max_in_flight=2)
    await lim.acquire("m", limits, 0, owner="w1")
    await lim.acquire("m", limits, 0, owner="w1")
    third = asyncio.ensure_future(lim.acquire("m", limits, 0, owner="w2"))
    await asyncio.sleep(0.05)
    assert not third.done()
    assert await lim.release_owner("w1") == 2
    lease = await asyncio.wait_for(third, 1.0)
    assert isinstance(lease, Lease) and lim.snapshot()["m"]["open"] == 1


async def test_workers_share_one_limiter_over_the_socket():
    lim = RateLimiter()
    d = tempfile.mkdtemp(prefix="lim-")
    server = LimiterServer(lim, str(Path(d) / "s.sock"))
    await server.start()
    a, b = SocketLimiter(server.path), SocketLimiter(server.path)
    limits = Limits(max_in_flight=3)
    assert await most_open([a, b], limits, 40) == 3
    # a worker that holds slots and goes away: the others get them back
    held = [await a.acquire("m", limits, 0) for _ in range(3)]
    assert len(held) == 3 and lim.snapshot()["m"]["open"] == 3
    await a.close()
    await asyncio.sleep(0.1)
    assert lim.snapshot()["m"]["open"] == 0
    await asyncio.wait_for(b.acquire("m", limits, 0), 1.0)
    await b.close()
    await server.close()
