"""The verdict's "needs n" range and Holm's tie rule, by hand."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from masbench.harness.stats.decide import decide, need_text
from masbench.harness.stats.paired import holm, holm_tiebreak
from masbench.harness.stats.power import n_range


def test_needs_n_is_a_range_from_the_interval():
    zs = NormalDist().inv_cdf(1 - 0.01 / 2) + NormalDist().inv_cdf(0.8)
    # interval [0.02, 0.10], σ 0.4, level 0.01: the farther end 0.10 → the smallest n
    lo, hi = n_range((0.02, 0.10), 0.4, 0.01, 0.8)
    assert lo == math.ceil((zs * 0.4 / 0.10) ** 2) and hi == math.ceil((zs * 0.4 / 0.02) ** 2)
    assert n_range((-0.10, -0.02), 0.4, 0.01, 0.8) == (lo, hi)  # the same for a loss
    assert n_range((-0.01, 0.05), 0.4) is None  # holds 0: no n
    assert n_range((1e-7, 0.1), 0.4)[1] is None  # the near end needs > 10⁹ tasks: unbounded
    assert need_text(lo, 40, hi) == f"needs n \u2248 {lo}\u2013{hi} tasks (has 40)"
    assert need_text(97, 40, None, unbounded=True) == "needs n \u2265 97 tasks (has 40)"
    assert need_text(None, 40) == "no difference shown at n = 40"
    v, r = decide("within", 0.05, (-0.01, 0.12), 0.3, 0.05, lo, 40, 8, n_needed_hi=hi)
    assert (v, r) == ("inconclusive", f"needs n \u2248 {lo}\u2013{hi} tasks (has 40)")
    # the positional form another caller uses still works
    assert decide("within", 0.0, (-0.1, 0.1), 0.9, 0.05, None, 40, 8) == ("inconclusive",
                                                                          "no difference shown at n = 40")


def test_holm_ties_go_to_the_larger_t_then_the_label():
    ties = [holm_tiebreak(2.0, "b"), holm_tiebreak(5.0, "c"), holm_tiebreak(1.0, "a"), holm_tiebreak(5.0, "a")]
    adj, levels = holm([0.01, 0.01, 0.04, 0.01], 0.05, ties=ties)
    # ranks: index 3 (t 5, "a"), index 1 (t 5, "c"), index 0 (t 2), then index 2 (p 0.04)
    assert levels == pytest.approx([0.05 / 2, 0.05 / 3, 0.05, 0.05 / 4])
    assert adj == pytest.approx([0.04, 0.04, 0.04, 0.04])  # 4·0.01, 3·0.01 → 0.04 (running max), 2·0.01, 0.04
    # without tie keys: by position, as before
    assert holm([0.01, 0.01], 0.05)[1] == pytest.approx([0.025, 0.05])
    assert holm_tiebreak(float("nan"), "x") == (0.0, "x")
