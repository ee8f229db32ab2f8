"""Paired statistics: bootstrap CI and p-value, exact McNemar, Holm, power, variance components."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from masbench.harness.stats.paired import Boot, holm, holm_tiebreak, mcnemar_exact, paired_bootstrap
from masbench.harness.stats.power import cell_sd, components, n_needed, power_at


def test_mcnemar_exact_matches_the_binomial_tail():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(3, 3) == 1.0
    b, c = 4, 15
    tail = sum(math.comb(19, i) for i in range(5)) / 2 ** 19
    assert mcnemar_exact(b, c) == pytest.approx(2 * tail) == pytest.approx(mcnemar_exact(c, b))


def test_holm_step_down():
    adj, levels = holm([0.01, 0.04, 0.03], alpha=0.05)
    assert adj == pytest.approx([0.03, 0.06, 0.06])
    assert levels == pytest.approx([0.05 / 3, 0.05 / 1, 0.05 / 2])
    assert holm([0.2], 0.05) == ([0.2], [0.05])


def test_bootstrap_ci_covers_and_p_agrees_with_the_ci():
    rng = np.random.default_rng(1)
    cover, agree, total = 0, 0, 200
    for i in range(total):
        true = rng.choice([0.0, 0.05, 0.15])
        d = rng.normal(true, 0.4, 150)
        b = paired_bootstrap(d, 1000, seed=i)
        lo, hi = b.ci(0.95)
        cover += lo <= true <= hi
        agree += (b.p_value < 0.05) == (lo > 0 or hi < 0)
    assert 0.90 <= cover / total <= 0.99
    assert agree / total >= 0.97  # they differ only within one resample of the boundary


def test_bootstrap_degenerate_inputs():
    b = paired_bootstrap(np.zeros(10), 500, pseudo=False)
    assert b.ci() == (0.0, 0.0) and b.p_value == 1.0
    b = paired_bootstrap(np.ones(10), 500, pseudo=False)
    assert b.ci() == (1.0, 1.0) and b.p_value < 0.01
    one = paired_bootstrap(np.array([0.5]), 500)
    assert one.p_value == 1.0


def test_pseudo_tasks_keep_tiny_degenerate_samples_inconclusive():
    # a design wrong on all 6 tasks where the curve scores ~0.24 per task: under the null (its true
    # accuracy is 0.24) six misses have probability 0.76^6 ≈ 0.19, so this is no evidence
    d = -np.array([0.2, 0.25, 0.3, 0.15, 0.28, 0.24])
    assert paired_bootstrap(d, 2000, pseudo=False).p_value < 0.01  # the plain bootstrap is fooled
    adj = paired_bootstrap(d, 2000)
    assert adj.p_value > 0.05 and adj.ci()[0] < 0 < adj.ci()[1]
    assert adj.mean == pytest.approx(d.mean())  # the reported mean is the observed one
    # resamples of identical values (se* = 0) give a bounded interval, not ±∞ or NaN
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = paired_bootstrap(np.array([0.0, -1.0, 0.0, 0.0, 0.0, 0.0]), 2000).ci(0.975)
    assert -1.0 <= lo < 0 < hi <= 1.0
    # at n = 300 the adjustment barely matters
    rng = np.random.default_rng(0)
    big = rng.normal(0.05, 0.4, 300)
    w0 = np.subtract(*paired_bootstrap(big, 4000, seed=1, pseudo=False).ci()[::-1])
    w1 = np.subtract(*paired_bootstrap(big, 4000, seed=1).ci()[::-1])
    assert 1.0 <= w1 / w0 < 1.06


def test_n_needed_is_the_normal_formula_and_reaches_the_power():
    zs = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    assert n_needed(0.1, 0.5) == math.ceil((zs * 0.5 / 0.1) ** 2)
    n = n_needed(0.07, 0.3, alpha=0.01, power=0.9)
    assert power_at(n, 0.07, 0.3, 0.01) >= 0.9 > power_at(n - 3, 0.07, 0.3, 0.01)
    assert n_needed(0.0, 0.3) is None
    # unpaired worst case: independent binary outcomes
    assert cell_sd(0.6, 0.1) == pytest.approx(math.sqrt(0.7 * 0.3 + 0.6 * 0.4))
    assert cell_sd(0.6, 0.0, rho=1.0) == pytest.approx(0.0, abs=1e-12)


def test_power_formula_matches_simulated_power():
    rng = np.random.default_rng(5)
    delta, sd = 0.1, 0.45
    n = n_needed(delta, sd)
    hits = sum(paired_bootstrap(rng.normal(delta, sd, n), 400, seed=i).p_value < 0.05 for i in range(150))
    assert 0.68 <= hits / 150 <= 0.92  # 80% ± sampling error of 150 trials


def test_variance_components_recover_between_and_within():
    rng = np.random.default_rng(2)
    tasks, seeds = 400, 3
    mu = rng.normal(0, 0.3, tasks)
    d = mu[:, None] + rng.normal(0, 0.5, (tasks, seeds))
    c = components(np.repeat(np.arange(tasks), seeds), d.ravel())
    assert c.between == pytest.approx(0.09, abs=0.03) and c.within == pytest.approx(0.25, abs=0.03)
    assert c.seeds == 3 and c.n_tasks == tasks
    assert c.sd(1) > c.sd(4) > math.sqrt(c.between)


@pytest.mark.parametrize("noise", [0.0, 1e-16])
def test_a_design_that_loses_every_task_is_significantly_worse(noise: float) -> None:
    """20 of 20 tasks lost outright (the curve right on each, up to float noise from its
    interpolation): the studentized interval must exclude 0, not blow up to [−1, +1]."""
    d = -1.0 + noise * np.arange(20)
    b = paired_bootstrap(d, bootstrap=2000, seed=1)
    lo, hi = b.ci(0.95)
    assert lo == -1.0 and -0.95 < hi < -0.5
    assert b.p_value < 0.01


def test_no_task_count_for_a_float_noise_gap() -> None:
    """A gap of 1e-17 (float noise of the curve's interpolation) is no gap: no n is claimed, and
    nothing overflows the store's BIGINT column."""
    assert n_needed(1e-17, 0.5) is None and n_needed(0.0, 0.5) is None
    assert n_needed(1e-6, 0.5) is None  # > 10^9 tasks: no realistic suite detects it
    assert n_needed(0.1, 0.5) == math.ceil(((NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)) * 5) ** 2)


