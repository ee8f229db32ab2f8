"""``design_comparison`` (store/metrics.py) column by column over hand-built rows, every expected
value worked by hand below (Pareto in the groups by a brute-force check over the same rows).

Run ``r``: eight tasks t0..t7, one seed; t0..t2 in group (depth, 1), t3..t5 in (depth, 2), t6..t7 in
(width, 1). Its whole-run curve (``MAIN``, axis 'all') has k = 1..6 and is not monotone; its costs
in the four units are not proportional, so a design lands in a different segment per unit:

    k   tokens  calls  usd    budget  acc    lo    hi
    1   100     1      0.010  50      0.25   0.15  0.40
    2   200     2      0.030  150     0.50   0.38  0.66
    3   300     4      0.040  200     0.375  0.26  0.52
    4   400     5      0.080  300     0.875  0.76  0.96
    5   500     7      0.090  350     0.80   0.68  0.90
    6   600     8      0.120  500     0.85   0.74  0.93

The designs (each cell of a design has the same cost, except the calls of ``mid`` (2, 3, 2, 3, ...)
and ``below`` (1, 2, 1, 2, ...)):

    design      tokens calls usd    budget  right of 8   accuracy
    cot         120    1     0.012  80      t0 t3        0.25
    mid         250    2.5   0.070  325     t0 t1 t3 t4 t6   0.625
    dup_mid     260    3     0.075  330     t1 t2 t4 t5 t7   0.625
    knot        400    1     0.030  500     t2 t5 t6     0.375
    below       80     1.5   0.005  40      t7           0.125
    beyond      700    9     0.100  600     all          1.0
    twin1       150    2     0.026  120     t0 t1 t3 t4  0.5
    twin2       150    3     0.028  110     t2 t5 t6 t7  0.5
    worse_twin  150    2     0.022  105     t0 t3 t6     0.375
    k1tie       100    1     0.020  75      t1 t4        0.25
    fail        30     1     0.003  20      none (every cell failed, correct NULL)   0.0

Decoy curves that a row must never read: (r, ghost, NULL), (r2, all, NULL) (r2 has no results),
(r, depth, 1) and (r, width, 1) — flat, from cost 0, at accuracies 0.99, 0.98, 0.90..0.95, 0.70 —
and (r, depth, 2), costlier than every design (1000 tokens at k = 1), k = 1..4 only.

Other runs: ``n`` (no ``cot`` design: the reference is the curve at k = 1, per cell from
``cot_sc_task_curve``; k = 1..4, so no CoT-SC@5), ``z`` (a free model: every USD cost 0), ``one``
(a one-point curve, k_max = 1).
"""

from __future__ import annotations

import math

import pytest

TASKS = [f"t{i}" for i in range(8)]
GROUP = {t: (("depth", 1) if i < 3 else ("depth", 2) if i < 6 else ("width", 1)) for i, t in enumerate(TASKS)}
UNITS = ("tokens", "calls", "cost_usd", "budget_spent")

MAIN = {  # k: (tokens, calls, usd, budget, acc, lo, hi)
    1: (100, 1, 0.010, 50, 0.25, 0.15, 0.40),
    2: (200, 2, 0.030, 150, 0.50, 0.38, 0.66),
    3: (300, 4, 0.040, 200, 0.375, 0.26, 0.52),
    4: (400, 5, 0.080, 300, 0.875, 0.76, 0.96),
    5: (500, 7, 0.090, 350, 0.80, 0.68, 0.90),
    6: (600, 8, 0.120, 500, 0.85, 0.74, 0.93),
}

# design: (tokens, calls per cell, usd, budget, right tasks, failed)
DESIGNS = {
    "cot": (120, [1] * 8, 0.012, 80, "t0 t3"),
    "mid": (250, [2, 3] * 4, 0.070, 325, "t0 t1 t3 t4 t6"),
    "dup_mid": (260, [3] * 8, 0.075, 330, "t1 t2 t4 t5 t7"),
    "knot": (400, [1] * 8, 0.030, 500, "t2 t5 t6"),
    "below": (80, [1, 2] * 4, 0.005, 40, "t7"),
    "beyond": (700, [9] * 8, 0.100, 600, " ".join(TASKS)),
    "twin1": (150, [2] * 8, 0.026, 120, "t0 t1 t3 t4"),
    "twin2": (150, [3] * 8, 0.028, 110, "t2 t5 t6 t7"),
    "worse_twin": (150, [2] * 8, 0.022, 105, "t0 t3 t6"),
    "k1tie": (100, [1] * 8, 0.020, 75, "t1 t4"),
    "fail": (30, [1] * 8, 0.003, 20, None),
}


def _flat(run: str, axis: str, value: int | None, acc: list[float], step: float, lo: float, hi: float) -> list[dict]:
    """A decoy curve from cost 0 in every unit, ``step`` apart."""
    return [dict(run_id=run, axis=axis, axis_value=value, k=k, accuracy=a, ci_lo=lo, ci_hi=hi, tokens=step * (k - 1),
                 calls=step * (k - 1), cost_usd=step * (k - 1), budget_spent=step * (k - 1), n_tasks=8)
            for k, a in enumerate(acc, start=1)]


def _curves() -> list[dict]:
    rows = [dict(run_id="r", axis="all", axis_value=None, k=k, tokens=float(t), calls=float(c), cost_usd=u,
                 budget_spent=float(b), accuracy=a, ci_lo=lo, ci_hi=hi, n_tasks=8)
            for k, (t, c, u, b, a, lo, hi) in MAIN.items()]
    rows += _flat("r", "ghost", None, [0.99] * 5, 1e6, 0.97, 1.0)
    rows += _flat("r2", "all", None, [0.98] * 5, 1e6, 0.96, 1.0)
    rows += _flat("r", "depth", 1, [0.90, 0.90, 0.95, 0.95, 0.95], 1e6, 0.85, 0.97)
    rows += _flat("r", "width", 1, [0.70] * 5, 1e6, 0.60, 0.80)
    rows += [dict(run_id="r", axis="depth", axis_value=2, k=k, accuracy=0.1 + 0.1 * k, ci_lo=0.1 * k,
                  ci_hi=0.2 + 0.1 * k, tokens=1000.0 * k, calls=100.0 * k, cost_usd=10.0 * k,
                  budget_spent=1000.0 * k, n_tasks=3) for k in (1, 2, 3, 4)]
    return rows


