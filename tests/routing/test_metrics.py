"""Router metrics (masbench/routing/metrics.py) against values worked by hand from the definitions
(RouterBench's AIQ, RouteLLM's PGR/APGR/CPT; docs/routing.md "Metrics")."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from masbench.routing.metrics import (
    aiq,
    apgr,
    area_under,
    cpt,
    entropy_of,
    hull_at,
    oracle_choice,
    pgr,
    pgr_hull,
    routing_entropy,
    upper_hull,
)


def vertices(h: np.ndarray) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in h]


def same(h: np.ndarray, expected: list[tuple[float, float]]) -> bool:
    return h.shape == (len(expected), 2) and np.allclose(h, expected, rtol=0, atol=1e-12)


# ----- the hull ------------------------------------------------------------------------------------
def test_hull_pops_collinear_and_lower_points_and_cuts_after_the_top():
    # (0.5, 0.5) is ON the segment (0,0)→(1,1): a random mix reaches it, it is no vertex
    assert vertices(upper_hull([(0.5, 0.5), (1.0, 1.0)])) == [(0.0, 0.0), (1.0, 1.0)]
    # (0.5, 0.1) is below that segment (the hull has just two vertices when it is popped)
    assert vertices(upper_hull([(0.5, 0.1), (1.0, 1.0)])) == [(0.0, 0.0), (1.0, 1.0)]
    # (0.2,0.1), (0.4,0.25), (0.6,0.45) all lie under (0,0)→(1,1): each is popped in turn
    assert vertices(upper_hull([(0.2, 0.1), (0.4, 0.25), (0.6, 0.45), (1.0, 1.0)])) == [(0.0, 0.0), (1.0, 1.0)]
    # concave corner kept; a point after the highest vertex is cut (non-decreasing hull)
    assert vertices(upper_hull([(0.5, 0.8), (1.0, 0.9), (2.0, 0.7)])) == [(0.0, 0.0), (0.5, 0.8), (1.0, 0.9)]
    # two equal tops: argmax keeps the first (cheaper) one only
    assert vertices(upper_hull([(0.5, 0.8), (1.0, 0.8)])) == [(0.0, 0.0), (0.5, 0.8)]
    # duplicates count once; non-finite points are dropped
    assert vertices(upper_hull([(1.0, 0.5), (1.0, 0.5), (math.nan, 0.9), (0.3, math.inf)])) == [(0.0, 0.0), (1.0, 0.5)]


def test_hull_pop_decisions_away_from_the_origin():
    # the turn test at a corner that is not the origin: (1, 0.6) → (2, y) → (3, 1.05).
    # y = 0.9 is above the segment (1,0.6)→(3,1.05) (0.825 at x = 2): kept;
    # y = 0.8 is below it: popped
    assert vertices(upper_hull([(1.0, 0.6), (2.0, 0.9), (3.0, 1.05)])) == \
        [(0.0, 0.0), (1.0, 0.6), (2.0, 0.9), (3.0, 1.05)]
    assert vertices(upper_hull([(1.0, 0.6), (2.0, 0.8), (3.0, 1.05)])) == [(0.0, 0.0), (1.0, 0.6), (3.0, 1.05)]


def test_hull_without_origin_and_empty():
    assert vertices(upper_hull([(0.5, 0.2), (1.0, 0.6)], origin=None)) == [(0.5, 0.2), (1.0, 0.6)]
    # a custom origin is a point like any other: (1, 0) then (2, 1)
    assert vertices(upper_hull([(2.0, 1.0)], origin=(1.0, 0.0))) == [(1.0, 0.0), (2.0, 1.0)]
    empty = upper_hull([], origin=None)
    assert empty.shape == (0, 2)
    assert np.isnan(hull_at(empty, 0.5)) and np.isnan(hull_at(empty, 1))  # an integer x too
    assert np.isnan(hull_at(empty, np.array([0.1, 0.2]))).all() and hull_at(empty, np.array([0.1, 0.2])).shape == (2,)


def test_hull_at_is_minus_inf_before_linear_between_flat_after():
    h = np.array([[0.5, 0.2], [1.0, 0.6]])
    assert hull_at(h, 0.25) == -np.inf
    assert hull_at(h, 0.75) == pytest.approx(0.4)  # halfway between 0.2 and 0.6
    assert hull_at(h, 3.0) == 0.6


def test_area_under_by_hand():
    # hull starting at x = 0.5: nothing (counted 0) before it, 1 after → mean over [0, 1] = 0.5, up to
    # the trapezoid's ramp over the one grid step (1/4000) before the jump: + 0.5/4000 = 0.000125
    # (aiq and apgr never meet this: their hulls start at the origin, at or before x0)
    assert area_under(np.array([[0.5, 1.0], [1.0, 1.0]]), 0.0, 1.0) == pytest.approx(0.5, abs=2e-4)
    # (0,0)→(1,1)→flat, over [0.5, 2]: ∫_{0.5}^{1} x dx = 0.375, ∫_1^2 1 dx = 1 → 1.375 / 1.5
    h = np.array([[0.0, 0.0], [1.0, 1.0]])
    assert area_under(h, 0.5, 2.0) == pytest.approx(1.375 / 1.5)
    # breakpoints are included: with two grid points only, the corner at x = 1 is still exact
    assert area_under(h, 0.0, 2.0, n=2) == pytest.approx((0.5 + 1.0) / 2.0)
    # a corner whose height (0.2) is below x0 (0.5) is a breakpoint all the same:
    # (0,0)→(1,0.2)→(2,1) over [0.5, 2]: ∫_{0.5}^{1} 0.2x dx = 0.075, ∫_1^2 = (0.2 + 1)/2 = 0.6 → 0.675 / 1.5
    assert area_under(np.array([[0.0, 0.0], [1.0, 0.2], [2.0, 1.0]]), 0.5, 2.0, n=2) == pytest.approx(0.45)
    with warnings.catch_warnings():  # an empty interval is answered by the guard, not by a 0/0
        warnings.simplefilter("error")
        assert math.isnan(area_under(h, 1.0, 1.0)) and math.isnan(area_under(h, 1.0, 0.5))
    assert math.isnan(area_under(np.zeros((0, 2)), 0.0, 1.0))


def test_aiq_by_hand():
    # hull (0,0)→(0.2,0.6)→(0.5,0.9)→flat, c_max 1:
    # 0.2·0.3 + 0.3·(0.6+0.9)/2 + 0.5·0.9 = 0.06 + 0.225 + 0.45 = 0.735
    pts = [(0.2, 0.6), (0.5, 0.9), (0.4, 0.5)]
    assert aiq(pts, 1.0) == pytest.approx(0.735)
    # c_max 0.5: (0.06 + 0.225) / 0.5 = 0.57
    assert aiq(pts, 0.5) == pytest.approx(0.57)


# ----- PGR, APGR, CPT --------------------------------------------------------------------------------
def test_pgr_by_hand_and_degenerate():
    assert pgr(0.7, 0.5, 0.9) == pytest.approx(0.5)  # (0.7 − 0.5) / (0.9 − 0.5)
    assert np.allclose(pgr(np.array([0.5, 0.9, 1.0]), 0.5, 0.9), [0.0, 1.0, 1.25])
    assert np.isnan(pgr(0.7, 0.6, 0.6))
    # the guard is |q_strong − q_weak| > 1e-12: a gap of exactly 1e-12 is treated as no gap
    assert np.isnan(pgr(1e-12, 0.0, 1e-12))
    assert pgr(2e-12, 0.0, 2e-12) == pytest.approx(1.0)


def test_apgr_offsets_the_cost_axis_by_the_weak_models_cost():
    # weak (0.25, 0.5), strong (1.25, 1.0): x = (c − 0.25) / 1.0, PGR = (q − 0.5) / 0.5.
    # router at cost 0.75, quality 0.875: x = 0.5, PGR = 0.375 / 0.5 = 0.75; strong: x = 1, PGR = 1.
    # PGR hull (0,0)→(0.5,0.75)→(1,1):
    #   0.5·0.375 + 0.5·(0.75+1)/2 = 0.1875 + 0.4375 = 0.625
    weak, strong = (0.25, 0.5), (1.25, 1.0)
    pts = [weak, (0.75, 0.875), strong]
    assert same(pgr_hull(pts, weak, strong), [(0.0, 0.0), (0.5, 0.75), (1.0, 1.0)])
    assert apgr(pts, weak, strong) == pytest.approx(0.625)
    # (without the offset, x = c / 1.0: weak 0.25 (popped), router 0.75, strong 1.25 → hull
    #  (0,0)→(0.75,0.75)→(1.25,1): 0.28125 + 0.25·(0.75+0.875)/2 = 0.484375)
    # CPT(0.5): on (0,0)→(0.5,0.75) PGR = 1.5x, so x = 1/3 (grid step 1/2000 → 0.3335)
    assert cpt(pts, weak, strong, 0.5) == pytest.approx(0.3335, abs=1e-9)
    # CPT(0.8): on (0.5,0.75)→(1,1) PGR = 0.75 + 0.5(x − 0.5), so x = 0.6
    assert cpt(pts, weak, strong, 0.8) == pytest.approx(0.6, abs=1e-9)


def test_cpt_hits_a_grid_point_exactly_and_nan_when_never():
    weak, strong = (0.0, 0.5), (1.0, 0.9)
    line = [weak, strong]
    # PGR(x) = x on the weak→strong line; 0.5 and 0.8 are grid points of linspace(0, 1, 2001)
    assert cpt(line, weak, strong, 0.5) == pytest.approx(0.5, abs=1e-9)
    assert cpt(line, weak, strong, 0.8) == pytest.approx(0.8, abs=1e-9)
    assert cpt(line, weak, strong, 1.0) == pytest.approx(1.0, abs=1e-9)
    assert cpt(line, weak, strong, 0.0) == 0.0
    assert math.isnan(cpt(line, weak, strong, 1.01))


def test_pgr_hull_divides_by_the_cost_span():
    # weak (0.5, 0.5), strong (2.5, 0.9): span 2. Router (1.5, 0.8): x = 1/2, PGR = 0.75 → APGR 0.625 (as above);
    # multiplying by the span would put it at x = 2
    weak, strong = (0.5, 0.5), (2.5, 0.9)
    h = pgr_hull([weak, (1.5, 0.8), strong], weak, strong)
    assert same(h, [(0.0, 0.0), (0.5, 0.75), (1.0, 1.0)])
    assert apgr([weak, (1.5, 0.8), strong], weak, strong) == pytest.approx(0.625)
    # span 0.5 (below 1 as well): weak (0.25, 0.5), strong (0.75, 0.9), router (0.5, 0.8): x = 0.25/0.5 = 1/2
    weak, strong = (0.25, 0.5), (0.75, 0.9)
    assert same(pgr_hull([weak, (0.5, 0.8), strong], weak, strong), [(0.0, 0.0), (0.5, 0.75), (1.0, 1.0)])
    # a span of exactly 1e-15 is treated as none (x = c − c_weak): the strong point at x = 1e-15, APGR ≈ 1
    weak, strong = (0.0, 0.5), (1e-15, 0.9)
    assert apgr([strong], weak, strong) == pytest.approx(1.0, abs=1e-9)


def test_pgr_hull_with_equal_weak_and_strong_cost():
    # span 0 → 1.0 (x = c − c_weak): (0.8, 0.9) → x = 0.5, PGR = (0.9 − 0.5)/0.4 = 1
    weak, strong = (0.3, 0.5), (0.3, 0.9)
    assert same(pgr_hull([(0.8, 0.9)], weak, strong), [(0.0, 0.0), (0.5, 1.0)])
    # APGR = 0.5·0.5 + 0.5·1 = 0.75
    assert apgr([(0.8, 0.9)], weak, strong) == pytest.approx(0.75)


# ----- entropy and the oracle -------------------------------------------------------------------------
def test_routing_entropy_by_hand():
    # shares 3/4, 1/4: H = 0.75·log2(4/3) + 0.25·2 = 0.311278 + 0.5 = 0.811278 bits
    h, hn = routing_entropy([0, 0, 0, 1], 2)
    assert h == pytest.approx(0.8112781245) and hn == pytest.approx(0.8112781245)
    h, hn = routing_entropy(np.array([0, 0, 0, 1]), 4)
    assert h == pytest.approx(0.8112781245) and hn == pytest.approx(0.8112781245 / 2)
    assert routing_entropy([], 3) == (0.0, 0.0)
    # a collapse onto one model is 0 bits, a plain 0.0: −(1·log2 1) is −0.0, which tables print as "-0.00"
    for choices, n in (([2], 3), ([3, 3, 3], 4), ([], 3)):
        h, hn = routing_entropy(choices, n)
        assert (math.copysign(1.0, h), math.copysign(1.0, hn)) == (1.0, 1.0), choices
    assert routing_entropy([0, 0], 1) == (0.0, 0.0)


def test_entropy_of_a_probability_vector():
    # zero shares are skipped; normalised by log2 of the vector's length (3 models)
    h, hn = entropy_of(np.array([0.5, 0.5, 0.0]))
    assert h == pytest.approx(1.0) and hn == pytest.approx(1 / math.log2(3))
    # unnormalised weights are divided by their sum: (2, 2) is uniform over 2
    assert entropy_of(np.array([2.0, 2.0])) == pytest.approx((1.0, 1.0))
    assert entropy_of(np.array([1.0])) == (0.0, 0.0)
    h, hn = entropy_of(np.array([0.0, 1.0, 0.0]))
    assert (h, hn) == (0.0, 0.0) and (math.copysign(1.0, h), math.copysign(1.0, hn)) == (1.0, 1.0)


def test_oracle_picks_the_cheapest_correct_else_the_cheapest():
    Y = np.array([[1, 1, 0], [0, 1, 1], [0, 0, 0], [0.5, 0, 1]])
    C = np.array([[2, 1, 0.5], [1, 3, 2], [5, 4, 6], [1, 2, 3]])
    # row 0: correct {0, 1} → 1 (cost 1); row 1: {1, 2} → 2 (cost 2); row 2: none → cheapest 1;
    # row 3: 0.5 is not correct (> 0.5 is) → only model 2
    assert oracle_choice(Y, C).tolist() == [1, 2, 1, 2]