# The bootstrap's documented formulas, recomputed from the resamples a Boot keeps.

def test_bootstrap_t_interval_and_p_value_follow_their_formulas():
    rng = np.random.default_rng(3)
    d = rng.normal(0.08, 0.4, 40)
    b = paired_bootstrap(d, 3000, seed=2)
    x = np.concatenate([d, [1.0, -1.0]])  # the two pseudo-tasks
    assert (b.n, b.mean, b.sd) == (40, pytest.approx(d.mean()), pytest.approx(d.std(ddof=1)))
    assert b.center == pytest.approx(x.mean()) and b.sd_adj == pytest.approx(x.std(ddof=1))
    assert b.se == pytest.approx(x.std(ddof=1) / math.sqrt(42))
    assert len(b.means) == len(b.tstats) == 3000
    # the resampled means scatter around the center with the standard error of a mean of 42
    assert b.means.mean() == pytest.approx(x.mean(), abs=3 * b.se / math.sqrt(3000) * 3)
    assert b.means.std() == pytest.approx(x.std(ddof=0) / math.sqrt(42), rel=0.08)
    assert np.all(np.sign(b.tstats) == np.sign(b.means - b.center))  # t* = (m* - center) / se*
    for level in (0.9, 0.95):
        a = (1 - level) / 2
        qlo, qhi = np.quantile(b.tstats, [a, 1 - a])
        assert b.ci(level) == pytest.approx((b.center - qhi * b.se, b.center - qlo * b.se))
    t = b.center / b.se
    ge, le = int((b.tstats >= t).sum()), int((b.tstats <= t).sum())
    assert b.p_value == pytest.approx(min(1.0, 2 * (min(ge, le) + 1) / 3001))
    assert 0 < b.p_value < 1


def test_percentile_interval_and_p_value_without_studentizing():
    rng = np.random.default_rng(4)
    d = rng.normal(0.02, 0.4, 30)
    b = paired_bootstrap(d, 2000, seed=5, studentized=False, pseudo=False)
    assert b.tstats is None
    assert b.ci(0.9) == pytest.approx(tuple(np.quantile(b.means, [0.05, 0.95])))
    below, above = int((b.means <= 0).sum()), int((b.means >= 0).sum())
    assert b.p_value == pytest.approx(min(1.0, 2 * (min(below, above) + 1) / 2001))
    assert b.center == pytest.approx(d.mean()) and b.se == pytest.approx(d.std(ddof=1) / math.sqrt(30))


