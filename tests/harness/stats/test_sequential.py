"""The betting confidence sequence and the sequential look (masbench.harness.stats.sequential).

Expected values come from a plain-Python product of bets written from the paper's formulas
(Waudby-Smith & Ramdas 2024) for tiny sequences, hand arithmetic, Holm by hand, and simulated
streams whose true mean is known in closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from masbench.harness.stats.sequential import LookInput, betting_sequence, look

SMALL_GRID = 401  # step 0.005 on the difference scale: coverage holds on any grid (intervals are widened a step)


# --- a brute-force capital process, one grid point, plain Python ------------------------------------

def brute_log_kmax(d: list[float], mu0: float, bet: str, alpha: float = 0.05, c: float = 0.5) -> float:
    """log max_t ½(K⁺_t + K⁻_t) at the mean difference mu0, bets from the running moments before each task."""
    m = (mu0 + 1) / 2
    xs = [(v + 1) / 2 for v in d]
    k_up = k_dn = 1.0
    best = 1.0
    mu_prev, s2_prev = 0.5, 0.25
    sum_x, sum_sq = 0.0, 0.0
    for i, x in enumerate(xs, start=1):
        if bet == "prpl":
            lam = math.sqrt(2 * math.log(2 / alpha) / (s2_prev * i * math.log(1 + i)))
            lu, ld = min(lam, c / m), min(lam, c / (1 - m))
        else:
            raw = (mu_prev - m) / (s2_prev + (mu_prev - m) ** 2)
            lu, ld = min(max(raw, 0.0), c / m), min(max(-raw, 0.0), c / (1 - m))
        k_up *= 1 + lu * (x - m)
        k_dn *= 1 - ld * (x - m)
        best = max(best, (k_up + k_dn) / 2)
        sum_x += x
        mu_i = (0.5 + sum_x) / (i + 1)
        sum_sq += (x - mu_i) ** 2
        mu_prev, s2_prev = mu_i, (0.25 + sum_sq) / (i + 1)
    return math.log(best)


def test_two_wins_by_hand():
    """d = [1, 1], agrapa at 0: task 1 bets 0 (μ̂₀ = ½); μ̂₁ = ¾, σ̂²₁ = (¼ + ¼²)/2 = 0.15625, so
    λ⁺₂ = ¼/(0.15625 + 1/16) = 1.143 → truncated at c/m = 1; K⁺ = 1.5, K⁻ = 1, K = 1.25, p = 0.8.
    prpl: task 1 bets c/m = 1 both ways: K⁺ = 1.5, K⁻ = 0.5 → K₁ = 1; task 2 bets λ₂ = 1 again
    (√(2 log 40 / (σ̂²₁ · 2 · log 3)) > 1): K⁺ = 2.25, K⁻ = 0.25, K₂ = 1.25."""
    s, _ = betting_sequence(np.array([1.0, 1.0]), bet="agrapa")
    assert s.p_value() == pytest.approx(0.8, abs=1e-12)
    s, _ = betting_sequence(np.array([1.0, 1.0]), bet="prpl")
    assert s.p_value() == pytest.approx(0.8, abs=1e-12)
    s, _ = betting_sequence(np.array([1.0]), bet="prpl")
    assert s.p_value() == pytest.approx(1.0, abs=1e-12) and s.n == 1 and s.mean == 1.0


@pytest.mark.parametrize("bet", ["agrapa", "prpl"])
def test_capital_equals_the_brute_force_product(bet):
    rng = np.random.default_rng(5)
    d = rng.choice([-1.0, -0.5, 0.0, 0.0, 0.25, 1.0], size=37)
    s, _ = betting_sequence(d, bet=bet, chunk=8)  # several chunks: the carry-over between them is exercised
    for mu0 in (-0.4, -0.1, 0.0, 0.12, 0.5):
        i = int(np.argmin(np.abs(s.mu - mu0)))
        assert s.log_kmax[i] == pytest.approx(brute_log_kmax(list(d), float(s.mu[i]), bet), abs=1e-9)
    assert s.p_value() == pytest.approx(min(1.0, math.exp(-brute_log_kmax(list(d), 0.0, bet))), rel=1e-9)


def test_bets_are_predictable():
    """Changing the last difference leaves every earlier prefix's interval and p-value unchanged."""
    rng = np.random.default_rng(2)
    d = rng.choice([-1.0, 0.0, 1.0], size=60)
    e = d.copy()
    e[-1] = -d[-1] if d[-1] else 1.0
    _, pd_ = betting_sequence(d, paths=True, grid=SMALL_GRID)
    _, pe = betting_sequence(e, paths=True, grid=SMALL_GRID)
    assert pd_ is not None and pe is not None
    np.testing.assert_array_equal(pd_[:-1], pe[:-1])


