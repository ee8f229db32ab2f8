"""The paired views (store/paired.py) over hand-built rows, every expected value worked by hand.

One run, three tasks (one seed each), group ``all`` and the source group ``src``. The CoT-SC curve
rises: k = 1, 2, 3 cost 100, 200, 300 tokens (1, 2, 3 calls; $0.1, $0.2, $0.3; budget 100, 200,
300) at accuracy 0.4, 0.8, 0.9; per cell maj@k is t1 0.5 / 1.0 / 1.0, t2 0.3 / 0.6 / 0.8,
t3 0.4 / 0.8 / 0.9 (their means are the curve). Design ``d``: t1 right, t2 wrong, t3 *failed*
(counted wrong, as the accuracy table does), each cell 150 tokens, 3 calls, $0.05, budget 400 —
so on tokens it falls between k = 1 and 2 (k = 1.5), on calls at k = 3 exactly, on USD below the
curve (compared at k = 1) and on budget beyond it (compared at k_max = 3). No ``cot`` design: the
CoT reference is each cell's maj@1. Design ``e`` (t1 wrong, t2 and t3 right) is only there to
pair with ``d``.
"""

from __future__ import annotations

import pytest

TASK_CURVE = {"t1": (0.5, 1.0, 1.0), "t2": (0.3, 0.6, 0.8), "t3": (0.4, 0.8, 0.9)}
CURVE = (0.4, 0.8, 0.9)
D = {"t1": True, "t2": False, "t3": None}
E = {"t1": False, "t2": True, "t3": True}


@pytest.fixture
def con(view_db):
    c = view_db.make("paired_summary", "design_pair_diffs")
    for axis in ("all", "src"):
        view_db.insert(c, "cot_sc_curve", *[dict(run_id="r", axis=axis, k=k, accuracy=CURVE[k - 1], tokens=100.0 * k,
                                                 calls=float(k), cost_usd=0.1 * k, budget_spent=100.0 * k, n_tasks=3)
                                            for k in (1, 2, 3)])
    for t, ys in TASK_CURVE.items():
        view_db.insert(c, "cot_sc_task_curve", *[dict(run_id="r", task_id=t, seed=0, k=k, accuracy=ys[k - 1],
                                                      tokens=100.0 * k, cost_usd=0.1 * k) for k in (1, 2, 3)])
        view_db.insert(c, "pool", dict(run_id="r", task_id=t, seed=0, sample_index=0, budget_spent=90.0),
                       dict(run_id="r", task_id=t, seed=0, sample_index=1, budget_spent=110.0))
        view_db.insert(c, "results", dict(run_id="r", design="d", task_id=t, seed=0, source="src", correct=D[t],
                                          status="failed" if D[t] is None else "ok", tokens=150, calls=3,
                                          cost_usd=0.05, budget_spent=400.0),
                       dict(run_id="r", design="e", task_id=t, seed=0, source="src", correct=E[t], status="ok",
                            tokens=100, calls=1, cost_usd=0.1, budget_spent=100.0))
    return c


def _cells(view_db, con, unit: str, axis: str = "all") -> dict[str, dict]:
    got = view_db.rows(con, "SELECT * FROM paired_diffs WHERE design = 'd' AND unit = ? AND axis = ?", [unit, axis])
    return {r["task_id"]: r for r in got}


def test_cost_between_two_k_is_read_from_the_interpolated_curve(con, view_db) -> None:
    # tokens: 150 lies halfway between k = 1 (100) and k = 2 (200): w = 0.5, k_match = 1.5, and each
    # cell's curve value is 0.5 * maj@1 + 0.5 * maj@2: t1 0.75, t2 0.45, t3 0.6 (not maj@1: 0.5, 0.3, 0.4)
    for axis in ("all", "src"):
        cells = _cells(view_db, con, "tokens", axis)
        assert sorted(cells) == ["t1", "t2", "t3"]
        want = {"t1": (1.0, 0.75, 0.5), "t2": (0.0, 0.45, 0.3), "t3": (0.0, 0.6, 0.4)}  # y, curve_y, cot_y
        for t, (y, cy, cot) in want.items():
            r = cells[t]
            assert (r["position"], r["k_match"], r["k_max"], r["seed"]) == ("within", 1.5, 3, 0)
            assert r["y"] == y and r["curve_y"] == pytest.approx(cy) and r["cot_y"] == pytest.approx(cot)
            assert r["diff"] == pytest.approx(y - cy)  # the rising curve: t1 +0.25, not +0.5
            assert r["diff_cot"] == pytest.approx(y - cot)
            assert r["cot_is_design"] is False
            # matched-cost inputs: the cell's cost, its k = 1 sample cost, c̄, s̄, and the segment's slope
            assert (r["cost"], r["sample_cost"], r["cost_mean"], r["sample_cost_mean"]) == (150, 100, 150, 100)
            assert r["slope"] == pytest.approx(0.8 - 0.4)