def test_studentized_interval_is_clipped_to_the_range_of_a_difference():
    b = paired_bootstrap(np.array([0.9, 1.0, 1.0, 0.8, 1.0, 1.0]), 2000, seed=1)
    lo, hi = b.ci(0.99)
    assert hi == 1.0 and lo < 1.0  # a difference of correctness never exceeds 1
    b = paired_bootstrap(-np.array([0.9, 1.0, 1.0, 0.8, 1.0, 1.0]), 2000, seed=1)
    assert b.ci(0.99)[0] == -1.0


def test_one_task_or_no_resamples():
    b = paired_bootstrap(np.array([0.3]), 100)
    assert (b.n, b.mean, b.ci(), b.p_value) == (1, 0.3, (0.3, 0.3), 1.0) and math.isnan(b.sd)
    assert len(b.means) == 100 and np.all(b.means == 0.3)
    b = paired_bootstrap(np.array([0.3, 0.5, 0.1]), 0)  # bootstrap off: one "resample", the mean itself
    assert b.means.tolist() == [pytest.approx(0.3)] and b.sd == pytest.approx(0.2)
    e = paired_bootstrap(np.array([]), 10)
    assert e.n == 0 and math.isnan(e.mean) and e.p_value == 1.0
    # a Boot of one task with spread known from elsewhere has no finite interval
    from masbench.harness.stats.paired import Boot

    assert Boot(0.2, 0.5, 1, np.zeros(1)).ci() == (-math.inf, math.inf)
    assert Boot(0.2, 0.0, 1, np.zeros(1)).ci() == (0.2, 0.2)


def test_holm_with_ties_and_the_cap():
    adj, levels = holm([0.04, 0.01, 0.04, 0.5], alpha=0.1)
    # sorted: 0.01 (x4 = 0.04), 0.04 (x3 = 0.12), 0.04 (x2 = 0.08 -> running max 0.12), 0.5 (x1 = 0.5)
    assert adj == pytest.approx([0.12, 0.04, 0.12, 0.5])
    assert levels == pytest.approx([0.1 / 3, 0.1 / 4, 0.1 / 2, 0.1 / 1])
    assert holm([0.6, 0.7])[0] == [1.0, 1.0]  # 2 x 0.6 capped at 1
    assert holm([]) == ([], [])


def test_mcnemar_exact_more_tails():
    assert mcnemar_exact(1, 0) == 1.0  # 2 x P(X <= 0), X ~ Bin(1, 1/2) = 2 x 1/2
    assert mcnemar_exact(0, 3) == pytest.approx(2 / 8)
    assert mcnemar_exact(2, 7) == pytest.approx(2 * (1 + 9 + 36) / 512)


def test_unpaired_halfwidth_is_wilson_plus_the_band():
    from masbench.harness.stats.paired import unpaired_halfwidth

    z = NormalDist().inv_cdf(0.975)
    p, n = 0.3, 50
    wilson = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert unpaired_halfwidth(p, n, (0.2, 0.5)) == pytest.approx(wilson + 0.15, rel=1e-9)
    assert unpaired_halfwidth(1.0, 0, (0.4, 0.4)) == pytest.approx(z * math.sqrt(z * z / 4) / (1 + z * z))


def test_bootstrap_t_on_a_pool_whose_resamples_are_known_by_hand():
    # tasks 0, 0, 0, 1 (no pseudo-tasks): center 1/4, se = sd(ddof=1)/2 = 1/2 / 2 = 1/4. A resample with
    # j ones has mean j/4 and se* = sqrt(j(4-j)/12)/2; se* = 0 (j = 0 or 4) falls back to se. So
    # t* = -1, 0, sqrt(3)/2, 2, 3 for j = 0..4
    want = {0: -1.0, 1: 0.0, 2: math.sqrt(3) / 2, 3: 2.0, 4: 3.0}
    b = paired_bootstrap(np.array([0.0, 0.0, 0.0, 1.0]), 3000, seed=4, pseudo=False)
    assert (b.center, b.se) == (pytest.approx(0.25), pytest.approx(0.25))
    j = np.rint(b.means * 4).astype(int)
    assert set(j.tolist()) >= {0, 1, 2, 3}  # the resamples reach the cases above
    np.testing.assert_allclose(b.tstats, [want[x] for x in j], rtol=1e-12, atol=1e-12)


def test_resamples_equal_to_the_center_raise_no_warning():
    import warnings

    # tasks 0, 0, 1, -1 have center 0: a resample of four 0s has m* = center and se* = 0 (0/0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = paired_bootstrap(np.array([0.0, 0.0, 1.0, -1.0]), 2000, seed=0, pseudo=False)
        assert np.isfinite(b.tstats).all()
        paired_bootstrap(np.array([0.3]), 50)  # one task: no sd computed, no warning
        paired_bootstrap(np.array([]), 50)


