"""The sign-flip test against brute force: every sign pattern enumerated by hand, exact McNemar,
the lattice convolution, the inverted interval, chunking."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from masbench.harness.stats.paired import mcnemar_exact
from masbench.harness.stats.tests import get_test
from masbench.harness.stats.tests.base import lattice_of
from masbench.harness.stats.tests.sign_flip import SignFlip, flip_sums, lattice_p


def brute_p(d: np.ndarray, mu: float = 0.0) -> float:
    """Two-sided randomization p of H0: E[d] = μ over all 2^n sign vectors (by hand)."""
    x = d - mu
    s = x.sum()
    sums = [float(np.dot(e, x)) for e in itertools.product([1, -1], repeat=len(x))]
    ge = sum(v >= s - 1e-12 for v in sums) / len(sums)
    le = sum(v <= s + 1e-12 for v in sums) / len(sums)
    return min(1.0, 2 * min(ge, le))


@pytest.mark.parametrize("seed", range(4))
def test_enumerated_p_and_the_monte_carlo_p_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 8 + seed  # 8..11 tasks
    d = np.round(rng.normal(0.15, 0.4, n), 3)
    want = brute_p(d)
    exact = SignFlip().run(d, resamples=1 << n)  # 2^n ≤ B: every vector enumerated
    assert exact.enumerated and exact.p_value == pytest.approx(want, abs=1e-12)
    mc = SignFlip().run(d, resamples=40_000, seed=seed)  # B < 2^n... not for n ≤ 15; force MC below
    assert mc.enumerated  # 40000 ≥ 2^11: still enumerated
    mcs = SignFlip().run(np.concatenate([d, np.zeros(8)]), resamples=40_000, seed=seed)  # zeros don't move S
    assert not mcs.enumerated
    assert mcs.p_value == pytest.approx(want, abs=4 * math.sqrt(want * (1 - want) / 40_000) + 1e-4)


def test_the_interval_is_the_set_of_mu_the_test_keeps():
    rng = np.random.default_rng(7)
    d = np.round(rng.normal(0.1, 0.5, 9), 2)
    res = SignFlip().run(d, resamples=1 << 9)
    lo, hi = res.ci(0.9)
    # by hand: the brute-force p at points just inside / outside each end
    eps = 1e-6
    assert brute_p(d, lo + eps) >= 0.1 and brute_p(d, hi - eps) >= 0.1
    assert brute_p(d, lo - eps) < 0.1 and brute_p(d, hi + eps) < 0.1
    assert lo < d.mean() < hi


def test_p_below_a_exactly_when_the_interval_excludes_zero():
    rng = np.random.default_rng(3)
    for i in range(60):
        d = rng.normal(rng.choice([0.0, 0.08, 0.2]), 0.45, 40)
        res = SignFlip().run(d, resamples=3000, seed=i)
        for a in (0.05, 0.0167, 0.01, res.p_value, res.p_value * 1.0001):
            lo, hi = res.ci(1 - a)
            assert (res.p_value < a) == (lo > 0 or hi < 0), (i, a, res.p_value, lo, hi)


def test_one_seed_zero_one_pairs_are_exact_mcnemar():
    for b, c, ties in ((4, 15, 20), (0, 5, 3), (7, 7, 10), (2, 7, 0), (30, 12, 100)):
        d = np.array([1.0] * b + [-1.0] * c + [0.0] * ties)
        assert lattice_of(d, np.ones(len(d), int)) == 1
        assert lattice_p(np.rint(d)) == pytest.approx(mcnemar_exact(b, c), rel=1e-10)
        res = SignFlip().run(d, resamples=2000, lattice=1)
        assert res.p_value == pytest.approx(mcnemar_exact(b, c), rel=1e-10)


def test_several_seeds_the_lattice_distribution_is_exact():
    # 2 seeds: per-task means in {-1, -1/2, 0, 1/2, 1}; z = 2d. Brute force over all sign vectors.
    d = np.array([0.5, 0.5, 1.0, -0.5, 0.0, 1.0, 0.5, -1.0, 0.5, 0.5, 1.0])
    assert lattice_of(d, np.full(len(d), 2)) == 2
    assert lattice_p(np.rint(2 * d)) == pytest.approx(brute_p(d), abs=1e-12)
    # three seeds, one task's mean 1/3: lattice 1/3; a non-lattice value: None
    assert lattice_of(np.array([1 / 3, -2 / 3, 1.0]), np.full(3, 3)) == 3
    assert lattice_of(np.array([0.25, 0.5]), np.full(2, 2)) is None
    assert lattice_of(np.array([0.5, 1 / 3]), np.array([2, 3])) == 6  # lcm of the seed counts


def test_chunked_signs_equal_unchunked():
    rng = np.random.default_rng(1)
    d = rng.normal(0, 0.4, 1003)
    a1, e1 = flip_sums(d, 500, seed=9, chunk=len(d))
    a2, e2 = flip_sums(d, 500, seed=9, chunk=7)
    np.testing.assert_allclose(a1, a2, rtol=0, atol=1e-12)
    assert np.array_equal(e1, e2)
    r1 = SignFlip().run(d, resamples=500, seed=9, chunk=len(d))
    r2 = SignFlip().run(d, resamples=500, seed=9, chunk=13)
    assert r1.p_value == r2.p_value and r1.ci(0.95) == pytest.approx(r2.ci(0.95), abs=1e-12)
    # and A_b, E_b are what they say: Σ ε d and Σ ε for the same signs
    rng2 = np.random.default_rng(9)
    eps = rng2.integers(0, 2, size=(len(d), 500), dtype=np.int8) * 2 - 1
    np.testing.assert_allclose(a1, d @ eps, atol=1e-9)
    assert np.array_equal(e1, eps.sum(axis=0))


def test_degenerate_samples():
    z = SignFlip().run(np.zeros(12), resamples=2000)
    assert z.p_value == 1.0 and z.ci() == pytest.approx((0.0, 0.0), abs=1e-9)
    lost = SignFlip().run(-np.ones(20), resamples=2000, seed=1)  # every task lost outright
    assert lost.p_value == pytest.approx(2 / 2001) and lost.ci()[1] < 0
    one = SignFlip().run(np.array([0.4]), resamples=100)
    assert one.p_value == 1.0  # two patterns, ±0.4: p = 2 · ½
    empty = SignFlip().run(np.array([]), resamples=100)
    assert empty.p_value == 1.0 and empty.ci() == (-1.0, 1.0) and empty.n == 0


def test_the_registry_and_the_student_t():
    from masbench.harness.stats.tests.student_t import t_quantile, t_two_sided

    assert get_test("sign-flip").name == "sign-flip"
    with pytest.raises(KeyError, match="unknown paired test .nope.*sign-flip"):
        get_test("nope")
    # textbook t quantiles (two-sided 5%): df 1 → 12.706, df 10 → 2.228, df 39 → 2.0227
    assert t_quantile(0.05, 1) == pytest.approx(12.7062047, rel=1e-6)
    assert t_quantile(0.05, 10) == pytest.approx(2.2281389, rel=1e-6)
    assert t_quantile(0.05, 39) == pytest.approx(2.0226909, rel=1e-6)
    assert t_two_sided(0.0, 5) == pytest.approx(1.0)
    # df = 1 is Cauchy: P(|T| ≥ t) = 1 − (2/π) atan t
    assert t_two_sided(3.0, 1) == pytest.approx(1 - 2 / math.pi * math.atan(3.0), rel=1e-9)
    d = np.array([0.1, 0.3, -0.2, 0.4, 0.0, 0.25])
    r = get_test("student-t").run(d)
    se = d.std(ddof=1) / math.sqrt(6)
    lo, hi = r.ci(0.95)
    assert (lo, hi) == pytest.approx((d.mean() - 2.5705818 * se, d.mean() + 2.5705818 * se), rel=1e-6)
    assert r.p_value == pytest.approx(t_two_sided(d.mean() / se, 5))


def test_all_sums_and_the_binomial_by_hand():
    from masbench.harness.stats.tests.sign_flip import _binom_pmf, all_sums

    # vectors in bit order: (−,−), (+,−), (−,+), (+,+) of d = (1, 2)
    a, e = all_sums(np.array([1.0, 2.0]))
    assert a.tolist() == [-3.0, -1.0, 1.0, 3.0] and e.tolist() == [-2, 0, 0, 2]
    assert _binom_pmf(1) == pytest.approx([0.5, 0.5], rel=1e-12)
    assert _binom_pmf(4) == pytest.approx(np.array([1, 4, 6, 4, 1]) / 16, rel=1e-12)


def test_the_fft_convolution_of_long_lattice_pmfs_equals_the_direct_one():
    from masbench.harness.stats.tests.sign_flip import _convolve

    # 2001 · 2001 > 4M: the FFT branch. Odd positions hold 0 (a lattice step of 2), where the FFT's
    # rounding must not leave negative probabilities.
    rng = np.random.default_rng(5)
    x, y = rng.random(2001), rng.random(2001)
    x[1::2] = 0.0
    y[1::2] = 0.0
    got = _convolve(x, y)
    want = np.convolve(x, y)  # direct sum of products
    assert len(got) == 4001 and got == pytest.approx(want, abs=1e-9)
    assert (got >= 0).all() and (got[1::2] <= 1e-9).all()


def test_the_lattice_p_through_run_with_two_seeds():
    d = np.array([0.5, 0.5, 1.0, -0.5, 0.0, 1.0, 0.5, -1.0, 0.5, 0.5, 1.0])  # per-task means of 2 seeds
    res = SignFlip().run(d, resamples=500, seed=3, lattice=2)
    assert res.exact_p is not None and res.p_value == pytest.approx(brute_p(d), abs=1e-12)


def test_one_task_is_one_task():
    # one task: its two sign patterns ±0.4 are equally likely, so p = 1 and no interval narrower than
    # the bounds, at any B (drawn at B = 1, enumerated from B = 2)
    for b in (1, 2, 50):
        res = SignFlip().run(np.array([0.4]), resamples=b, seed=4)
        assert (res.n, res.p_value, res.ci(0.5)) == (1, 1.0, (-1.0, 1.0)) and res.mean == pytest.approx(0.4)


def test_the_result_carries_mean_sd_n_and_resamples():
    d = np.array([0.25, -0.5, 1.0, 0.0, 0.5, 0.75, -0.25, 0.5, 0.0, 1.0, 0.25, -1.0])
    res = SignFlip().run(d, resamples=1000, seed=2)  # 2^12 > 1000: Monte Carlo
    mean = sum(d) / 12
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 11)
    assert (res.mean, res.n, res.resamples, res.enumerated) == (pytest.approx(mean), 12, 1000, False)
    assert res.sd == pytest.approx(sd)
    small = SignFlip().run(d[:3], resamples=1000)
    assert small.enumerated and small.resamples == 8 and small.mean == pytest.approx(0.25)
    empty = SignFlip().run(np.array([]), resamples=10)
    assert math.isnan(empty.mean) and math.isnan(empty.sd)


def test_the_defaults_are_2000_resamples_at_seed_0():
    d = np.array([0.25, -0.5, 1.0, 0.0, 0.5, 0.75, -0.25, 0.5, 0.0, 1.0, 0.25, -1.0, 0.5])
    default, explicit = SignFlip().run(d), SignFlip().run(d, resamples=2000, seed=0)
    assert default.resamples == 2000
    np.testing.assert_array_equal(default.tau, explicit.tau)


def test_seventeen_tasks_are_still_enumerated():
    # 2^17 vectors at B = 2^17: enumerated, so the p is exact: it equals the lattice's exact p
    d = np.array([1.0, -1.0, 1.0, 1.0, 0.0, 1.0, -1.0, 1.0, 1.0, 1.0, 0.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0])
    res = SignFlip().run(d, resamples=1 << 17)
    assert res.enumerated and res.total == 1 << 17
    assert res.p_value == pytest.approx(lattice_p(np.rint(d)), rel=1e-9)


def test_the_tie_tolerance_is_1e_9_times_one_plus_the_absolute_sum():
    # d = (9, y), enumerated: S = 9 + y; the vector (+, −) has S* = 9 − y, so S* ≥ S − tol iff 2y ≤ tol,
    # tol = 1e-9·(1 + 9 + y) ≈ 1.0e-8. (+,+) always counts; (−,±) never. p = 2·(1 + [tie])/4.
    assert SignFlip().run(np.array([9.0, 2e-9]), resamples=4).p_value == 1.0  # 2y = 4e-9 ≤ tol: a tie
    assert SignFlip().run(np.array([9.0, 5.25e-9]), resamples=4).p_value == 0.5  # 2y = 1.05e-8 > tol


def test_p_of_mu_counts_a_threshold_it_stands_on():
    # S*_b(μ) ≥ S(μ) is inclusive: p_≥ steps up AT τ_b, so p(τ_b) is the value just above τ_b
    d = np.array([0.1, 0.3, -0.2, 0.45, 0.05])
    res = SignFlip().run(d, resamples=32)
    assert res.enumerated
    for tau in res.tau:
        assert res.p_at(float(tau)) == res.p_at(float(tau) + 1e-12), tau


def test_no_division_by_zero_for_the_all_plus_vector():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the all-+ vector (E_b = n) is counted, never divided by n − E_b = 0
        res = SignFlip().run(np.array([0.2, 0.5, -0.1]), resamples=8)
        assert res.enumerated and res.always == 1


def test_a_level_whose_alpha_lands_exactly_on_an_attainable_p_keeps_that_p():
    # level 0.74999999999975: a = 1 − level with a·(1 − 1e-12) == 0.25 to the last bit. Enumerated
    # n = 4: p(μ) takes the values k/8, and the interval {μ : p(μ) ≥ a, forgiving the rounding of 1 − level}
    # keeps every μ whose brute-force p is 0.25.
    level = 0.74999999999975
    assert (1 - level) * (1 - 1e-12) == 0.25
    d = np.array([0.1, 0.35, -0.2, 0.6])
    lo, hi = SignFlip().run(d, resamples=16).ci(level)
    eps = 1e-7
    assert brute_p(d, lo + eps) >= 0.25 and brute_p(d, hi - eps) >= 0.25
    assert brute_p(d, lo - eps) < 0.25 and brute_p(d, hi + eps) < 0.25