def _results() -> list[dict]:
    rows = []
    for d, (tok, calls, usd, budget, right) in DESIGNS.items():
        for i, t in enumerate(TASKS):
            axis, value = GROUP[t]
            rows.append(dict(run_id="r", design=d, task_id=t, seed=0, source="src", axis=axis, axis_value=value,
                             correct=None if right is None else t in right.split(),
                             status="failed" if right is None else "ok", tokens=tok, calls=calls[i], cost_usd=usd,
                             budget_spent=float(budget)))
    return rows


@pytest.fixture(scope="module")
def con(view_db_module):
    """Run r's rows, once for the module (the tests only read them)."""
    db = view_db_module
    c = db.make("design_comparison")
    db.insert(c, "cot_sc_curve", *_curves())
    db.insert(c, "results", *_results())
    # r's per-cell curve at k = 1 and 2: never read while r has its cot design (the reference is cot's cell)
    db.insert(c, "cot_sc_task_curve", *[dict(run_id="r", task_id=t, seed=0, k=k, accuracy=0.5, tokens=100.0 * k,
                                             cost_usd=0.01 * k) for t in TASKS for k in (1, 2)])
    return c


@pytest.fixture(scope="module")
def rr(con, view_db_module):
    """Run r's design_comparison rows by (axis, axis_value), each read once for the module."""
    cache: dict[tuple, dict[str, dict]] = {}

    def get(axis: str = "all", value: int | None = None) -> dict[str, dict]:
        if (axis, value) not in cache:
            cache[(axis, value)] = _rows(view_db_module, con, "r", axis, value)
        return cache[(axis, value)]
    return get


def _rows(view_db, con, run: str, axis: str = "all", value: int | None = None) -> dict[str, dict]:
    rows = view_db.rows(con, "SELECT * FROM design_comparison WHERE run_id = ? AND axis = ? "
                             "AND axis_value IS NOT DISTINCT FROM ?", [run, axis, value])
    out = {r["design"]: r for r in rows}
    assert len(out) == len(rows), "one row per design and group"
    return out


def _check(row: dict, want: dict) -> None:
    for col, v in want.items():
        got = row[col]
        if v is None or isinstance(v, (bool, str)):
            assert got == v if v is not None else got is None, (row["design"], col, got, v)
        else:
            assert got == pytest.approx(v, abs=1e-9), (row["design"], col, got, v)


# ----- run r, the whole run ---------------------------------------------------------------------

# Interpolated on MAIN at the design's cost, y = y1 + (y2 - y1) (c - x1) / (x2 - x1), per unit:
CURVE_AT = {
    # cot 120 tok: k1..2, .25 + .25 * .2 = .30 (lo .15 + .23 * .2 = .196, hi .40 + .26 * .2 = .452);
    # 1 call: on k = 1, .25; $.012: k1..2, .25 + .25 * .002/.02 = .275; budget 80: k1..2, .25 + .25 * .3 = .325
    "cot": (0.30, 0.25, 0.275, 0.325, 0.196, 0.452),
    # mid 250 tok: k2..3, .5 - .125 * .5 = .4375 (lo .38 - .12 * .5 = .32, hi .66 - .14 * .5 = .59);
    # 2.5 calls: k2..3 (2 -> 4), .5 - .125 * .25 = .46875; $.07: k3..4, .375 + .5 * .03/.04 = .75;
    # budget 325: k4..5, .875 - .075 * .5 = .8375
    "mid": (0.4375, 0.46875, 0.75, 0.8375, 0.32, 0.59),
    # dup_mid 260: .5 - .125 * .6 = .425 (lo .38 - .12 * .6 = .308, hi .66 - .14 * .6 = .576); 3 calls: .5 - .125 * .5
    # = .4375; $.075: .375 + .5 * .035/.04 = .8125; budget 330: .875 - .075 * .6 = .83
    "dup_mid": (0.425, 0.4375, 0.8125, 0.83, 0.308, 0.576),
    # knot: every cost on a knot: 400 tok = k4 (.875, band .76 .. .96); 1 call = k1 (.25); $.03 = k2 (.5);
    # budget 500 = k6, the last point (.85)
    "knot": (0.875, 0.25, 0.5, 0.85, 0.76, 0.96),
    # below: 80 tok, $.005 and budget 40 are under k = 1: NULL; 1.5 calls: k1..2, .25 + .25 * .5 = .375
    "below": (None, 0.375, None, None, None, None),
    # beyond: 700 tok, 9 calls and budget 600 past k = 6: NULL; $.10: k5..6, .8 + .05 * .01/.03 = .81667
    "beyond": (None, None, 0.8 + 0.05 / 3, None, None, None),
    # twin1 150 tok: k1..2 at half way, .375 (lo .265, hi .53); 2 calls = k2, .5; $.026: .25 + .25 * .8 = .45;
    # budget 120: .25 + .25 * .7 = .425
    "twin1": (0.375, 0.5, 0.45, 0.425, 0.265, 0.53),
    # twin2: 150 tok as twin1; 3 calls: .4375; $.028: .25 + .25 * .9 = .475; budget 110: .25 + .25 * .6 = .4
    "twin2": (0.375, 0.4375, 0.475, 0.4, 0.265, 0.53),
    # worse_twin: 150 tok; 2 calls .5; $.022: .25 + .25 * .6 = .4; budget 105: .25 + .25 * .55 = .3875
    "worse_twin": (0.375, 0.5, 0.4, 0.3875, 0.265, 0.53),
    # k1tie: 100 tok and 1 call exactly at k = 1 (.25, band .15 .. .40); $.02: .375; budget 75: .3125
    "k1tie": (0.25, 0.25, 0.375, 0.3125, 0.15, 0.40),
    # fail: 30 tok, $.003, budget 20 under k = 1; 1 call = k1, .25
    "fail": (None, 0.25, None, None, None, None),
}