def test_two_tasks_are_bootstrapped():
    b = paired_bootstrap(np.array([0.0, 1.0]), 500, seed=1, pseudo=False)
    assert b.sd == pytest.approx(math.sqrt(0.5)) and b.n == 2
    assert len(set(b.means.tolist())) == 3  # resample means 0, 1/2, 1
    lo, hi = b.ci()
    assert math.isfinite(lo) and math.isfinite(hi) and lo < hi


def test_a_constant_sample_is_not_studentized():
    b = paired_bootstrap(np.full(10, 0.4), 500, pseudo=False)
    assert b.tstats is None and b.ci() == pytest.approx((0.4, 0.4))


def test_one_resample_is_a_resample():
    b = paired_bootstrap(np.array([0.1, -0.4, 0.3, 0.9]), 1, seed=2)
    assert len(b.means) == 1 and b.tstats is not None and len(b.tstats) == 1


def test_bootstrap_defaults_and_seed():
    d = np.random.default_rng(8).normal(0.1, 0.5, 25)
    base = paired_bootstrap(d)
    assert np.array_equal(base.means, paired_bootstrap(d, 2000, seed=0).means)  # 2000 resamples, seed 0
    assert np.array_equal(base.means, paired_bootstrap(d).means)  # seeded: reproducible
    assert not np.array_equal(base.means, paired_bootstrap(d, seed=1).means)
    assert len(base.means) == 2000


def test_holm_default_level():
    assert holm([0.01, 0.02])[1] == pytest.approx([0.025, 0.05])


def test_a_boot_without_a_usable_se_falls_back_to_percentiles() -> None:
    # five resampled means; percentile interval by hand (linear interpolation over 5 sorted values
    # -0.1, 0.1, 0.2, 0.3, 0.4): 2.5% sits at position 0.1 -> -0.1 + 0.1*0.2 = -0.08, 97.5% at 3.9 -> 0.39;
    # p: 1 resample <= 0, 4 >= 0 -> 2*(1+1)/(5+1) = 2/3
    means = np.array([0.1, 0.2, 0.3, 0.4, -0.1])
    t = np.array([-5.0, -4.0, 4.0, 5.0, 6.0])  # studentized draws that would give another answer
    for se in (0.0, math.inf, math.nan):
        b = Boot(mean=0.18, sd=0.2, n=5, means=means, center=0.18, se=se, tstats=t)
        assert b.ci(0.95) == pytest.approx((-0.08, 0.39), abs=1e-12)
        assert b.p_value == pytest.approx(2 / 3, abs=1e-12)
    # a positive finite se uses the studentized draws: t_obs = 0.18/0.09 = 2; 3 draws >= 2, 2 <= 2
    # -> p = 2*(2+1)/6 = 1.0; interval 0.18 - q*0.09 clipped to [-1, 1]
    b = Boot(mean=0.18, sd=0.2, n=5, means=means, center=0.18, se=0.09, tstats=t)
    assert b.p_value == pytest.approx(1.0)
    qlo, qhi = -5.0 + 0.1 * 1.0, 5.0 + 0.9 * 1.0  # quantiles of -5,-4,4,5,6 at positions 0.1 and 3.9
    assert b.ci(0.95) == pytest.approx((0.18 - qhi * 0.09, 0.18 - qlo * 0.09), abs=1e-12)


def test_holm_tiebreak_ranks_the_larger_t_first_then_the_label() -> None:
    assert holm_tiebreak(2.0, "b") == (-2.0, "b")
    assert holm_tiebreak(math.nan, "a") == (0.0, "a")  # an unknown t ranks as t = 0
    assert sorted([holm_tiebreak(1.0, "a"), holm_tiebreak(3.0, "c"), holm_tiebreak(3.0, "b")]) == \
        [(-3.0, "b"), (-3.0, "c"), (-1.0, "a")]
    assert holm_tiebreak(math.nan, "z") > holm_tiebreak(0.5, "a")  # nan after any positive t


def test_holm_ranks_equal_p_values_by_the_given_keys() -> None:
    # two equal p-values; the keys put the second first, so it is tested at alpha/2 and the first at alpha
    adj, levels = holm([0.04, 0.04], 0.05, ties=[holm_tiebreak(1.0, "b"), holm_tiebreak(3.0, "a")])
    assert levels == pytest.approx([0.05, 0.025]) and adj == pytest.approx([0.08, 0.08])
    adj, levels = holm([0.04, 0.04], 0.05)  # no keys: by position
    assert levels == pytest.approx([0.025, 0.05])
