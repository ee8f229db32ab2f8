"""``design_comparison`` (store/metrics.py) over hand-built rows, expectations worked by hand.

The curve is not monotone: k = 1..4 at 100, 200, 300, 400 tokens ($0.1 .. $0.4) reach accuracy
0.25, 0.5, 0.375, 0.5. Design ``d``: two cells, one right (accuracy 0.5), 200 tokens and $0.2 each.
"""

from __future__ import annotations

import pytest

CURVE = (0.25, 0.5, 0.375, 0.5)


@pytest.fixture
def con(view_db):
    c = view_db.make("design_comparison")
    view_db.insert(c, "cot_sc_curve", *[dict(run_id="r", axis="all", k=k, accuracy=CURVE[k - 1],
                                             ci_lo=CURVE[k - 1] - 0.1, ci_hi=CURVE[k - 1] + 0.1, tokens=100.0 * k,
                                             calls=float(k), cost_usd=0.1 * k, budget_spent=100.0 * k, n_tasks=2)
                                        for k in (1, 2, 3, 4)])
    view_db.insert(c, "results", *[dict(run_id="r", design="d", task_id=t, seed=0, source="src", correct=ok,
                                        status="ok", tokens=200, calls=2, cost_usd=0.2, budget_spent=200.0)
                                   for t, ok in (("t1", True), ("t2", False))])
    return c


def test_iso_accuracy_cost_is_where_the_curve_first_reaches_the_design(con, view_db) -> None:
    (r,) = view_db.rows(con, "SELECT * FROM design_comparison WHERE design = 'd' AND axis = 'all'")
    assert r["accuracy"] == 0.5
    # the curve first reaches 0.5 on its k = 1..2 segment: 100 + (0.5 - 0.25) * 100 / 0.25 = 200 tokens
    # (it reaches 0.5 again at k = 4, 400 tokens: the last crossing would give 200 / 400 = 0.5x)
    assert r["curve_tokens_at_acc"] == pytest.approx(200)
    assert r["iso_acc_cost_ratio_tokens"] == pytest.approx(1.0)
    assert r["curve_usd_at_acc"] == pytest.approx(0.2)
    assert r["iso_acc_cost_ratio_usd"] == pytest.approx(1.0)
    # iso-cost: at 200 tokens the curve is 0.5 (the end of segment 1..2), so no gap; its band 0.4 .. 0.6
    assert r["curve_acc_at_tokens"] == pytest.approx(0.5) and r["iso_gap_tokens"] == pytest.approx(0)
    assert (r["curve_ci_lo_at_tokens"], r["curve_ci_hi_at_tokens"]) == (pytest.approx(0.4), pytest.approx(0.6))