# Iso-accuracy: the cost where MAIN first reaches the design's accuracy (y1 >= acc: the segment's
# start; else y1 < acc <= y2: interpolated), and the design's cost over it.
ISO_ACC = {
    "cot": (100, 0.01),        # .25: k = 1 already has it
    "k1tie": (100, 0.01),
    "below": (100, 0.01),      # .125 <= .25
    "fail": (100, 0.01),       # 0
    # .625: k1..2 (.25 -> .5) and k2..3 (.5 -> .375) never; k3..4 (.375 -> .875): 300 + 100 * .25/.5 = 350,
    # $.04 + .04 * .5 = $.06 (the last point reaching it, k = 6, would give 600)
    "mid": (350, 0.06),
    "dup_mid": (350, 0.06),
    # .375: k1..2: 100 + 100 * .125/.25 = 150, $.01 + .02 * .5 = $.02
    "knot": (150, 0.02),
    "worse_twin": (150, 0.02),
    # .5: k1..2 reaches it at its end: 200, $.03
    "twin1": (200, 0.03),
    "twin2": (200, 0.03),
    "beyond": (None, None),    # 1.0: never
}

PARETO = {"mid": True, "beyond": True, "twin1": True, "twin2": True, "below": True, "k1tie": True, "fail": True,
          # cot (120, .25): k = 1 (100, .25) is cheaper at the same accuracy; dup_mid (260, .625): mid (250, .625);
          # knot (400, .375): k = 2 (200, .5); worse_twin (150, .375): the twins, same tokens, better
          "cot": False, "dup_mid": False, "knot": False, "worse_twin": False}


def _acc(design: str) -> float:
    right = DESIGNS[design][4]
    return 0.0 if right is None else len(right.split()) / 8


def test_the_reference_rows_cot_k1_k5_and_kmax(rr) -> None:
    rows = rr()
    assert set(rows) == set(DESIGNS)
    for r in rows.values():  # the same reference on every design's row
        _check(r, dict(cot_accuracy=0.25, cot_tokens=120, cot_calls=1, cot_cost_usd=0.012, k1_tokens=100,
                       cot_is_design=True, sc5_accuracy=0.80, sc5_tokens=500, sc5_cost_usd=0.09, k_max=6,
                       kmax_accuracy=0.85, kmax_tokens=600))


def test_the_curve_at_the_design_cost_in_every_unit_and_its_band(rr) -> None:
    rows = rr()
    for design, (tok, calls, usd, budget, lo, hi) in CURVE_AT.items():
        r = rows[design]
        _check(r, dict(curve_acc_at_tokens=tok, curve_acc_at_calls=calls, curve_acc_at_usd=usd,
                       curve_acc_at_budget=budget, curve_ci_lo_at_tokens=lo, curve_ci_hi_at_tokens=hi))
        acc = _acc(design)
        assert r["accuracy"] == pytest.approx(acc)
        _check(r, {f"iso_gap_{u}": None if c is None else acc - c
                   for u, c in zip(("tokens", "calls", "usd", "budget"), (tok, calls, usd, budget))})


def test_iso_gaps_worked_out(rr) -> None:
    rows = rr()
    # mid: .625 - .4375, .625 - .46875, .625 - .75, .625 - .8375
    _check(rows["mid"], dict(iso_gap_tokens=0.1875, iso_gap_calls=0.15625, iso_gap_usd=-0.125, iso_gap_budget=-0.2125))
    # below: only calls has a curve point: .125 - .375
    _check(rows["below"], dict(iso_gap_tokens=None, iso_gap_calls=-0.25, iso_gap_usd=None, iso_gap_budget=None))


def test_iso_accuracy_cost_and_ratio(rr) -> None:
    rows = rr()
    for design, (tok, usd) in ISO_ACC.items():
        own_tok, _, own_usd, _, _ = DESIGNS[design]
        _check(rows[design], dict(curve_tokens_at_acc=tok, curve_usd_at_acc=usd,
                                  iso_acc_cost_ratio_tokens=None if tok is None else own_tok / tok,
                                  iso_acc_cost_ratio_usd=None if usd is None else own_usd / usd))


def test_iso_accuracy_ratios_worked_out(rr) -> None:
    rows = rr()
    _check(rows["mid"], dict(iso_acc_cost_ratio_tokens=250 / 350, iso_acc_cost_ratio_usd=0.07 / 0.06))  # .714, 1.167
    _check(rows["knot"], dict(iso_acc_cost_ratio_tokens=400 / 150, iso_acc_cost_ratio_usd=1.5))
    _check(rows["fail"], dict(iso_acc_cost_ratio_tokens=0.3, iso_acc_cost_ratio_usd=0.3))


def test_multiples_of_cot_and_cot_sc5(rr) -> None:
    rows = rr()
    # over CoT's 120 tokens and $.012, over CoT-SC@5's 500 tokens and $.09
    _check(rows["mid"], dict(x_cot_tokens=250 / 120, x_cot_usd=0.07 / 0.012, x_sc5_tokens=0.5, x_sc5_usd=0.07 / 0.09))
    _check(rows["beyond"], dict(x_cot_tokens=700 / 120, x_cot_usd=0.1 / 0.012, x_sc5_tokens=1.4,
                                x_sc5_usd=0.1 / 0.09))
    _check(rows["cot"], dict(x_cot_tokens=1.0, x_cot_usd=1.0, x_sc5_tokens=0.24, x_sc5_usd=0.012 / 0.09))


def test_position_against_the_curve_and_gap_to_kmax(rr) -> None:
    rows = rr()
    # below k = 1's 100 tokens: below and fail; k1tie sits on it (within); past k = 6's 600: beyond only
    want = {d: "below" if DESIGNS[d][0] < 100 else "beyond" if DESIGNS[d][0] > 600 else "within" for d in DESIGNS}
    assert {d: r["cost_vs_curve"] for d, r in rows.items()} == want
    assert want["k1tie"] == "within" and want["knot"] == "within" and want["beyond"] == "beyond"
    for d, r in rows.items():
        assert r["gap_vs_kmax"] == pytest.approx(_acc(d) - 0.85)
    assert rows["beyond"]["gap_vs_kmax"] == pytest.approx(0.15) and rows["cot"]["gap_vs_kmax"] == pytest.approx(-0.6)


