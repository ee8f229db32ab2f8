"""The matched cost's delta-method adjustment, by hand."""

from __future__ import annotations

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
