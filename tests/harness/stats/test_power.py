"""Power planning (masbench/harness/stats/power.py): every formula worked by hand.

The normal quantiles come from the standard library (statistics.NormalDist) or printed tables:
z_0.975 = 1.959964, z_0.995 = 2.575829, z_0.8 = 0.841621, z_0.9 = 1.281552.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from masbench.harness.stats.power import Components, cell_sd, components, n_needed, n_range, power_at, z

Z = NormalDist().inv_cdf


def test_z_is_the_standard_normal_quantile():
    assert z(0.975) == pytest.approx(1.959964, abs=1e-6)
    assert z(0.8) == pytest.approx(0.841621, abs=1e-6)
    assert z(0.5) == pytest.approx(0.0, abs=1e-12)


def test_n_needed_is_two_sided_at_the_given_level_and_power():
    # (z_{1−α/2} + z_{power})·σ/Δ, squared, rounded up:
    # α 0.01, power 0.9: (2.575829 + 1.281552)·0.3/0.07 = 16.5317 → 273.30 → 274
    assert n_needed(0.07, 0.3, alpha=0.01, power=0.9) == 274
    # the defaults α 0.05, power 0.8: (1.959964 + 0.841621)·0.5/0.1 = 14.0079 → 196.22 → 197
    assert n_needed(0.1, 0.5) == 197 == n_needed(-0.1, 0.5)  # the sign of Δ does not matter
    # α 0.1, power 0.5 (z = 0): (1.644854·0.4/0.05)² = 173.16 → 174
    assert n_needed(0.05, 0.4, alpha=0.1, power=0.5) == 174


def test_n_needed_edges():
    assert n_needed(0.1, 0.0) == 2  # no spread: any two tasks show it
    assert n_needed(0.5, 0.1) == 2  # (2.801585·0.2)² = 0.31 → 1 → at least 2 tasks
    assert n_needed(0.3, 0.5) == 22  # (2.801585·5/3)² = 21.80 → 22: not clipped
    for delta, sd in ((None, 0.4), (0.1, None), (0.1, math.nan), (0.1, math.inf), (math.nan, 0.4),
                      (math.inf, 0.4), (0.0, 0.4), (5e-10, 0.4), (-5e-10, 1e-12)):
        assert n_needed(delta, sd) is None, (delta, sd)
    # a gap of exactly 1e-9 counts (only below it is float noise): (2.801585·1)² = 7.85 → 8
    assert n_needed(1e-9, 1e-9) == 8
    # up to 10⁹ tasks is an answer, beyond it none: Δ chosen so the square is 10⁹ − ½ and 10⁹ + ½
    zs = Z(0.975) + Z(0.8)
    assert n_needed(zs / math.sqrt(1e9 - 0.5), 1.0) == 10**9
    assert n_needed(zs / math.sqrt(1e9 + 0.5), 1.0) is None


def test_n_range_reads_the_farther_end_first():
    zs = Z(1 - 0.02 / 2) + Z(0.9)  # 2.326348 + 1.281552 = 3.607900
    # [0.05, 0.2], σ 0.5: far end 0.2 → (3.6079·2.5)² = 81.36 → 82; near end 0.05 → (3.6079·10)² = 1301.69 → 1302
    assert n_range((0.05, 0.2), 0.5, 0.02, 0.9) == (82, 1302) == n_range((-0.2, -0.05), 0.5, 0.02, 0.9)
    assert math.ceil((zs * 2.5) ** 2) == 82 and math.ceil((zs * 10) ** 2) == 1302
    # defaults α 0.05, power 0.8: [0.1, 0.25], σ 0.5 → (2.801585·2)² = 31.40 → 32 and 197 (above)
    assert n_range((0.1, 0.25), 0.5) == (32, 197)
    # an interval that holds or touches 0, or is not finite: no n
    for iv in ((-0.1, 0.2), (0.0, 0.2), (-0.2, 0.0), (0.0, 0.0), (0.05, math.inf), (-math.inf, -0.05),
               (math.nan, 0.2), (0.05, math.nan)):
        assert n_range(iv, 0.5) is None, iv


def test_power_at_is_the_two_sided_normal_power():
    # n 50, Δ 0.1, σ 0.4, α 0.05: se = 0.4/√50 = 0.056569, Δ/se = 1.767767;
    # Φ(1.767767 − 1.959964) + Φ(−1.767767 − 1.959964) = Φ(−0.192197) + Φ(−3.727731) = 0.423794 + 0.000097
    assert power_at(50, 0.1, 0.4) == pytest.approx(0.423892, abs=2e-6)
    assert power_at(50, -0.1, 0.4) == pytest.approx(0.423892, abs=2e-6)
    # α 0.01: Φ(1.767767 − 2.575829) + Φ(−4.343596) = Φ(−0.808062) + 0.000007 = 0.209527 + 0.000007
    assert power_at(50, 0.1, 0.4, 0.01) == pytest.approx(0.209534, abs=2e-6)
    # no effect: the power is the level (two tails of α/2)
    assert power_at(30, 0.0, 0.4, 0.05) == pytest.approx(0.05, abs=1e-12)
    # no spread: certain detection of any effect, and the level without one
    assert power_at(10, 0.1, 0.0) == 1.0 and power_at(10, 0.0, 0.0, 0.02) == 0.02
    assert power_at(10, 0.0, 0.0) == 0.05


def test_cell_sd_by_hand():
    assert cell_sd(0.6, 0.1) == pytest.approx(math.sqrt(0.7 * 0.3 + 0.6 * 0.4))  # ρ = 0 by default
    # ρ 0.5, p = p₁ = 0.5: 0.25 + 0.25 − 2·0.5·0.25 = 0.25
    assert cell_sd(0.5, 0.0, rho=0.5) == pytest.approx(0.5)
    # ρ 0.3, p 0.4, p₁ 0.6: 0.24 + 0.24 − 0.6·0.24 = 0.336
    assert cell_sd(0.4, 0.2, 0.3) == pytest.approx(math.sqrt(0.336))
    # p₁ is clipped to [0, 1]: 0.9 + 0.2 → 1 (variance 0), 0.1 − 0.3 → 0
    assert cell_sd(0.9, 0.2) == pytest.approx(0.3) and cell_sd(0.1, -0.3) == pytest.approx(0.3)
    assert cell_sd(0.9, 0.1) == pytest.approx(0.3)  # exactly 1: still variance 0
    # an impossible ρ > 1 gives a negative variance: floored at 0
    assert cell_sd(0.5, 0.0, rho=2.0) == 0.0


def test_components_sd_by_hand():
    c = Components(between=0.04, within=0.09, seeds=3.0, n_tasks=10)
    assert c.sd(1) == pytest.approx(math.sqrt(0.13)) and c.sd(3) == pytest.approx(math.sqrt(0.07))
    assert c.sd(0) == pytest.approx(math.sqrt(0.13))  # 0 seeds read as 1
    assert Components(-0.01, 0.09, 2.0, 5).sd(1) == pytest.approx(0.3)  # a negative σ_b² counts as 0


def test_variance_components_of_a_tiny_pilot_by_hand():
    # task a: 1, 0 (mean 1/2); task b: 0, 0, −1 (mean −1/3); in scrambled order
    ids = np.array(["b", "a", "b", "a", "b"])
    d = np.array([0.0, 1.0, 0.0, 0.0, -1.0])
    # within: (¼ + ¼ + 1/9 + 1/9 + 4/9) / (5 − 2) = (7/6)/3 = 7/18; mean seeds 5/2
    # with the pseudo-tasks: var(½, −⅓, 1, −1; ddof 1) = 113/144 ... by hand: mean 1/24, squares
    #   (11/24)² + (9/24)² + (23/24)² + (25/24)² = (121 + 81 + 529 + 625)/576 = 1356/576; /3 = 113/144
    #   between = 113/144 − (7/18)/(5/2) = 113/144 − 7/45 = 0.784722 − 0.155556 = 0.629167
    c = components(ids, d)
    assert c.within == pytest.approx(7 / 18) and c.seeds == 2.5 and c.n_tasks == 2
    assert c.between == pytest.approx(113 / 144 - 7 / 45)
    # without: var(½, −⅓; ddof 1) = (5/6)²/2 = 25/72; between = 25/72 − 7/45 = 0.191667
    c = components(ids, d, pseudo=False)
    assert c.within == pytest.approx(7 / 18) and c.between == pytest.approx(25 / 72 - 7 / 45)


def test_variance_components_edges():
    # one cell per task: no within-task variance; between = the variance of the task means
    # (½, 0, 0: mean 1/6, ((1/3)² + 2·(1/6)²)/2 = 1/12; with ±1 pseudo-tasks: 2.2/4 = 0.55)
    c = components(np.array([1, 2, 3]), np.array([0.5, 0.0, 0.0]), pseudo=False)
    assert (c.between, c.within, c.seeds, c.n_tasks) == (pytest.approx(1 / 12), 0.0, 1.0, 3)
    assert components(np.array([1, 2, 3]), np.array([0.5, 0.0, 0.0])).between == pytest.approx(0.55)
    # one task, one cell, no pseudo-tasks: no variance at all (not NaN)
    c = components(np.array(["a"]), np.array([0.3]), pseudo=False)
    assert (c.between, c.within) == (0.0, 0.0)
    # seed noise larger than the spread of the means: σ_b² floored at 0
    # (a: 1, −1; b: 1, −1 → means 0, 0; within (1 + 1 + 1 + 1)/(4 − 2) = 2)
    c = components(np.array(["a", "a", "b", "b"]), np.array([1.0, -1.0, 1.0, -1.0]), pseudo=False)
    assert (c.between, c.within) == (0.0, pytest.approx(2.0))