def test_cost_at_a_curve_point_below_and_beyond(con, view_db) -> None:
    # calls: 3 = the k = 3 point; the first segment holding it is k = 2..3, at w = (3 - 2) / (3 - 2) = 1
    calls = _cells(view_db, con, "calls")
    for t, ys in TASK_CURVE.items():
        r = calls[t]
        assert (r["position"], r["k_match"], r["curve_y"]) == ("within", 3.0, pytest.approx(ys[2]))
        assert (r["cost"], r["sample_cost"], r["cost_mean"], r["sample_cost_mean"]) == (3, 1, 3, 1)
        assert r["slope"] == pytest.approx(0.9 - 0.8)
    # usd: $0.05 < $0.1 (k = 1): below, compared at k = 1, no slope
    usd = _cells(view_db, con, "usd")
    for t, ys in TASK_CURVE.items():
        r = usd[t]
        assert (r["position"], r["k_match"], r["curve_y"], r["slope"]) == ("below", 1.0, pytest.approx(ys[0]), 0)
        assert (r["cost"], r["sample_cost"]) == (pytest.approx(0.05), pytest.approx(0.1))
        assert (r["cost_mean"], r["sample_cost_mean"]) == (pytest.approx(0.05), pytest.approx(0.1))
    # budget: 400 > 300 (k_max): beyond, compared at k = 3; the sample cost is the pool's mean (90 + 110) / 2
    budget = _cells(view_db, con, "budget")
    for t, ys in TASK_CURVE.items():
        r = budget[t]
        assert (r["position"], r["k_match"], r["curve_y"], r["slope"]) == ("beyond", 3.0, pytest.approx(ys[2]), 0)
        assert (r["cost"], r["sample_cost"], r["cost_mean"], r["sample_cost_mean"]) == (400, 100, 400, 100)


def test_failed_cells_are_kept_and_counted_wrong(con, view_db) -> None:
    (s,) = view_db.rows(con, "SELECT * FROM paired_summary WHERE design = 'd' AND unit = 'tokens' AND axis = 'all'")
    # diffs t1 +0.25, t2 -0.45, t3 -0.6 (the failed cell: y = 0); against CoT (maj@1) +0.5, -0.3, -0.4
    assert (s["n_tasks"], s["n_cells"], s["position"], s["k_match"], s["k_max"]) == (3, 3, "within", 1.5, 3)
    assert s["accuracy"] == pytest.approx(1 / 3)
    assert s["curve_accuracy"] == pytest.approx((0.75 + 0.45 + 0.6) / 3)  # 0.6 = the curve at 150 tokens
    assert s["mean_diff"] == pytest.approx((0.25 - 0.45 - 0.6) / 3)
    # sample SD: deviations from -0.2667 are 0.5167, -0.1833, -0.3333; (0.2669 + 0.0336 + 0.1111) / 2 = 0.2058
    assert s["sd_diff"] == pytest.approx(0.2058333 ** 0.5, rel=1e-5)
    assert s["mean_diff_cot"] == pytest.approx((0.5 - 0.3 - 0.4) / 3)
    # deviations from -0.0667: 0.5667, -0.2333, -0.3333; (0.3211 + 0.0544 + 0.1111) / 2 = 0.2433
    assert s["sd_diff_cot"] == pytest.approx(0.2433333 ** 0.5, rel=1e-5)
    groups = view_db.rows(con, "SELECT axis, n_tasks FROM paired_summary WHERE design = 'd' AND unit = 'tokens' "
                               "ORDER BY axis")
    assert groups == [{"axis": "all", "n_tasks": 3}, {"axis": "src", "n_tasks": 3}]


def test_task_diffs_average_a_task_s_cells(con, view_db) -> None:
    got = view_db.rows(con, "SELECT * FROM paired_task_diffs WHERE design = 'd' AND unit = 'tokens' AND axis = 'all' "
                            "ORDER BY task_id")
    assert [r["task_id"] for r in got] == ["t1", "t2", "t3"]
    t3 = got[2]  # the failed cell
    assert (t3["seeds"], t3["y"], t3["position"], t3["k_match"], t3["k_max"]) == (1, 0.0, "within", 1.5, 3)
    assert (t3["curve_y"], t3["diff"]) == (pytest.approx(0.6), pytest.approx(-0.6))
    assert (t3["cot_y"], t3["diff_cot"]) == (pytest.approx(0.4), pytest.approx(-0.4))
    assert (t3["cost"], t3["sample_cost"], t3["cost_mean"], t3["sample_cost_mean"]) == (150, 100, 150, 100)
    assert (t3["cot_is_design"], t3["slope"]) == (False, pytest.approx(0.4))