def test_pareto_front_with_ties(rr) -> None:
    rows = rr()
    assert {d: r["pareto"] for d, r in rows.items()} == PARETO


def test_same_cost_and_marginal_utility_against_the_cot_design(rr) -> None:
    rows = rr()
    # every per-task difference of a design is the same (costs are constant per design): SD 0, the
    # interval is the point; cot's own cells are the reference (not r's per-cell curve at 100 tokens)
    mid = rows["mid"]
    _check(mid, dict(cost_diff_n_tasks=8, cost_diff_tokens=130, cost_diff_tokens_ci_lo=130, cost_diff_tokens_ci_hi=130,
                     cost_diff_usd=0.058, cost_diff_usd_ci_lo=0.058, cost_diff_usd_ci_hi=0.058,
                     same_cost_tokens=False, same_cost_usd=False,
                     # 100 * (.625 - .25) / (130 / 1000) = 288.46; 100 * .375 / .058 = 646.55
                     mu_pp_per_1k_tokens=37.5 / 0.13, mu_pp_per_usd=37.5 / 0.058))
    # fail: 100 * (0 - .25) / (-90 / 1000) = 277.8 pp per 1k tokens saved
    _check(rows["fail"], dict(cost_diff_tokens=-90, same_cost_tokens=False, mu_pp_per_1k_tokens=25 / 0.09,
                              mu_pp_per_usd=-25 / -0.009, n_failed=8, accuracy=0.0))
    # cot itself: no flag, no ratio
    _check(rows["cot"], dict(cost_diff_tokens=0, same_cost_tokens=None, same_cost_usd=None, mu_pp_per_1k_tokens=None,
                             mu_pp_per_usd=None))


# ----- run r, by group --------------------------------------------------------------------------

def _pareto_brute(points: dict[str, tuple[float, float]], curve: list[tuple[float, float]]) -> dict[str, bool]:
    """Not dominated (<= cost, >= accuracy, one strict) by another design or a curve point."""
    def dom(o: tuple[float, float], x: tuple[float, float]) -> bool:
        return o[0] <= x[0] and o[1] >= x[1] and (o[0] < x[0] or o[1] > x[1])
    return {d: not any(dom(o, p) for e, o in points.items() if e != d) and not any(dom(c, p) for c in curve)
            for d, p in points.items()}


@pytest.mark.parametrize("group", [("depth", 1), ("depth", 2), ("width", 1)])
def test_each_group_reads_its_own_curve_and_designs(rr, group) -> None:
    rows = rr(*group)
    assert set(rows) == set(DESIGNS)
    tasks = [t for t in TASKS if GROUP[t] == group]
    pts = {}
    for d, (tok, _, _, _, right) in DESIGNS.items():
        ok = [] if right is None else [t for t in tasks if t in right.split()]
        pts[d] = (float(tok), len(ok) / len(tasks))
        assert rows[d]["accuracy"] == pytest.approx(pts[d][1])
    curve = [(r["tokens"], r["accuracy"]) for r in _curves() if (r["run_id"], r["axis"], r["axis_value"]) == ("r", *group)]
    assert {d: r["pareto"] for d, r in rows.items()} == _pareto_brute(pts, curve)
    cot_acc = pts["cot"][1]
    for d, r in rows.items():
        assert r["cot_accuracy"] == pytest.approx(cot_acc) and r["cot_tokens"] == 120
        # the group's own cells paired with cot's: every cell's difference is the design's tokens - 120
        _check(r, dict(cost_diff_n_tasks=len(tasks), cost_diff_tokens=DESIGNS[d][0] - 120))
        if group == ("depth", 2):  # costlier than every design: below it, no k = 5 (k_max 4, accuracy .5)
            _check(r, dict(curve_acc_at_tokens=None, curve_acc_at_calls=None, curve_acc_at_usd=None,
                           curve_acc_at_budget=None, cost_vs_curve="below", k_max=4, kmax_accuracy=0.5,
                           kmax_tokens=4000, k1_tokens=1000, sc5_accuracy=None, x_sc5_tokens=None))
        elif group == ("depth", 1):  # flat .90 on k1..2 (0 .. 1e6 in every unit), band .85 .. .97; k_max 5 at .95
            _check(r, dict(curve_acc_at_tokens=0.9, curve_acc_at_calls=0.9, curve_acc_at_usd=0.9,
                           curve_acc_at_budget=0.9, curve_ci_lo_at_tokens=0.85, curve_ci_hi_at_tokens=0.97,
                           k_max=5, kmax_accuracy=0.95, sc5_accuracy=0.95, sc5_tokens=4e6, cost_vs_curve="within"))
        else:
            _check(r, dict(curve_acc_at_tokens=0.7, curve_acc_at_usd=0.7, curve_ci_lo_at_tokens=0.6, k_max=5,
                           kmax_accuracy=0.7))


# ----- run n: no cot design ---------------------------------------------------------------------

N_K1 = (90, 80, 100, 90)  # the per-cell curve at k = 1 (tokens), mean 90


@pytest.fixture
def con_n(view_db):
    c = view_db.make("design_comparison")
    view_db.insert(c, "cot_sc_curve", *[dict(run_id="n", axis="all", k=k, tokens=90.0 * k, calls=float(k),
                                             cost_usd=0.009 * k, budget_spent=45.0 * k, accuracy=a, ci_lo=a - 0.1,
                                             ci_hi=a + 0.1, n_tasks=4)
                                        for k, a in zip((1, 2, 3, 4), (0.3, 0.45, 0.6, 0.7))])
    view_db.insert(c, "cot_sc_task_curve", *[dict(run_id="n", task_id=f"u{i}", seed=0, k=k, accuracy=0.3,
                                                  tokens=float(t * k), cost_usd=0.009 * k)
                                             for i, t in enumerate(N_K1) for k in (1, 2)])
    view_db.insert(c, "results", *[dict(run_id="n", design="nd", task_id=f"u{i}", seed=0, source="s", correct=i < 2,
                                        status="ok", tokens=200, calls=2, cost_usd=0.02, budget_spent=100.0)
                                   for i in range(4)])
    return c


