"""``design_metrics`` (store/metrics.py) over hand-built ``results`` rows, expectations by hand:
the status counts, the NULL-is-wrong rule, the budget basis default, the simulated flag, and the
effective n of the clustered interval — each (run, design) clustered over its own tasks only.

Run ``r``: design ``a`` on 10 tasks, one seed each: 4 right, one ``budget_exhausted``, two
``degraded``, three ``failed`` (their ``correct`` NULL: wrong); simulated on one row; basis ``usd``.
Design ``b`` (same run, same tasks) and run ``r2``'s ``a`` and ``b`` have other data on the same
task ids.
"""

from __future__ import annotations

import pytest

STATUS = ["ok"] * 4 + ["budget_exhausted"] + ["degraded"] * 2 + ["failed"] * 3
CORRECT = [True, True, True, True, False, False, True, None, None, None]  # 5 right of 10 (the 4 ok and a degraded)


def _a_rows() -> list[dict]:
    return [dict(run_id="r", design="a", task_id=f"t{i}", seed=0, source="src", correct=CORRECT[i], status=STATUS[i],
                 tokens=100 + i, calls=1 + i % 2, cost_usd=0.01 * i, simulated=(i == 3), budget_basis="usd",
                 budget_spent=float(i)) for i in range(10)]


@pytest.fixture
def con(view_db):
    c = view_db.make("design_metrics")
    view_db.insert(c, "results", *_a_rows())
    # b: the same tasks, 3 seeds each, every cell right on t0..t4 and wrong on t5..t9; no basis given
    view_db.insert(c, "results", *[dict(run_id="r", design="b", task_id=f"t{i}", seed=s, source="src",
                                        correct=i < 5, status="ok", tokens=10, calls=1, cost_usd=0.0, simulated=False)
                                   for i in range(10) for s in range(3)])
    # r2's a: one seed on 5 tasks, 2 right
    view_db.insert(c, "results", *[dict(run_id="r2", design="a", task_id=f"t{i}", seed=0, source="src",
                                        correct=i < 2, status="ok", tokens=1, calls=1, cost_usd=0.0)
                                   for i in range(5)])
    # r2's b: 3 tasks x 2 seeds: t0 right then NULL (failed), t1 right twice, t2 wrong twice
    r2b = {("t0", 0): True, ("t0", 1): None, ("t1", 0): True, ("t1", 1): True, ("t2", 0): False, ("t2", 1): False}
    view_db.insert(c, "results", *[dict(run_id="r2", design="b", task_id=t, seed=s, source="src", correct=y,
                                        status="ok" if y is not None else "failed", tokens=1, calls=1, cost_usd=0.0)
                                   for (t, s), y in r2b.items()])
    return c


def _row(view_db, con, run: str, design: str) -> dict:
    (r,) = view_db.rows(con, "SELECT * FROM design_metrics WHERE run_id = ? AND design = ? AND axis = 'all'",
                        [run, design])
    return r


def test_status_counts_null_as_wrong_basis_and_simulated(con, view_db) -> None:
    a = _row(view_db, con, "r", "a")
    assert (a["n"], a["n_budget_exhausted"], a["n_degraded"], a["n_failed"]) == (10, 1, 2, 3)
    assert a["accuracy"] == pytest.approx(0.5)  # 5 right; the 3 NULLs count as wrong
    assert a["simulated"] is True and a["budget_basis"] == "usd"
    assert a["tokens"] == pytest.approx(104.5) and a["calls"] == pytest.approx(1.5)
    assert a["budget_spent"] == pytest.approx(4.5)
    b = _row(view_db, con, "r", "b")
    assert (b["n_budget_exhausted"], b["n_degraded"], b["n_failed"]) == (0, 0, 0)
    assert b["simulated"] is False and b["budget_basis"] == "tokens"  # no basis written: tokens


def test_effective_n_is_clustered_per_run_and_design(con, view_db) -> None:
    # a, one seed per task: the plain Wilson n, exactly 10 (the clustered formula would give 10 up to rounding)
    a = _row(view_db, con, "r", "a")
    assert a["n_eff"] == 10
    # b: 3 identical seeds per task, so the 30 cells carry the information of its 10 tasks:
    # v = sum over tasks (3 y - 3 * 0.5)^2 / 30^2 = 10 * 2.25 / 900 = 0.025; n_eff = 0.25 / 0.025 = 10
    b = _row(view_db, con, "r", "b")
    assert (b["n"], b["accuracy"]) == (30, 0.5)
    assert b["n_eff"] == pytest.approx(10)
    # r2's a: 5 tasks, one seed, 2 right: exactly 5 (the formula gives 4.999999999999999 in floating point)
    r2 = _row(view_db, con, "r2", "a")
    assert (r2["n"], r2["accuracy"], r2["n_eff"]) == (5, 0.4, 5)
    # r2's b: p = 3/6 (the NULL is wrong in the clusters too: t0's sum is 1), v = ((1 - 1)^2 + (2 - 1)^2 +
    # (0 - 1)^2) / 6^2 = 2/36, n_eff = 0.25 / (2/36) = 4.5
    r2b = _row(view_db, con, "r2", "b")
    assert (r2b["n"], r2b["accuracy"], r2b["n_failed"]) == (6, 0.5, 1)
    assert r2b["n_eff"] == pytest.approx(4.5)