def test_design_pairs_on_the_same_cells(con, view_db) -> None:
    got = view_db.rows(con, "SELECT * FROM design_pair_diffs WHERE axis = 'all' ORDER BY design_a, task_id")
    d_e = [(r["design_a"], r["design_b"], r["task_id"], r["seed"], r["y_a"], r["y_b"], r["diff"]) for r in got]
    assert d_e == [("d", "e", "t1", 0, 1.0, 0.0, 1.0), ("d", "e", "t2", 0, 0.0, 1.0, -1.0),
                   ("d", "e", "t3", 0, 0.0, 1.0, -1.0),  # the failed cell of d: wrong
                   ("e", "d", "t1", 0, 0.0, 1.0, -1.0), ("e", "d", "t2", 0, 1.0, 0.0, 1.0),
                   ("e", "d", "t3", 0, 1.0, 0.0, 1.0)]
    assert {r["run_id"] for r in got} == {"r"}
    assert view_db.rows(con, "SELECT count(*) AS n FROM design_pair_diffs WHERE axis = 'src'") == [{"n": 6}]


def test_summary_counts_tasks_and_cells_apart(view_db) -> None:
    # one task, two seeds, a two-point curve: n_tasks 1, n_cells 2, k_max 2; the design's 100 tokens are
    # the k = 1 point (w = 0): curve_y 0.5 on both cells; y = 1, 0 -> the task's y 0.5, diff 0
    con = view_db.make("paired_summary")
    view_db.insert(con, "cot_sc_curve", *[dict(run_id="r", axis=a, k=k, accuracy=0.5 * k, tokens=100.0 * k,
                                               calls=float(k), cost_usd=0.1 * k, budget_spent=100.0 * k)
                                          for a in ("all", "src") for k in (1, 2)])
    for seed, ok in ((0, True), (1, False)):
        view_db.insert(con, "cot_sc_task_curve", *[dict(run_id="r", task_id="t1", seed=seed, k=k, accuracy=0.5 * k,
                                                        tokens=100.0 * k, cost_usd=0.1 * k) for k in (1, 2)])
        view_db.insert(con, "results", dict(run_id="r", design="d", task_id="t1", seed=seed, source="src", correct=ok,
                                            status="ok", tokens=100, calls=1, cost_usd=0.1, budget_spent=100.0))
    (t,) = view_db.rows(con, "SELECT * FROM paired_task_diffs WHERE unit = 'tokens' AND axis = 'all'")
    assert (t["seeds"], t["y"], t["curve_y"], t["diff"], t["k_match"], t["k_max"]) == (2, 0.5, 0.5, 0.0, 1.0, 2)
    (s,) = view_db.rows(con, "SELECT * FROM paired_summary WHERE unit = 'tokens' AND axis = 'all'")
    assert (s["n_tasks"], s["n_cells"], s["k_max"], s["k_match"], s["accuracy"]) == (1, 2, 2, 1.0, 0.5)


def test_design_pairs_match_run_group_task_and_seed(view_db) -> None:
    # run r: designs a and b on t1 (seeds 0 and 1; axis depth = 2, source src), a alone on t2;
    # run r2: a and b on t1 seed 0. Pairs only on the same run, group, task and seed; t2 has no pair.
    con = view_db.make("design_pair_diffs")
    cell = dict(task_id="t1", source="src", axis="depth", axis_value=2, status="ok", tokens=100, calls=1)
    view_db.insert(con, "results",
                   cell | dict(run_id="r", design="a", seed=0, correct=True),
                   cell | dict(run_id="r", design="a", seed=1, correct=False),
                   cell | dict(run_id="r", design="b", seed=0, correct=False),
                   cell | dict(run_id="r", design="b", seed=1, correct=False),
                   cell | dict(run_id="r", design="a", seed=0, task_id="t2", correct=True),
                   cell | dict(run_id="r2", design="a", seed=0, correct=False),
                   cell | dict(run_id="r2", design="b", seed=0, correct=True))
    got = view_db.rows(con, "SELECT * FROM design_pair_diffs ORDER BY run_id, axis, design_a, seed")
    key = [(r["run_id"], r["axis"], r["axis_value"], r["design_a"], r["design_b"], r["task_id"], r["seed"],
            r["y_a"], r["y_b"], r["diff"]) for r in got]
    want = []
    for axis, value in (("all", None), ("depth", 2)):
        want += [("r", axis, value, "a", "b", "t1", 0, 1.0, 0.0, 1.0), ("r", axis, value, "a", "b", "t1", 1, 0.0, 0.0, 0.0),
                 ("r", axis, value, "b", "a", "t1", 0, 0.0, 1.0, -1.0), ("r", axis, value, "b", "a", "t1", 1, 0.0, 0.0, 0.0)]
    for axis, value in (("all", None), ("depth", 2)):
        want += [("r2", axis, value, "a", "b", "t1", 0, 0.0, 1.0, -1.0), ("r2", axis, value, "b", "a", "t1", 0, 1.0, 0.0, 1.0)]
    assert key == want


