"""What a run spent vs what it counts (``run_spend``, ``call_usage``, the re-price sums): a
response-cache hit is counted (its recorded cost is what the call is worth) but never spent, and a
superseded call is spent but no longer counted. Every expectation below is worked by hand from
the rows."""

from __future__ import annotations

import pytest

# run r: three counted calls (one a cache hit, one an error) and three superseded ones (one a cache hit);
# run q: one call, a cache hit, nothing superseded; run p: superseded calls only; run n: one call without usage
CALL = dict(run_id="r", purpose="design", design="a", model="m", simulated=False, cost_source="yaml")
CALLS = [
    CALL | dict(call_id="c1", prompt_tokens=100, completion_tokens=50, cached_tokens=10, cache_write_tokens=4,
                reasoning_tokens=7, cost_usd=0.30, latency_s=1.0, cache_hit=False, attempts=1, status="ok"),
    CALL | dict(call_id="c2", prompt_tokens=40, completion_tokens=10, cached_tokens=20, cache_write_tokens=0,
                reasoning_tokens=2, cost_usd=0.20, latency_s=3.0, cache_hit=True, attempts=1, status="ok"),
    CALL | dict(call_id="c3", prompt_tokens=5, completion_tokens=0, cached_tokens=0, cache_write_tokens=1,
                reasoning_tokens=0, cost_usd=0.05, latency_s=5.0, cache_hit=False, attempts=3, error="boom",
                status="error"),
    CALL | dict(call_id="q1", run_id="q", prompt_tokens=9, completion_tokens=1, cost_usd=1.0, cache_hit=True,
                attempts=1, status="ok"),
    CALL | dict(call_id="n1", run_id="n", cost_usd=0.0, cache_hit=False, attempts=1, status="usage_missing"),
]
SUPERSEDED = [
    CALL | dict(call_id="s1", prompt_tokens=20, completion_tokens=5, cost_usd=0.10, cache_hit=False),
    CALL | dict(call_id="s2", prompt_tokens=8, completion_tokens=2, cost_usd=0.07, cache_hit=True),
    CALL | dict(call_id="s3", prompt_tokens=3, completion_tokens=0, cost_usd=0.02, cache_hit=False),
    CALL | dict(call_id="p1", run_id="p", prompt_tokens=6, completion_tokens=1, cost_usd=0.5, cache_hit=False),
]


@pytest.fixture
def con(view_db):
    c = view_db.make("run_spend", "call_usage")
    view_db.insert(c, "calls", *CALLS)
    view_db.insert(c, "calls_superseded", *SUPERSEDED)
    return c


def test_run_spend_counts_cache_hits_but_never_spends_them(con, view_db) -> None:
    got = {r["run_id"]: r for r in view_db.rows(con, "SELECT * FROM run_spend")}
    r = got["r"]
    assert (r["counted_calls"], r["superseded_calls"], r["spent_calls"]) == (3, 3, 6)
    assert r["counted_usd"] == pytest.approx(0.30 + 0.20 + 0.05)  # c1 c2 c3, the hit counted at its worth
    assert r["spent_usd"] == pytest.approx(0.30 + 0.05 + 0.10 + 0.02)  # not c2, not s2: cache hits cost nothing
    assert r["superseded_usd"] == pytest.approx(0.10 + 0.02)  # s1 + s3 (s2 is a hit)
    assert r["counted_tokens"] == 150 + 50 + 5  # c1 + c2 + c3
    assert r["spent_tokens"] == 205 + 25 + 10 + 3  # + s1 + s2 + s3 (tokens, unlike money, are counted for hits)
    q = got["q"]  # nothing superseded, nothing spent: zeros, not NULL
    assert (q["counted_calls"], q["superseded_calls"], q["spent_calls"]) == (1, 0, 1)
    assert (q["counted_usd"], q["spent_usd"], q["superseded_usd"]) == (1.0, 0, 0)
    assert (q["counted_tokens"], q["spent_tokens"]) == (10, 10)
    p = got["p"]  # only superseded calls: nothing counted (0, not NULL), all of it spent
    assert (p["counted_calls"], p["superseded_calls"], p["counted_usd"], p["counted_tokens"]) == (0, 1, 0, 0)
    assert (p["spent_usd"], p["superseded_usd"], p["spent_tokens"]) == (0.5, 0.5, 7)
    n = got["n"]  # a call without usage: no tokens known, 0 (not NULL)
    assert (n["counted_calls"], n["counted_tokens"], n["spent_tokens"], n["spent_usd"]) == (1, 0, 0, 0)