def test_without_cot_the_reference_is_the_curve_at_k1(con_n, view_db) -> None:
    (r,) = _rows(view_db, con_n, "n").values()
    _check(r, dict(accuracy=0.5, cot_accuracy=0.3, cot_tokens=90, cot_calls=1, cot_cost_usd=0.009, k1_tokens=90,
                   cot_is_design=False, sc5_accuracy=None, sc5_tokens=None, sc5_cost_usd=None, x_sc5_tokens=None,
                   x_sc5_usd=None, k_max=4, kmax_accuracy=0.7, kmax_tokens=360, gap_vs_kmax=-0.2,
                   x_cot_tokens=200 / 90, x_cot_usd=0.02 / 0.009,
                   # 200 tok: k2..3 (180 -> 270, .45 -> .6): .45 + .15 * 20/90; 2 calls = k2 (.45);
                   # $.02: k2..3 (.018 -> .027): .45 + .15 * 2/9; budget 100: k2..3 (90 -> 135): .45 + .15 * 10/45
                   curve_acc_at_tokens=0.45 + 0.15 * 20 / 90, curve_acc_at_calls=0.45,
                   curve_acc_at_usd=0.45 + 0.15 * 2 / 9, curve_acc_at_budget=0.45 + 0.15 * 10 / 45,
                   # .5: k2..3: 180 + 90 * .05/.15 = 210 tokens, $.018 + .009/3 = $.021
                   curve_tokens_at_acc=210, curve_usd_at_acc=0.021,
                   iso_acc_cost_ratio_tokens=200 / 210, iso_acc_cost_ratio_usd=0.02 / 0.021,
                   cost_vs_curve="within", pareto=True))
    # per task 200 - (90, 80, 100, 90) = 110, 120, 100, 110: mean 110, SD sqrt(200/3), t(3) = 3.182446
    hw = 3.182446 * math.sqrt(200 / 3) / 2
    _check(r, dict(cost_diff_n_tasks=4, cost_diff_tokens=110, same_cost_tokens=False,
                   cost_diff_usd=0.011, same_cost_usd=False,
                   mu_pp_per_1k_tokens=100 * 0.2 / 0.11, mu_pp_per_usd=100 * 0.2 / 0.011))
    assert r["cost_diff_tokens_ci_lo"] == pytest.approx(110 - hw, abs=1e-4)
    assert r["cost_diff_tokens_ci_hi"] == pytest.approx(110 + hw, abs=1e-4)
    assert r["cost_diff_usd_ci_lo"] == pytest.approx(0.011) and r["cost_diff_usd_ci_hi"] == pytest.approx(0.011)


# ----- run z: a free model (every USD cost 0) ---------------------------------------------------

@pytest.fixture
def con_z(view_db):
    c = view_db.make("design_comparison")
    view_db.insert(c, "cot_sc_curve", *[dict(run_id="z", axis="all", k=k, tokens=10.0 * k, calls=float(k), cost_usd=0.0,
                                             budget_spent=10.0 * k, accuracy=0.2 * k, ci_lo=0.2 * k - 0.1,
                                             ci_hi=0.2 * k + 0.15, n_tasks=4) for k in (1, 2, 3)])
    for d, tok, calls, budget, right in (("cot", 10, 1, 10.0, 1), ("zd", 25, 3, 15.0, 2)):
        view_db.insert(c, "results", *[dict(run_id="z", design=d, task_id=f"v{i}", seed=0, source="s",
                                            correct=i < right, status="ok", tokens=tok, calls=calls, cost_usd=0.0,
                                            budget_spent=budget) for i in range(4)])
    return c


def test_zero_cost_reads_the_first_point_and_divides_by_nothing(con_z, view_db) -> None:
    rows = _rows(view_db, con_z, "z")
    zd = rows["zd"]
    _check(zd, dict(accuracy=0.5,
                    # $0 is on every point of a curve whose USD is 0 throughout: the first one (k = 1, .2)
                    curve_acc_at_usd=0.2, iso_gap_usd=0.3,
                    # 25 tok: k2..3, .4 + .2 * .5 = .5 (band .3 + .2 * .5 = .4 .. .55 + .2 * .5 = .65); 3 calls = k3 (.6);
                    # budget 15: k1..2, .2 + .2 * .5 = .3
                    curve_acc_at_tokens=0.5, curve_ci_lo_at_tokens=0.4, curve_ci_hi_at_tokens=0.65,
                    curve_acc_at_calls=0.6, curve_acc_at_budget=0.3,
                    # .5 is first reached on k2..3 at $0 (and at 25 tokens: 20 + 10 * .1/.2)
                    curve_usd_at_acc=0.0, iso_acc_cost_ratio_usd=None, curve_tokens_at_acc=25,
                    iso_acc_cost_ratio_tokens=1.0,
                    x_cot_usd=None, same_cost_usd=None, mu_pp_per_usd=None,
                    x_cot_tokens=2.5, same_cost_tokens=False, mu_pp_per_1k_tokens=100 * 0.25 / 0.015,
                    cot_cost_usd=0.0, cot_accuracy=0.25, k_max=3, sc5_accuracy=None))
    _check(rows["cot"], dict(curve_acc_at_usd=0.2, curve_acc_at_tokens=0.2, same_cost_usd=None, pareto=True))


# ----- run one: a one-point curve ---------------------------------------------------------------

@pytest.fixture
def con_one(view_db):
    c = view_db.make("design_comparison")
    view_db.insert(c, "cot_sc_curve", dict(run_id="one", axis="all", k=1, tokens=50.0, calls=1.0, cost_usd=0.005,
                                           budget_spent=50.0, accuracy=0.4, ci_lo=0.3, ci_hi=0.5, n_tasks=4))
    for d, right in (("od", 1), ("od_hi", 3)):
        view_db.insert(c, "results", *[dict(run_id="one", design=d, task_id=f"w{i}", seed=0, source="s",
                                            correct=i < right, status="ok", tokens=50, calls=1, cost_usd=0.005,
                                            budget_spent=50.0) for i in range(4)])
    return c