# Two runs, two groups, a `cot` design, two seeds of a task. Run r: group `all` has a three-point
# curve (tokens 100/200/300, calls 1/2/3, $0.1/0.2/0.3, budget 100/200/300; accuracy 0.4/0.6/0.8),
# group `ax` (the results' axis; their source `src` is not the group) a two-point one (200/400,
# 2/4, $0.2/0.4, 200/400; 0.3/0.7). Design d's cells cost 150 tokens, 2 calls, $0.25, budget 250.
# Run q: the same task ids and seeds, a one-point `all` curve (100 tokens, 1 call, $0, budget 50;
# 0.5) and no `ax` curve, no cot, a cell (t9) with no per-cell curve; d's cells cost 100, 1, $0, 50.
# Run p: only per-cell curves on r's cells.
TC = {("r", "t1", 0): (0.5, 0.7, 0.9), ("r", "t1", 1): (0.25, 0.5, 0.75), ("r", "t2", 0): (0.45, 0.6, 0.75),
      ("q", "t1", 0): (0.2,), ("q", "t1", 1): (0.6,)}
POOL = {("r", "t1", 0): (80.0, 120.0), ("r", "t1", 1): (60.0,), ("r", "t2", 0): (140.0,), ("q", "t1", 0): (50.0,),
        ("q", "t1", 1): (50.0,)}
D_Y = {("r", "t1", 0): True, ("r", "t1", 1): False, ("r", "t2", 0): True, ("q", "t1", 0): False,
       ("q", "t1", 1): True, ("q", "t9", 0): True}
COT_Y = {("r", "t1", 0): True, ("r", "t1", 1): None, ("r", "t2", 0): False}  # (t1, 1) failed: wrong
D_COST = {"r": (150, 2, 0.25, 250.0), "q": (100, 1, 0.0, 50.0)}  # tokens, calls, usd, budget
# (run, group, unit) -> position, k_lo, w, k_max, slope, s̄ (the curve's k = 1 cost), worked by hand:
# r all: tokens 150 in 100..200 (w 0.5); calls 2 in 1..2, the first segment holding it (w (2-1)/(2-1) = 1);
#        $0.25 in 0.2..0.3 (w 0.5); budget 250 in 200..300 (w 0.5); slopes 0.6 - 0.4 and 0.8 - 0.6
# r ax:  tokens 150 < 200: below (k 1, w 0, no slope); calls 2 = the k = 1 point (w 0, slope 0.7 - 0.3);
#        $0.25 in 0.2..0.4 (w 0.25); budget 250 in 200..400 (w 0.25)
# q all: every cost is the one point (w 0, no next point so no slope); usd: the curve cost $0, not matched
MATCH = {("r", "all", "tokens"): ("within", 1, 0.5, 3, 0.2, 100),
         ("r", "all", "calls"): ("within", 1, 1.0, 3, 0.2, 1),
         ("r", "all", "usd"): ("within", 2, 0.5, 3, 0.2, 0.1), ("r", "all", "budget"): ("within", 2, 0.5, 3, 0.2, 100),
         ("r", "ax", "tokens"): ("below", 1, 0.0, 2, 0.0, 200), ("r", "ax", "calls"): ("within", 1, 0.0, 2, 0.4, 2),
         ("r", "ax", "usd"): ("within", 1, 0.25, 2, 0.4, 0.2), ("r", "ax", "budget"): ("within", 1, 0.25, 2, 0.4, 200),
         ("q", "all", "tokens"): ("within", 1, 0.0, 1, 0.0, 100), ("q", "all", "calls"): ("within", 1, 0.0, 1, 0.0, 1),
         ("q", "all", "budget"): ("within", 1, 0.0, 1, 0.0, 50)}
