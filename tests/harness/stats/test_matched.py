"""The matched cost's delta-method adjustment, by hand."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from masbench.harness.stats.matched import cost_adjusted
from masbench.harness.stats.tests import get_test


def test_the_adjustment_by_hand_and_its_mean():
    d = np.array([0.5, -0.25, 0.0])
    c = np.array([300.0, 500.0, 400.0])  # design tokens per task: c̄ = 400
    s = np.array([100.0, 100.0, 130.0])  # pool's mean sample tokens per task: s̄ = 110
    h = 0.05
    # IF_t = (c_t − 400)/110 − (400/110²)(s_t − 110)
    want = [d[i] - h * ((c[i] - 400) / 110 - 400 / 110**2 * (s[i] - 110)) for i in range(3)]
    got = cost_adjusted(d, c, s, h)
    assert got == pytest.approx(want, rel=1e-12)
    assert got.mean() == pytest.approx(d.mean(), abs=1e-15)


def test_nothing_changes_when_every_task_costs_the_same_or_at_a_fixed_k():
    rng = np.random.default_rng(0)
    d = rng.normal(0, 0.4, 50)
    assert np.array_equal(cost_adjusted(d, np.full(50, 700.0), np.full(50, 200.0), 0.04), d)
    assert np.array_equal(cost_adjusted(d, rng.normal(700, 80, 50), rng.normal(200, 9, 50), 0.0), d)  # below/beyond
    assert np.array_equal(cost_adjusted(d, np.full(50, np.nan), np.full(50, 200.0), 0.04), d)  # cost unknown


def test_varying_cost_widens_the_interval():
    rng = np.random.default_rng(1)
    n = 3000
    d = rng.normal(0.03, 0.4, n)
    c = 2.5 * 200 + rng.normal(0, 400, n)  # a design of very variable cost (k ≈ 2.5 samples of 200 tokens)
    s = 200 + rng.normal(0, 20, n)
    adj = cost_adjusted(d, c, s, 0.1)
    t = get_test("student-t")
    w0 = np.subtract(*t.run(d).ci(0.95)[::-1])
    w1 = np.subtract(*t.run(adj).ci(0.95)[::-1])
    # independent cost noise adds h²·Var(IF) to the variance: Var(IF) ≈ (400/200)² + (2.5·20/200)²
    var_if = (400 / 200) ** 2 + (2.5 * 20 / 200) ** 2
    assert w1 > w0
    assert (w1 / w0) ** 2 == pytest.approx(1 + 0.1**2 * var_if / 0.4**2, rel=0.05)


def test_no_adjustment_without_a_usable_slope_or_sample_cost():
    d = np.array([0.5, -0.5, 0.25])
    c, s = np.array([100.0, 300.0, 200.0]), np.array([50.0, 50.0, 80.0])
    for slope in (math.inf, -math.inf, math.nan, 0.0):
        assert np.array_equal(cost_adjusted(d, c, s, slope), d), slope
    assert np.array_equal(cost_adjusted(d, c, np.array([50.0, math.nan, 80.0]), 0.1), d)  # a sample cost unknown
    assert np.array_equal(cost_adjusted(d, np.array([100.0, math.inf, 200.0]), s, 0.1), d)
    assert np.array_equal(cost_adjusted(d, c, np.zeros(3), 0.1), d)  # s̄ = 0: no k̂ to move
    assert np.array_equal(cost_adjusted(d, c, np.array([-10.0, 0.0, 10.0]), 0.1), d)  # s̄ = 0 again
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no mean of an empty slice
        assert len(cost_adjusted(np.array([]), np.array([]), np.array([]), 0.1)) == 0


def test_a_negative_slope_and_integer_input_by_hand():
    # c̄ = 300, s̄ = 100; IF_t = (c_t − 300)/100 − (300/100²)(s_t − 100):
    #   task 0: (200 − 300)/100 − 0.03·(80 − 100) = −1 + 0.6 = −0.4
    #   task 1: (400 − 300)/100 − 0.03·(120 − 100) = 1 − 0.6 = 0.4
    # h = −0.2: d' = d + 0.2·IF = (1 − 0.08, 0 + 0.08)
    got = cost_adjusted(np.array([1, 0]), np.array([200, 400]), np.array([80, 120]), -0.2)
    assert got == pytest.approx([0.92, 0.08], rel=1e-12)
    # one task: its cost is the mean, nothing moves
    assert cost_adjusted(np.array([0.3]), np.array([500.0]), np.array([90.0]), 0.1) == pytest.approx([0.3])


def test_costs_in_dollars_below_one_are_adjusted():
    # USD per sample is far below 1: s̄ = 0.001 must still move k̂ (only s̄ ≤ 0 has no k̂).
    # c̄ = 0.004, s̄ = 0.001, s_t = s̄: IF_t = (c_t − 0.004)/0.001 = (−1, +1); h = 0.1: d' = d − 0.1·IF
    got = cost_adjusted(np.array([0.5, 0.0]), np.array([0.003, 0.005]), np.array([0.001, 0.001]), 0.1)
    assert got == pytest.approx([0.6, -0.1], rel=1e-9)


def test_unknown_costs_given_as_none_and_integer_differences():
    # a cost read back as None (SQL NULL) is unknown, like NaN: no adjustment, no TypeError
    d = np.array([0.5, -0.5, 0.25])
    c, s = [100.0, 300.0, 200.0], [50.0, 50.0, 80.0]
    assert np.array_equal(cost_adjusted(d, [100.0, None, 200.0], s, 0.1), d)
    assert np.array_equal(cost_adjusted(d, c, [50.0, None, 80.0], 0.1), d)
    # 0/1 differences given as Python ints come back as floats, unchanged at slope 0
    out = cost_adjusted([1, 0, -1], c, s, 0.0)
    assert out.dtype == np.float64 and out.tolist() == [1.0, 0.0, -1.0]