def test_one_point_curve_is_read_at_its_only_cost(con_one, view_db) -> None:
    rows = _rows(view_db, con_one, "one")
    for r in rows.values():  # every cost exactly at the only point: its accuracy and band
        _check(r, dict(curve_acc_at_tokens=0.4, curve_acc_at_calls=0.4, curve_acc_at_usd=0.4, curve_acc_at_budget=0.4,
                       curve_ci_lo_at_tokens=0.3, curve_ci_hi_at_tokens=0.5, k_max=1, kmax_accuracy=0.4,
                       kmax_tokens=50, k1_tokens=50, cot_tokens=50, cot_accuracy=0.4, cost_vs_curve="within",
                       x_cot_tokens=1.0, sc5_tokens=None))
    # .25 <= .4: the point itself; .75 is never reached (no next point to interpolate to)
    _check(rows["od"], dict(accuracy=0.25, curve_tokens_at_acc=50, curve_usd_at_acc=0.005, iso_acc_cost_ratio_tokens=1.0,
                            gap_vs_kmax=-0.15, pareto=False))
    _check(rows["od_hi"], dict(accuracy=0.75, curve_tokens_at_acc=None, curve_usd_at_acc=None,
                               iso_acc_cost_ratio_tokens=None, gap_vs_kmax=0.35, pareto=True))


# ----- runs a, b, c: the paired cost difference joins only its own run's and cell's reference ------

@pytest.fixture
def con_abc(view_db):
    """Tasks p, q, seeds 0 and 1 in three runs. a: cot (100 tokens on seed 0, 140 on seed 1; no cot
    cell for q's seed 1) and d (200 on seed 0, 260 on seed 1), plus a per-cell curve (500) that a
    run with its cot design never reads; b: cot 1000 and d 1200 on the same task ids and seeds;
    c: no cot, d 300 on seed 0 and 340 on seed 1, per-cell curve at k = 1 of 50 (seed 0) and 70 (seed 1), none for
    q's seed 1."""
    c = view_db.make("design_comparison")
    cells = []
    for run, design, tok in (("a", "cot", (100, 140)), ("a", "d", (200, 260)), ("b", "cot", (1000, 1000)),
                             ("b", "d", (1200, 1200)), ("c", "d", (300, 340))):
        for task in ("p", "q"):
            for seed in (0, 1):
                if run == "a" and design == "cot" and (task, seed) == ("q", 1):
                    continue
                cells.append(dict(run_id=run, design=design, task_id=task, seed=seed, source="s", correct=True,
                                  status="ok", tokens=tok[seed], calls=1, cost_usd=tok[seed] * 1e-4,
                                  budget_spent=float(tok[seed])))
    view_db.insert(c, "results", *cells)
    view_db.insert(c, "cot_sc_task_curve", *[dict(run_id=run, task_id=t, seed=s, k=1, accuracy=1.0, tokens=float(tok[s]),
                                                  cost_usd=tok[s] * 1e-4)
                                             for run, tok in (("a", (500, 500)), ("c", (50, 70)))
                                             for t in ("p", "q") for s in (0, 1) if (run, t, s) != ("c", "q", 1)])
    for run in ("a", "b", "c"):
        view_db.insert(c, "cot_sc_curve", *[dict(run_id=run, axis="all", k=k, tokens=100.0 * k, calls=float(k),
                                                 cost_usd=0.01 * k, budget_spent=100.0 * k, accuracy=0.5, ci_lo=0.4,
                                                 ci_hi=0.6, n_tasks=2) for k in (1, 2)])
    return c


def test_the_paired_cost_difference_pairs_each_cell_with_its_own_runs_reference(con_abc, view_db) -> None:
    got = {run: _rows(view_db, con_abc, run)["d"] for run in ("a", "b", "c")}
    # a: p: (200 - 100, 260 - 140) -> 110; q: seed 0 only (no cot cell on seed 1): 200 - 100 = 100.
    # mean 105, SD sqrt(50), t(1) = 12.706205: 105 -+ 12.706205 * sqrt(50) / sqrt(2) = 105 -+ 63.531025
    _check(got["a"], dict(cost_diff_n_tasks=2, cost_diff_tokens=105, cot_is_design=True))
    assert got["a"]["cost_diff_tokens_ci_lo"] == pytest.approx(105 - 63.531025, abs=1e-6)
    assert got["a"]["cost_diff_tokens_ci_hi"] == pytest.approx(105 + 63.531025, abs=1e-6)
    assert got["a"]["cost_diff_usd"] == pytest.approx(0.0105, abs=1e-12)
    # in USD (tokens x 1e-4): .011 and .010, SD sqrt(.5) x .001: .0105 -+ 12.706205 x .001 sqrt(.5) / sqrt(2)
    assert got["a"]["cost_diff_usd_ci_lo"] == pytest.approx(0.0105 - 0.0063531025, abs=1e-9)
    assert got["a"]["cost_diff_usd_ci_hi"] == pytest.approx(0.0105 + 0.0063531025, abs=1e-9)
    # a's d costs 230 tokens, $.023 and budget 230 a cell on average: past the curve's last point
    # (k = 2: 200, $.02, 200) in every unit but calls (1 = k 1), so no curve value there
    _check(got["a"], dict(curve_acc_at_tokens=None, curve_acc_at_usd=None, curve_acc_at_budget=None,
                          curve_acc_at_calls=0.5, cost_vs_curve="beyond"))
    # b: 1200 - 1000 on every cell
    _check(got["b"], dict(cost_diff_n_tasks=2, cost_diff_tokens=200, cost_diff_tokens_ci_lo=200,
                          cost_diff_tokens_ci_hi=200, cot_is_design=True))
    # c (no cot: its own per-cell curve at k = 1): p: (300 - 50, 340 - 70) -> 260; q: seed 0 only, 250; mean 255
    _check(got["c"], dict(cost_diff_n_tasks=2, cost_diff_tokens=255, cot_is_design=False))
    assert got["c"]["cost_diff_usd"] == pytest.approx(0.0255, abs=1e-12)


