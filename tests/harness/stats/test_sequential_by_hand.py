"""The betting confidence sequence and one look, on short sequences worked by hand
(masbench.harness.stats.sequential).

Capitals follow the module docstring's formulas: x = (d + 1)/2, K = ½K⁺ + ½K⁻, K⁺ = Π(1 + λ⁺(x − m)),
K⁻ = Π(1 − λ⁻(x − m)), bets from the regularized moments before each task (μ̂₀ = ½, σ̂²₀ = ¼),
truncated at c/m and c/(1 − m) with c = ½. The look's rule, by hand: a design is decided when its
Holm-adjusted p is below α AND its interval at its Holm level excludes 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

import masbench.harness.stats.sequential as seq
from masbench.harness.stats.sequential import LookInput, Sequence, betting_sequence, look, p_paths

SMALL = 401


def test_three_wins_capital_by_hand():
    """d = [1, 1, 1] at m = ½, agrapa. Task 1 bets 0 (μ̂₀ = ½ = m): K = 1.
    After task 1: μ̂₁ = (½ + 1)/2 = ¾, σ̂²₁ = (¼ + (1 − ¾)²)/2 = 5/32; λ⁺₂ = ¼/(5/32 + 1/16) = 8/7 → c/m = 1:
    K⁺₂ = 1·(1 + ½) = 3/2, K⁻₂ = 1 (λ⁻ = 0), K₂ = 5/4.
    After task 2: μ̂₂ = (½ + 2)/3 = 5/6, σ̂²₂ = (¼ + 1/16 + 1/36)/3 = 0.1134, λ⁺₃ = (1/3)/(0.1134 + 1/9) = 1.48 → 1:
    K⁺₃ = 9/4, K₃ = ½·9/4 + ½·1 = 13/8, p = 8/13."""
    s, _ = betting_sequence(np.array([1.0, 1.0, 1.0]))
    assert s.p_value() == pytest.approx(8 / 13, abs=1e-12)
    assert s.n == 3 and s.mean == 1.0 and s.side() == 1
    # the capital against "the mean difference is 0" is a lower bound on every other null's evidence
    # at the far end: μ0 = 1 (x = 1, m at the grid's top) never loses: p stays 1
    assert s.p_value(1.0) == 1.0


def test_p_paths_clip_differences_to_the_unit_range_and_keep_the_shape():
    """p_paths at d = [1, 1]: 1 after task 1 (no bet), 0.8 after task 2 (K = 1.25, test_two_wins_by_hand);
    a difference beyond ±1 counts as ±1."""
    np.testing.assert_allclose(p_paths(np.array([[5.0, 5.0], [-5.0, -5.0], [1.0, 1.0]])),
                               [[1.0, 0.8], [1.0, 0.8], [1.0, 0.8]], atol=1e-12)
    assert p_paths(np.zeros((3, 0))).shape == (3, 0)
    with pytest.raises(ValueError, match=r"unknown bet 'kelly' \(prpl \| agrapa\)"):
        p_paths(np.zeros((1, 2)), bet="kelly")  # type: ignore[arg-type]


def test_the_default_interval_is_the_95_percent_one():
    s, _ = betting_sequence(np.full(60, 0.8), grid=SMALL)
    assert s.interval() == s.interval(0.95)
    lo, hi = s.interval()
    assert lo > 0 and hi <= 1.0 and (lo, hi) != (-1.0, 1.0)


def test_a_look_passes_its_bet_and_level_through():
    """prpl's bet reads α (λ = √(2 log(2/α)/…)), agrapa's does not: the look's p is the sequence's at
    the same α and bet; Holm levels are α/m, α/(m − 1) in order of p."""
    d = np.tile([1.0, 0.5, 1.0, -0.5, 1.0, 1.0, 0.0, -1.0], 8)  # 64 tasks: prpl's λ falls below its cap
    weak = np.tile([1.0, -1.0, 1.0, 0.0, -1.0, 1.0, 0.0, 0.0], 8)
    (a, b) = look([LookInput("a", d, "within", 8), LookInput("b", weak, "within", 8)], 0.2, "prpl", grid=SMALL)
    pa = betting_sequence(d, alpha=0.2, bet="prpl", grid=SMALL)[0].p_value()
    pb = betting_sequence(weak, alpha=0.2, bet="prpl", grid=SMALL)[0].p_value()
    assert pa != betting_sequence(d, alpha=0.05, bet="prpl", grid=SMALL)[0].p_value()  # α changes prpl's bets
    assert pa != betting_sequence(d, alpha=0.2, bet="agrapa", grid=SMALL)[0].p_value()
    assert (a.p_anytime, b.p_anytime) == (pytest.approx(pa, abs=1e-15), pytest.approx(pb, abs=1e-15))
    assert pa < pb
    assert (a.level_holm, b.level_holm) == (pytest.approx(0.1), pytest.approx(0.2))
    assert a.p_holm == pytest.approx(min(1.0, 2 * pa)) and b.p_holm == pytest.approx(max(min(1.0, 2 * pa), pb))
    assert a.mean == pytest.approx(3.0 / 8) and b.mean == pytest.approx(1.0 / 8)
    assert a.family_size == b.family_size == 2


def test_look_default_level_is_five_percent():
    """Eight differences of 0.25: p far above 0.05 (undecided), yet the Holm p is below 1.05."""
    (r,) = look([LookInput("x", np.full(8, 0.25), "within", 8)], grid=SMALL)
    assert not r.decided and r.level_holm == 0.05 and r.p_holm < 1.05


def _patched(monkeypatch, p: float, interval: tuple[float, float]):
    monkeypatch.setattr(Sequence, "p_value", lambda self, mu0=0.0: p)
    monkeypatch.setattr(Sequence, "interval", lambda self, level=0.95: interval)


@pytest.mark.parametrize("p, interval, decided", [
    (0.01, (0.0, 0.3), False),     # the interval touches 0 from above: not decided
    (0.01, (-0.3, 0.0), False),    # ... from below
    (0.01, (-0.1, 0.2), False),    # p small but 0 inside the interval
    (0.2, (0.1, 0.3), False),      # interval off 0 but the Holm p is not below α
    (0.05, (0.1, 0.3), False),     # the Holm p at exactly α is not below it
    (0.01, (0.1, 0.3), True),
    (0.01, (-0.3, -0.1), True),
])
def test_a_design_is_decided_by_holm_p_below_alpha_and_an_interval_off_zero(monkeypatch, p, interval, decided):
    _patched(monkeypatch, p, interval)
    (r,) = look([LookInput("x", np.full(5, 0.5), "within", 8)], 0.05, grid=SMALL)
    assert r.decided is decided
    assert (r.cs_lo, r.cs_hi, r.p_holm) == (interval[0], interval[1], p)
    if not decided:
        assert r.verdict == "inconclusive" and r.reason == "undecided after 5 tasks"


def test_a_decided_design_beyond_the_curve_names_k_max(monkeypatch):
    _patched(monkeypatch, 0.001, (-0.4, -0.2))
    (r,) = look([LookInput("x", np.full(5, -0.3), "beyond", 6)], 0.05, grid=SMALL)
    assert r.decided and r.verdict == "not worth it"
    assert r.reason == "significantly worse than CoT-SC@6, which is cheaper"
    assert r.mean == pytest.approx(-0.3)


def test_the_sequence_state_without_differences():
    s, paths = betting_sequence(np.array([]), paths=True)
    assert s.n == 0 and math.isnan(s.mean) and s.side() == 0 and s.p_value() == 1.0
    assert paths is not None and paths.shape == (0, 3)
    with pytest.raises(ValueError, match=r"^a paired difference is NaN \(a task without a curve value\?\)$"):
        betting_sequence(np.array([0.1, np.nan]))
    with pytest.raises(ValueError, match=r"unknown bet 'x'"):
        betting_sequence(np.array([0.1]), bet="x")  # type: ignore[arg-type]


def test_side_says_which_way_the_mean_lies():
    down, _ = betting_sequence(np.array([-0.5, -0.25]))
    flat, _ = betting_sequence(np.array([0.5, -0.5]))
    assert down.side() == -1 and flat.side() == 0 and down.side(-0.5) == 1


def test_grid_is_odd_with_no_difference_in_the_middle():
    for points in (401, 400):
        g = seq._grid(points)
        assert len(g) == 401 and g[200] == 0.5
        assert 0 < g[0] < g[1] and g[-2] < g[-1] < 1
        assert g[0] == pytest.approx(0.5 / 400 / 2) and g[-1] == pytest.approx(1 - 0.5 / 400 / 2)


def test_the_hull_by_hand():
    """_hull (behind Sequence.interval and the paths' intervals) on a 5-point grid whose ends are pulled
    inside, μ = −0.9, −½, 0, ½, 0.9: the step is read between the 2nd and 3rd point (½), at log(1/level) = 3.
    A: only 0 is below 3 (−½ sits at exactly 3: rejected) → [0 − ½, 0 + ½]. B and C reject every point: each
    keeps its own least-rejected one (B: 0, C: −½) → [−½, ½] and [−1, 0]. D keeps all → [−0.9 − ½, 0.9 + ½]
    clipped to [−1, 1]."""
    mu = np.array([-0.9, -0.5, 0.0, 0.5, 0.9])
    log_k = np.array([[5.0, 3.0, 1.0, 5.0, 5.0],
                      [5.0, 6.0, 4.0, 7.0, 8.0],
                      [9.0, 4.0, 6.0, 7.0, 8.0],
                      [1.0, 1.0, 1.0, 1.0, 1.0]])
    assert seq._hull(log_k, mu, 3.0) == [(-0.5, 0.5), (-0.5, 0.5), (-1.0, 0.0), (-1.0, 1.0)]
    # through Sequence.interval: level 1 − e⁻⁴ reads log(1/level) = 4, which keeps 0 (1) and ½ (3): [0 − ½, ½ + ½]
    s = Sequence(3, 0.2, mu, np.array([5.0, 4.5, 1.0, 3.0, 5.0]), np.zeros(5, dtype=np.int8))
    assert s.interval(1 - math.exp(-4.0)) == (-0.5, 1.0)
    assert s.interval(1 - math.exp(-2.0)) == (-0.5, 0.5)  # only 0 kept (1 < 2 ≤ 3)


def test_one_difference_already_has_a_side():
    s, paths = betting_sequence(np.array([0.5]))
    assert s.side() == 1 and paths is None  # paths only when asked
    assert betting_sequence(np.array([-0.25]))[0].side() == -1


def test_a_look_reads_its_interval_on_the_grid_it_is_given():
    """On an 11-point grid (step 0.2 between −0.8 … 0.8, ends pulled to ±0.95) the interval's ends are grid
    means ± 0.2 (or ±1 once clipped): multiples of 0.2 up to the pulled ends; 30 wins of 1 put it above 0."""
    d = np.ones(30)
    (r,) = look([LookInput("a", d, "within", 8)], 0.05, grid=11)
    assert r.cs_lo > 0 and r.cs_hi == 1.0
    assert abs(r.cs_lo / 0.2 - round(r.cs_lo / 0.2)) < 1e-9 or abs(abs(r.cs_lo) - 0.75) < 1e-9
    assert (r.cs_lo, r.cs_hi) == betting_sequence(d, grid=11)[0].interval(1 - r.level_holm)
    assert (r.cs_lo, r.cs_hi) != betting_sequence(d)[0].interval(1 - r.level_holm)


def test_a_difference_beyond_the_unit_range_counts_as_its_bound():
    """Differences of 5 are wins of 1: the three-wins capital (p = 8/13, test_three_wins_capital_by_hand) and a
    mean of 1; −5 mirrors it."""
    up, _ = betting_sequence(np.array([5.0, 5.0, 5.0]))
    down, _ = betting_sequence(np.array([-5.0, -5.0, -5.0]))
    assert up.p_value() == pytest.approx(8 / 13, abs=1e-12) and up.mean == 1.0
    assert down.p_value() == pytest.approx(8 / 13, abs=1e-12) and down.mean == -1.0


def test_the_direction_of_the_evidence_by_hand():
    """Three wins: at μ = 0 the up-bet's capital K⁺₃ = 9/4 beats K⁻₃ = 1 (test_three_wins_capital_by_hand), so the
    running max was reached on the up side: +1; three losses mirror it: −1. Before any difference: 0 everywhere."""
    win, _ = betting_sequence(np.ones(3), grid=SMALL)
    loss, _ = betting_sequence(-np.ones(3), grid=SMALL)
    empty, _ = betting_sequence(np.array([]), grid=SMALL)
    mid = SMALL // 2
    assert win.mu[mid] == 0.0 and win.direction[mid] == 1 and loss.direction[mid] == -1
    assert empty.direction.shape == (SMALL,) and not empty.direction.any()
    # one difference: task 1 bets nothing at μ = 0 (K₁ = 1 = K₀), no new maximum, no direction yet
    one, _ = betting_sequence(np.ones(1), grid=SMALL)
    assert one.direction[mid] == 0
    # at the grid's top (μ ≈ 1) three wins never lift the capital above 1 (p stays 1): no direction either
    assert win.p_value(1.0) == 1.0 and win.direction[-1] == 0


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_the_last_path_is_the_final_interval_at_one_minus_alpha(alpha):
    """The paths' interval after the last task is the sequence's own at level 1 − α (the same running max, read at
    log(1/α)), and its p the sequence's p of 0."""
    d = np.tile([1.0, 0.5, -0.5, 1.0, 0.0], 12)
    s, paths = betting_sequence(d, alpha=alpha, grid=SMALL, paths=True)
    assert paths is not None and paths.shape == (60, 3)
    assert tuple(paths[-1, :2]) == s.interval(1 - alpha)
    assert paths[-1, 2] == pytest.approx(s.p_value(), abs=1e-12)
    assert s.interval(1 - alpha) != s.interval(1 - alpha / 2)  # the level matters on this sequence
