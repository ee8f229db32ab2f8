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


# The verdict table of the module docstring, cell by cell, with the exact reason a reader sees.
# Significant = Holm p < α *and* the Holm-level interval excludes 0 on that side.
UP, DOWN, NONE = (0.02, 0.2), (-0.2, -0.02), (-0.05, 0.1)
NEED = "needs n \u2248 97\u2013781 tasks (has 40)"


@pytest.mark.parametrize(("position", "ci", "p", "want"), [
    ("within", UP, 0.01, ("worth it", "significantly better than CoT-SC at equal cost")),
    ("within", DOWN, 0.01, ("not worth it", "significantly worse than CoT-SC at equal cost")),
    ("within", NONE, 0.4, ("inconclusive", NEED)),
    ("below", UP, 0.01, ("worth it", "cheaper than one CoT sample and significantly better")),
    ("below", DOWN, 0.01, ("inconclusive",
                           "cheaper than one CoT sample but significantly less accurate: a trade-off")),
    ("below", NONE, 0.4, ("inconclusive", NEED)),
    ("beyond", UP, 0.01, ("inconclusive", "better than CoT-SC@8 but costs more: raise k_max")),
    ("beyond", DOWN, 0.01, ("not worth it", "significantly worse than CoT-SC@8, which is cheaper")),
    ("beyond", NONE, 0.4, ("not shown worth it", "costs more than CoT-SC@8")),
])
def test_every_cell_of_the_verdict_table(position, ci, p, want):
    assert decide(position, 0.0, ci, p, 0.05, 97, 40, 8, n_needed_hi=781) == want


@pytest.mark.parametrize("position", ["within", "below", "beyond"])
def test_significance_needs_both_the_holm_p_and_the_interval(position):
    none = decide(position, 0.0, NONE, 0.4, 0.05, 97, 40, 8, n_needed_hi=781)
    for ci in (UP, DOWN):
        # p exactly at α is not below it; a p above α with an interval that excludes 0 is not
        # significant either (the two must agree)
        assert decide(position, 0.0, ci, 0.05, 0.05, 97, 40, 8, n_needed_hi=781) == none
        assert decide(position, 0.0, ci, 0.3, 0.05, 97, 40, 8, n_needed_hi=781) == none
    # a small p with an interval that touches 0 (at either end) or holds it is not significant
    for ci in ((0.0, 0.2), (-0.2, 0.0), (-0.01, 0.2), (-0.2, 0.01)):
        assert decide(position, 0.0, ci, 0.001, 0.05, 97, 40, 8, n_needed_hi=781) == none, ci
    # α is the one given: p 0.02 is significant at α = 0.05, not at α = 0.01
    assert decide(position, 0.0, UP, 0.02, 0.01, 97, 40, 8, n_needed_hi=781) == none
    assert decide(position, 0.0, UP, 0.02, 0.05, 97, 40, 8, n_needed_hi=781) != none


def test_the_reason_carries_k_max_and_the_counts():
    assert decide("beyond", 0.0, UP, 0.01, 0.05, None, 12, 16)[1] == "better than CoT-SC@16 but costs more: raise k_max"
    assert decide("beyond", 0.0, DOWN, 0.01, 0.05, None, 12, 3)[1] == "significantly worse than CoT-SC@3, which is cheaper"
    assert decide("beyond", 0.0, NONE, 0.5, 0.05, None, 12, 5)[1] == "costs more than CoT-SC@5"
    # the needs-n forms: one number (no upper end, or both ends equal), unbounded, none
    assert decide("within", 0.0, NONE, 0.5, 0.05, 97, 12, 8) == ("inconclusive", "needs n \u2248 97 tasks (has 12)")
    assert decide("below", 0.0, NONE, 0.5, 0.05, 97, 12, 8, n_needed_hi=97)[1] == "needs n \u2248 97 tasks (has 12)"
    assert decide("within", 0.0, NONE, 0.5, 0.05, 97, 12, 8, unbounded=True)[1] == "needs n \u2265 97 tasks (has 12)"
    assert decide("below", 0.0, NONE, 0.5, 0.05, None, 12, 8)[1] == "no difference shown at n = 12"


def test_need_text_forms():
    assert need_text(97, 40) == "needs n \u2248 97 tasks (has 40)"  # not unbounded by default
    assert need_text(97, 40, 97) == "needs n \u2248 97 tasks (has 40)"
    assert need_text(97, 40, 98) == "needs n \u2248 97\u201398 tasks (has 40)"
    assert need_text(97, 40, 781, unbounded=True) == "needs n \u2265 97 tasks (has 40)"
    assert need_text(0, 40, 5) == "no difference shown at n = 40"  # 0 tasks is no n
    assert need_text(None, 7, None, unbounded=True) == "no difference shown at n = 7"