def test_chunking_does_not_change_the_answer():
    rng = np.random.default_rng(9)
    d = np.clip(rng.normal(0.08, 0.5, 3000), -1, 1)
    a, pa = betting_sequence(d, chunk=7, paths=True)
    b, pb = betting_sequence(d, chunk=1000, paths=True)
    assert pa is not None and pb is not None
    np.testing.assert_allclose(pa, pb, atol=1e-12)
    for level in (0.9, 0.95, 0.999):
        assert a.interval(level) == pytest.approx(b.interval(level), abs=1e-12)


@pytest.mark.slow
def test_p_value_and_interval_agree_up_to_the_grid():
    """At level 1 − a: an interval excluding 0 means p ≤ a; p ≤ a means 0 is at most on the edge."""
    rng = np.random.default_rng(11)
    seen_reject = seen_keep = 0
    for r in range(60):
        d = np.clip(rng.normal(rng.uniform(-0.3, 0.3), 0.45, int(rng.integers(5, 300))), -1, 1)
        s, _ = betting_sequence(d, bet="agrapa" if r % 2 else "prpl")
        for a in (0.05, 0.05 / 3, 0.01):
            lo, hi = s.interval(1 - a)
            p = s.p_value()
            if lo > 0 or hi < 0:
                assert p <= a
            if p <= a:
                seen_reject += 1
                assert lo >= 0 or hi <= 0
            else:
                seen_keep += 1
                assert lo < 0 < hi
    assert seen_reject > 20 and seen_keep > 20  # both branches exercised


def test_a_long_sequence_is_stable():
    rng = np.random.default_rng(1)
    d = rng.choice([-1.0, 0.0, 1.0], size=100_000, p=[0.24, 0.5, 0.26])  # true mean 0.02
    s, _ = betting_sequence(d)
    lo, hi = s.interval(0.95)
    assert np.isfinite(s.log_kmax).all() and lo < 0.02 < hi and hi - lo < 0.03
    assert s.p_value() < 0.05  # 0.02 over an SD of 0.7: z ≈ 9 at n = 100k
    assert s.p_value(0.02) > 0.05


# --- coverage on simulated streams with a known mean -------------------------------------------------

def _sparse(rng, n, t):  # many exact zeros: P(0) = .6, P(+1) = .25, P(−1) = .15 → mean 0.10
    return rng.choice([0.0, 1.0, -1.0], size=(n, t), p=[0.6, 0.25, 0.15]), 0.10


def _curve_minus_outcome(rng, n, t):
    """A 0/1 design outcome against a continuous curve value c ~ U(0, 1), P(correct) = min(1, c + 0.2):
    E = ∫₀^0.8 (c + 0.2) dc + 0.2 − ½ = 0.48 + 0.2 − 0.5 = 0.18."""
    c = rng.random((n, t))
    return (rng.random((n, t)) < np.minimum(1.0, c + 0.2)).astype(float) - c, 0.18


def _skewed(rng, n, t):  # 2·Beta(½, 4) − 1: mean 2·(½/4.5) − 1 = −7/9
    return 2 * rng.beta(0.5, 4.0, size=(n, t)) - 1, -7 / 9


@pytest.mark.slow
@pytest.mark.parametrize("shape", [_sparse, _curve_minus_outcome, _skewed])
def test_coverage_at_every_look_and_at_data_dependent_stops(shape):
    """1,000 streams × 150 tasks: the 95% sequence covers the true mean at every t ≤ 150
    simultaneously in ≥ 95% of streams, and at two data-dependent stopping times: the first t its
    width falls below 0.35, and the first t a naive t-interval misses the true mean (adversarial).
    The naive t-interval, peeked at every t, misses in far more than 5% of streams."""
    rng = np.random.default_rng(2024)
    streams, mu = shape(rng, 1000, 150)
    miss_any = miss_width_stop = miss_t_stop = naive_miss = 0
    t = np.arange(1, 151)
    for d in streams:
        _, path = betting_sequence(d, paths=True, grid=SMALL_GRID)
        assert path is not None
        lo, hi = path[:, 0], path[:, 1]
        miss_any += bool(((lo > mu) | (hi < mu)).any())
        width_stop = int(np.argmax(np.append(hi - lo < 0.35, True)))
        width_stop = min(width_stop, 149)
        miss_width_stop += not lo[width_stop] <= mu <= hi[width_stop]
        mean = np.cumsum(d) / t
        sd = np.sqrt(np.maximum(np.cumsum(d * d) / t - mean ** 2, 0) * t / np.maximum(t - 1, 1))
        naive_out = np.abs(mean - mu) > 1.96 * sd / np.sqrt(t)
        naive_out[:2] = False
        naive_miss += bool(naive_out.any())
        t_stop = int(np.argmax(naive_out)) if naive_out.any() else 149
        miss_t_stop += not lo[t_stop] <= mu <= hi[t_stop]
    assert miss_any <= 50 and miss_width_stop <= 50 and miss_t_stop <= 50
    assert miss_t_stop <= miss_any  # a miss at a stopping time is a miss at some t
    assert naive_miss > 150  # peeking at a fixed-n interval: the optional-stopping error