# ----- run s: CoT ran on one source only ------------------------------------------------------------

@pytest.fixture
def con_s(view_db):
    """Run s: tasks a0, a1 from source A and b0, b1 from source B (no axis), one seed. ``cot`` ran on
    A only (100 tokens, $.01 a cell); ``d`` on all four: 200, 220, 300, 330 tokens (× 1e-4 USD). The
    per-cell curve at k = 1: 50, 70, 60, 80 tokens (× 1e-4 USD)."""
    c = view_db.make("design_comparison")
    tok = {"cot": {"a0": 100, "a1": 100}, "d": {"a0": 200, "a1": 220, "b0": 300, "b1": 330}}
    view_db.insert(c, "results", *[dict(run_id="s", design=d, task_id=t, seed=0, source=t[0].upper(), correct=True,
                                        status="ok", tokens=v, calls=1, cost_usd=v * 1e-4)
                                   for d, cells in tok.items() for t, v in cells.items()])
    view_db.insert(c, "cot_sc_task_curve", *[dict(run_id="s", task_id=t, seed=0, k=1, accuracy=1.0, tokens=float(v),
                                                  cost_usd=v * 1e-4)
                                             for t, v in (("a0", 50), ("a1", 70), ("b0", 60), ("b1", 80))])
    return c


def test_a_group_without_cot_cells_is_paired_with_the_curve_and_only_that_group(con_s, view_db) -> None:
    got = {g: _rows(view_db, con_s, "s", g)["d"] for g in ("all", "A", "B")}
    # the whole run and A have the cot design: d - cot on a0, a1 (100, 120), b0 and b1 have no cot
    # cell to pair with: n 2, mean 110, SD sqrt(200), 110 -+ 12.706205 * sqrt(200) / sqrt(2) = 110 -+ 127.06205
    for g in ("all", "A"):
        _check(got[g], dict(cot_is_design=True, cost_diff_n_tasks=2, cost_diff_tokens=110))
        assert got[g]["cost_diff_tokens_ci_lo"] == pytest.approx(110 - 127.06205, abs=1e-6)
        assert got[g]["cost_diff_usd"] == pytest.approx(0.011, abs=1e-12)
    # B has no cot cell at all: its reference is the per-cell curve, 300 - 60, 330 - 80 = 240, 250:
    # mean 245, SD sqrt(50), 245 -+ 12.706205 * sqrt(50) / sqrt(2) = 245 -+ 63.531025
    _check(got["B"], dict(cot_is_design=False, cost_diff_n_tasks=2, cost_diff_tokens=245))
    # ... but s has no curve, so B has no CoT cost to compare with: no same-cost flag, no ratio
    _check(got["B"], dict(cot_tokens=None, cot_cost_usd=None, same_cost_tokens=None, same_cost_usd=None,
                          mu_pp_per_1k_tokens=None, mu_pp_per_usd=None))
    assert got["B"]["cost_diff_tokens_ci_hi"] == pytest.approx(245 + 63.531025, abs=1e-6)
    assert got["B"]["cost_diff_usd"] == pytest.approx(0.0245, abs=1e-12)


# ----- run zb: a free model with the budget on USD (every budget_spent 0) ----------------------------

@pytest.fixture
def con_zb(view_db):
    """Run zb: run z's curve and designs with the budget on USD: every budget_spent is 0, so the
    curve is flat at 0 on the budget axis and every design sits on all of its knots. Its cot makes 2
    calls a cell (the curve's k = 1: 1), zd 1."""
    c = view_db.make("design_comparison")
    view_db.insert(c, "cot_sc_curve", *[dict(run_id="zb", axis="all", k=k, tokens=10.0 * k, calls=float(k),
                                             cost_usd=0.0, budget_basis="usd", budget_spent=0.0, accuracy=0.2 * k,
                                             ci_lo=0.2 * k - 0.1, ci_hi=0.2 * k + 0.15, n_tasks=4) for k in (1, 2, 3)])
    for d, tok, calls, right in (("cot", 10, 2, 1), ("zd", 25, 1, 2)):
        view_db.insert(c, "results", *[dict(run_id="zb", design=d, task_id=f"v{i}", seed=0, source="s",
                                            correct=i < right, status="ok", tokens=tok, calls=calls, cost_usd=0.0,
                                            budget_basis="usd", budget_spent=0.0) for i in range(4)])
    return c


def test_a_flat_zero_budget_curve_is_read_at_its_first_point(con_zb, view_db) -> None:
    rows = _rows(view_db, con_zb, "zb")
    # budget 0 is on every point (0, 0, 0): the first one, k = 1 at .2 (not k = 3's .6)
    _check(rows["zd"], dict(accuracy=0.5, budget_basis="usd", budget_spent=0.0, curve_acc_at_budget=0.2,
                            iso_gap_budget=0.3, curve_acc_at_usd=0.2))
    _check(rows["cot"], dict(accuracy=0.25, curve_acc_at_budget=0.2, iso_gap_budget=0.05))
    for r in rows.values():  # CoT's calls are the cot design's (2), not the curve's at k = 1 (1)
        _check(r, dict(cot_is_design=True, cot_calls=2, cot_tokens=10))


# ----- runs f, g: the iso-accuracy cost where the curve is exactly at the design's accuracy ---------