def test_call_usage_spent_usd_leaves_out_cache_hits(con, view_db) -> None:
    r = view_db.rows(con, "SELECT * FROM call_usage WHERE run_id = 'r'")
    assert len(r) == 1
    u = r[0]
    assert (u["purpose"], u["design"], u["model"], u["calls"]) == ("design", "a", "m", 3)
    assert (u["prompt_tokens"], u["completion_tokens"]) == (145, 60)
    assert (u["cached_tokens"], u["cache_write_tokens"], u["reasoning_tokens"]) == (30, 5, 9)
    assert u["cost_usd"] == pytest.approx(0.55)
    assert u["spent_usd"] == pytest.approx(0.35)  # 0.30 + 0.05: c2 was a cache hit
    assert u["mean_latency_s"] == pytest.approx(3.0)  # (1 + 3 + 5) / 3
    assert (u["attempts"], u["errors"], u["cache_hits"], u["simulated"]) == (5, 1, 1, False)
    assert (u["usage_missing"], u["truncated"], u["empty"], u["cost_sources"]) == (0, 0, 0, "yaml")
    q = view_db.rows(con, "SELECT spent_usd, cost_usd, cache_hits FROM call_usage WHERE run_id = 'q'")
    assert q == [{"spent_usd": 0, "cost_usd": 1.0, "cache_hits": 1}]


def test_call_usage_counts_statuses_apart(view_db) -> None:
    con = view_db.make("call_usage")
    view_db.insert(con, "calls", *[CALL | dict(call_id=f"u{i}", run_id="u", status=st, simulated=sim, cost_usd=0.0,
                                               cache_hit=False, cost_source=src)
                                   for i, (st, sim, src) in enumerate([("usage_missing", True, "unpriced"),
                                                                       ("truncated", False, "yaml"),
                                                                       ("truncated", False, "yaml")])])
    (u,) = view_db.rows(con, "SELECT * FROM call_usage")
    assert (u["usage_missing"], u["truncated"], u["empty"], u["cache_hits"], u["errors"]) == (1, 2, 0, 0, 0)
    assert u["simulated"] is True  # one simulated call makes the group simulated
    assert sorted(u["cost_sources"].split(",")) == ["unpriced", "yaml"]


def test_reprice_sums_spend_leaves_out_cache_hits(view_db) -> None:
    con = view_db.make("run_reprice", "design_reprice")
    view_db.insert(con, "calls", *CALLS[:3])
    # one table, $1/Mtok input (fresh, cached and cache-write alike) and $2/Mtok output (visible and reasoning)
    view_db.insert(con, "price_table", dict(price_table="t", model="*", input_usd_per_mtok=1.0, output_usd_per_mtok=2.0))
    (r,) = view_db.rows(con, "SELECT * FROM run_reprice")
    # the rows have no prompt_fresh / completion_visible, so fresh = prompt - cached and visible =
    # completion - reasoning; the cache-write tokens come on top (call_classes' fallback):
    # c1 = (90 + 10 + 4) * 1 + (43 + 7) * 2 = 204, c2 = (20 + 20 + 0) + (8 + 2) * 2 = 60, c3 = (5 + 0 + 1) = 6
    assert r["repriced_usd"] == pytest.approx(270e-6)
    assert r["repriced_spent_usd"] == pytest.approx(210e-6)  # without c2, the cache hit
    assert r["recorded_usd"] == pytest.approx(0.55)
    assert r["recorded_spent_usd"] == pytest.approx(0.35)
    assert (r["calls"], r["calls_not_repriced"]) == (3, 0)
    # the classes summed over c1 c2 c3: fresh 90 + 20 + 5, cached 10 + 20 + 0, write 4 + 0 + 1,
    # visible 43 + 8 + 0, reasoning 7 + 2 + 0
    classes = ("fresh_tokens", "cached_read_tokens", "cache_write_tokens", "visible_tokens", "reasoning_tokens")
    assert tuple(r[c] for c in classes) == (115, 30, 5, 51, 9)
    (d,) = view_db.rows(con, "SELECT * FROM design_reprice")
    assert (d["recorded_spent_usd"], d["repriced_spent_usd"]) == (pytest.approx(0.35), pytest.approx(210e-6))
    assert tuple(d[c] for c in classes) == (115, 30, 5, 51, 9)