UNIT_I = {"tokens": 0, "calls": 1, "usd": 2, "budget": 3}


def test_runs_groups_seeds_and_the_cot_design_are_kept_apart(view_db) -> None:
    con = view_db.make("paired_diffs")
    curves = {("r", "all"): [(100, 1, 0.1, 100, 0.4), (200, 2, 0.2, 200, 0.6), (300, 3, 0.3, 300, 0.8)],
              ("r", "ax"): [(200, 2, 0.2, 200, 0.3), (400, 4, 0.4, 400, 0.7)], ("q", "all"): [(100, 1, 0.0, 50, 0.5)]}
    for (run, axis), pts in curves.items():
        view_db.insert(con, "cot_sc_curve", *[dict(run_id=run, axis=axis, k=k, tokens=float(t), calls=float(n),
                                                   cost_usd=u, budget_spent=float(b), accuracy=a)
                                              for k, (t, n, u, b, a) in enumerate(pts, 1)])
    # a third run p has per-cell curves on r's cells (k = 1..3) and nothing else: no rows of its own, none joined to r's
    for (run, task, seed), ys in TC.items() | {(("p", t, s), (0.0, 0.1, 0.2)) for (rr, t, s) in TC if rr == "r"}:
        usd = 0.1 if run == "r" else 0.0
        view_db.insert(con, "cot_sc_task_curve", *[dict(run_id=run, task_id=task, seed=seed, k=k, accuracy=y,
                                                        tokens=100.0 * k, cost_usd=usd * k)
                                                   for k, y in enumerate(ys, 1)])
    for (run, task, seed), bs in POOL.items():
        view_db.insert(con, "pool", *[dict(run_id=run, task_id=task, seed=seed, sample_index=i, budget_spent=b)
                                      for i, b in enumerate(bs)])
    for design, ys in (("d", D_Y), ("cot", COT_Y)):
        for (run, task, seed), y in ys.items():
            t, n, u, b = D_COST[run] if design == "d" else (100, 1, 0.1, 100.0)
            view_db.insert(con, "results", dict(run_id=run, design=design, task_id=task, seed=seed, axis="ax",
                                                source="src", correct=y, status="failed" if y is None else "ok",
                                                tokens=t, calls=n, cost_usd=u, budget_spent=b))
    got = {(r["run_id"], r["axis"], r["unit"], r["task_id"], r["seed"]): r
           for r in view_db.rows(con, "SELECT * FROM paired_diffs WHERE design = 'd'")}
    want_keys = {(run, axis, unit, task, seed) for (run, axis, unit) in MATCH for (rr, task, seed) in TC if rr == run}
    assert len(got) == len(want_keys) == 3 * 4 * 2 + 2 * 3  # no t9 (no per-cell curve), no q/ax, no q/usd
    assert set(got) == want_keys
    for (run, axis, unit, task, seed), r in got.items():
        pos, k_lo, w, k_max, slope, s_bar = MATCH[run, axis, unit]
        tc = TC[run, task, seed]
        curve = (1 - w) * tc[k_lo - 1] + w * (tc[k_lo] if k_lo < len(tc) else tc[k_lo - 1])
        y = 1.0 if D_Y[run, task, seed] else 0.0
        cot = (1.0 if COT_Y[run, task, seed] else 0.0) if run == "r" else tc[0]  # q ran no cot: maj@1
        cost = D_COST[run][UNIT_I[unit]]
        pool = POOL[run, task, seed]
        sample = {"tokens": 100, "calls": 1, "usd": 0.1, "budget": sum(pool) / len(pool)}
        key = (run, axis, unit, task, seed)
        assert (r["position"], r["k_max"], r["axis_value"]) == (pos, k_max, None), key
        assert r["k_match"] == pytest.approx(k_lo + w), key
        assert (r["y"], r["curve_y"], r["diff"]) == (y, pytest.approx(curve), pytest.approx(y - curve)), key
        assert (r["cot_y"], r["diff_cot"], r["cot_is_design"]) == (pytest.approx(cot), pytest.approx(y - cot),
                                                                   run == "r"), key
        assert (r["cost"], r["cost_mean"]) == (pytest.approx(cost), pytest.approx(cost)), key
        assert r["sample_cost"] == pytest.approx(sample[unit]), key
        assert (r["sample_cost_mean"], r["slope"]) == (pytest.approx(s_bar), pytest.approx(slope)), key