@pytest.mark.slow
@pytest.mark.parametrize("bet", ["agrapa", "prpl"])
def test_anytime_p_value_is_valid_under_the_null(bet):
    """Mean-zero streams (sparse symmetric, and a 0/1 outcome against its own continuous
    probability): the rate of ever p ≤ 0.05 over 300 tasks stays within the binomial tolerance."""
    rng = np.random.default_rng(7)
    n = 600
    sparse = rng.choice([0.0, 1.0, -1.0], size=(n // 2, 300), p=[0.6, 0.2, 0.2])
    c = rng.random((n // 2, 300))
    curve = (rng.random(c.shape) < c).astype(float) - c
    ever = 0
    for d in np.vstack([sparse, curve]):
        _, path = betting_sequence(d, paths=True, grid=SMALL_GRID, bet=bet)
        assert path is not None
        ever += bool((path[:, 2] <= 0.05).any())
    assert ever / n <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / n)


# --- look(): Holm across designs, frozen designs, verdict words -------------------------------------

def _holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adj, run = [0.0] * m, 0.0
    for r, i in enumerate(order):
        run = max(run, min(1.0, (m - r) * p[i]))
        adj[i] = run
    return adj


def test_look_holm_by_hand_and_frozen_numbers_stay():
    rng = np.random.default_rng(3)
    diffs = {"up": np.clip(rng.normal(0.35, 0.4, 200), -1, 1), "flat": rng.choice([-1.0, 0.0, 1.0], 200),
             "down": np.clip(rng.normal(-0.35, 0.4, 200), -1, 1)}
    frozen: dict = {}
    history: list[dict] = []
    out: dict = {}
    for n in range(20, 201, 20):
        ins = [LookInput(d, diffs[d][:n], "within", 8, frozen.get(d)) for d in diffs]
        out = {r.design: r for r in look(ins, 0.05, grid=SMALL_GRID)}
        # Holm by hand over the anytime p-values (a frozen design keeps its own)
        p = [frozen[d].p_anytime if d in frozen else betting_sequence(diffs[d][:n], grid=SMALL_GRID)[0].p_value()
             for d in diffs]
        for d, pa in zip(diffs, _holm(p)):
            assert out[d].p_holm == pytest.approx(pa, abs=1e-12)
            assert out[d].family_size == 3
        for d, r in out.items():
            if d in frozen:  # a decided design received no tasks: its numbers are those of its decision
                f = frozen[d]
                assert (r.n, r.mean, r.cs_lo, r.cs_hi, r.p_anytime, r.verdict) == (f.n, f.mean, f.cs_lo, f.cs_hi,
                                                                                      f.p_anytime, f.verdict)
            elif r.decided:
                frozen[d] = r
            else:
                assert r.verdict == "inconclusive" and r.reason == f"undecided after {n} tasks"
        history.append({d: r.decided for d, r in out.items()})
    for prev, cur in zip(history, history[1:]):
        assert all(cur[d] for d in prev if prev[d])  # decisions only accrue
    assert out["up"].verdict == "worth it" and out["down"].verdict == "not worth it"
    assert out["up"].n < 200 and out["down"].n < 200 and not out["flat"].decided


@pytest.mark.parametrize("position,sign,word", [
    ("within", 1, "worth it"), ("within", -1, "not worth it"),
    ("below", 1, "worth it"), ("below", -1, "inconclusive"),
    ("beyond", 1, "inconclusive"), ("beyond", -1, "not worth it"),
])
def test_verdict_words_are_the_fixed_n_words(position, sign, word):
    d = np.full(80, 0.6 * sign)
    (r,) = look([LookInput("x", d, position, 8)], 0.05, grid=SMALL_GRID)
    assert r.decided and r.verdict == word
    assert (r.cs_lo > 0) if sign > 0 else (r.cs_hi < 0)


@pytest.mark.slow
def test_family_wise_error_over_looks_under_the_null():
    """200 suites of 3 null designs (means exactly 0, different shapes), a look every 50 tasks up to
    200, decided designs frozen: some false decision in ≤ 5% of suites (binomial tolerance)."""
    rng = np.random.default_rng(99)
    suites, bad = 200, 0
    for _ in range(suites):
        c = rng.random(200)
        diffs = {"sparse": rng.choice([0.0, 1.0, -1.0], 200, p=[0.5, 0.25, 0.25]),
                 "curve": (rng.random(200) < c).astype(float) - c,
                 "cont": np.clip(rng.normal(0, 0.3, 200), -1, 1)}
        frozen: dict = {}
        for n in range(50, 201, 50):
            ins = [LookInput(d, v[:n], "within", 8, frozen.get(d)) for d, v in diffs.items()]
            for r in look(ins, 0.05, grid=SMALL_GRID):
                if r.decided:
                    frozen.setdefault(r.design, r)
            if len(frozen) == 3:
                break
        bad += bool(frozen)
    assert bad / suites <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / suites)