@pytest.fixture
def con_fg(view_db):
    """Two curves at 100, 200, 300 tokens ($.01, $.02, $.03): f flat at .5 on k1..2, then .9; g at .5,
    then down to .25, then .75. In each run a design ``d`` right on 2 of 4 tasks (.5) at 150 tokens,
    $.015; in f also ``e``."""
    c = view_db.make("design_comparison")
    for run, accs in (("f", (0.5, 0.5, 0.9)), ("g", (0.5, 0.25, 0.75))):
        view_db.insert(c, "cot_sc_curve", *[dict(run_id=run, axis="all", k=k, tokens=100.0 * k, calls=float(k),
                                                 cost_usd=0.01 * k, budget_spent=100.0 * k, accuracy=a, ci_lo=a - 0.1,
                                                 ci_hi=a + 0.1, n_tasks=4) for k, a in enumerate(accs, start=1)])
        view_db.insert(c, "results", *[dict(run_id=run, design="d", task_id=f"x{i}", seed=0, source="s", correct=i < 2,
                                            status="ok", tokens=150, calls=1, cost_usd=0.015, budget_spent=150.0)
                                       for i in range(4)])
    # f's e: right on 3 of 4 (.75) at 300 tokens, the cost of f's k = 3 (.9)
    view_db.insert(c, "results", *[dict(run_id="f", design="e", task_id=f"x{i}", seed=0, source="s", correct=i < 3,
                                        status="ok", tokens=300, calls=1, cost_usd=0.03, budget_spent=300.0)
                                   for i in range(4)])
    return c


def test_a_curve_point_at_the_same_tokens_and_higher_accuracy_dominates(con_fg, view_db) -> None:
    rows = _rows(view_db, con_fg, "f")
    # e (300, .75): only f's k = 3 (300, .9) dominates it (same tokens, higher accuracy); the other
    # points (100, .5), (200, .5) and d (150, .5) are less accurate. d (150, .5): k = 1 (100, .5) dominates it.
    assert {d: r["pareto"] for d, r in rows.items()} == {"e": False, "d": False}


@pytest.mark.parametrize("run", ["f", "g"])
def test_the_curve_reaches_an_accuracy_it_starts_at(con_fg, view_db, run) -> None:
    # f: .5 is reached at k = 1 (100 tokens, $.01), where the flat segment starts (its interpolation
    # would divide 0 by 0); g: at k = 1 too, though the curve then falls below .5 (not at g's later
    # crossing, 200 + 100 * .25/.5 = 250). The design's 150 tokens, $.015 over it: 1.5 both ways.
    d = _rows(view_db, con_fg, run)["d"]
    _check(d, dict(accuracy=0.5, curve_tokens_at_acc=100, curve_usd_at_acc=0.01, iso_acc_cost_ratio_tokens=1.5,
                   iso_acc_cost_ratio_usd=1.5))


# ----- run dead: every CoT sample failed before a call (the pool's costs are 0 at every k) -----------

@pytest.fixture
def con_dead(view_db):
    """Run dead: no cot design; its curve (k = 1..5) and per-cell curve cost 0 tokens and $0 at every
    k, accuracy 0. Designs on four tasks: ``d`` right on 2 (200 tokens, $.02 a cell), ``d0`` on none
    (100 tokens, $.01)."""
    c = view_db.make("design_comparison")
    view_db.insert(c, "cot_sc_curve", *[dict(run_id="dead", axis="all", k=k, tokens=0.0, calls=0.0, cost_usd=0.0,
                                             budget_spent=0.0, accuracy=0.0, ci_lo=0.0, ci_hi=0.2, n_tasks=4)
                                        for k in range(1, 6)])
    view_db.insert(c, "cot_sc_task_curve", *[dict(run_id="dead", task_id=f"y{i}", seed=0, k=k, accuracy=0.0,
                                                  tokens=0.0, cost_usd=0.0) for i in range(4) for k in (1, 2)])
    for d, tok, right in (("d", 200, 2), ("d0", 100, 0)):
        view_db.insert(c, "results", *[dict(run_id="dead", design=d, task_id=f"y{i}", seed=0, source="s",
                                            correct=i < right, status="ok", tokens=tok, calls=1, cost_usd=tok * 1e-4,
                                            budget_spent=float(tok)) for i in range(4)])
    return c


def test_a_pool_that_cost_nothing_gives_no_multiples_and_no_ratios(con_dead, view_db) -> None:
    rows = _rows(view_db, con_dead, "dead")
    for r in rows.values():  # CoT (the curve at k = 1) and CoT-SC@5 cost 0: no multiple of them
        _check(r, dict(cot_is_design=False, cot_tokens=0, cot_cost_usd=0, sc5_tokens=0, sc5_cost_usd=0,
                       x_cot_tokens=None, x_cot_usd=None, x_sc5_tokens=None, x_sc5_usd=None, cost_vs_curve="beyond",
                       curve_acc_at_tokens=None, same_cost_tokens=False, same_cost_usd=False))
    # d: .5 is never reached; per cell 200 - 0 tokens, $.02 - 0: 100 * .5 / .2 = 250 pp per 1k tokens,
    # 100 * .5 / .02 = 2500 pp per USD
    _check(rows["d"], dict(accuracy=0.5, curve_tokens_at_acc=None, iso_acc_cost_ratio_tokens=None,
                           cost_diff_tokens=200, mu_pp_per_1k_tokens=250, mu_pp_per_usd=2500))
    # d0: accuracy 0 is reached at k = 1, at 0 tokens and $0: no ratio over a zero cost
    _check(rows["d0"], dict(accuracy=0.0, curve_tokens_at_acc=0, curve_usd_at_acc=0, iso_acc_cost_ratio_tokens=None,
                            iso_acc_cost_ratio_usd=None))


def test_pareto_compares_designs_of_the_same_run_only(view_db) -> None:
    """Runs p1 and p2 without a curve, one design ``a`` each: p1's at 100 tokens, right on 1 of 2;
    p2's at 50 tokens, right on both (it would dominate p1's, were runs mixed)."""
    c = view_db.make("design_comparison")
    view_db.insert(c, "results", *[dict(run_id=run, design="a", task_id=f"q{i}", seed=0, source="s",
                                        correct=i < right, status="ok", tokens=tok, calls=1, cost_usd=tok * 1e-4)
                                   for run, tok, right in (("p1", 100, 1), ("p2", 50, 2)) for i in range(2)])
    assert _rows(view_db, c, "p1")["a"]["pareto"] is True and _rows(view_db, c, "p2")["a"]["pareto"] is True
