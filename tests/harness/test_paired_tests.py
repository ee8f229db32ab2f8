"""paired_tests from hand-built stores: the budget unit, per-axis Holm families, the needs-n range,
McNemar clustered by task. Expected values from the rows by hand."""

from __future__ import annotations

import functools
import itertools
import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from masbench.harness import compute_paired
from masbench.harness.stats.paired import mcnemar_exact
from masbench.harness.stats.tests.student_t import t_quantile
from masbench.spec import StatsSpec
from masbench.store import Store, StoreWriter

K_ACC = {1: 0.3, 2: 0.4, 3: 0.5, 4: 0.6}  # every cell's maj@k: the curve is 0.3, 0.4, 0.5, 0.6


def _store(path, designs: dict[str, dict], n: int = 40, seeds: int = 1, axis_values=(None,), basis="completion",
           curve_budget: float = 20.0):
    """designs: label → {"y": per-task 0/1 (n,), "tokens": per-task, "budget": per-task}. Curve: k·100
    tokens, k·``curve_budget`` on the budget basis (0: no budget spend recorded); per-group curves
    for each axis value."""
    st = Store(path)
    st.sql("INSERT INTO runs(run_id, suite, status, simulated) VALUES ('r', 's', 'finished', true)")
    w = StoreWriter(st)
    value_of = {t: axis_values[t % len(axis_values)] for t in range(n)}
    for s in range(seeds):
        for t in range(n):
            for j in range(4):
                w.add("pool", {"run_id": "r", "task_id": f"t{t}", "seed": s, "sample_index": j, "answer": "a",
                               "correct": True, "tokens": 100, "cost_usd": 0.0, "budget_spent": 20.0})
            for k, acc in K_ACC.items():
                w.add("cot_sc_task_curve", {"run_id": "r", "task_id": f"t{t}", "seed": s, "k": k, "accuracy": acc,
                                            "tokens": 100.0 * k, "cost_usd": 0.0})
            for label, d in designs.items():
                ys = d["y"][t] if np.ndim(d["y"][t]) else [d["y"][t]] * seeds
                w.add("results", {"run_id": "r", "design": label, "design_name": label, "task_id": f"t{t}",
                                  "seed": s, "source": "src", "axis": None if value_of[t] is None else "depth",
                                  "axis_value": value_of[t], "correct": bool(ys[s]), "tokens": int(d["tokens"][t]),
                                  "calls": 2, "cost_usd": 0.0, "status": "ok", "budget_basis": basis,
                                  "budget_spent": float(d["budget"][t])})
    groups = [("all", None)] + ([("depth", v) for v in axis_values] if axis_values != (None,) else [("src", None)])
    for axis, value in groups:
        for k, acc in K_ACC.items():
            w.add("cot_sc_curve", {"run_id": "r", "axis": axis, "axis_value": value, "k": k, "n_tasks": n, "accuracy": acc,
                                   "ci_lo": acc - 0.1, "ci_hi": acc + 0.1, "tokens": 100.0 * k, "calls": float(k),
                                   "cost_usd": 0.0, "budget_basis": basis, "budget_spent": curve_budget * k})
    w.flush()
    return st


def test_the_verdict_is_at_equal_budget_on_the_basis(tmp_path):
    n = 40
    y = np.array([1, 0] * (n // 2))  # accuracy 0.5
    # 200 tokens = the curve at k = 2 (0.4); 80 completion tokens = the curve at k = 4 (0.6)
    st = _store(tmp_path / "b.duckdb", {"x": {"y": y, "tokens": [200] * n, "budget": [80] * n}}, n)
    compute_paired(st, "r", StatsSpec())  # match: budget (the default)
    rows = st.df("SELECT * FROM paired_tests WHERE against = 'curve' AND axis = 'all' ORDER BY unit").set_index("unit")
    assert rows.loc["tokens", "k_match"] == pytest.approx(2.0) and rows.loc["budget", "k_match"] == pytest.approx(4.0)
    assert rows.loc["tokens", "mean_diff"] == pytest.approx(0.5 - 0.4)
    assert rows.loc["budget", "mean_diff"] == pytest.approx(0.5 - 0.6)
    assert rows["is_verdict"].to_dict() == {"budget": True, "calls": False, "tokens": False}
    from masbench.report import data
    from masbench.report.verdict import verdict

    comp = data.comparison(st, "r").to_dict("records")[0]
    assert comp["paired_unit"] == "budget" and comp["paired_diff"] == pytest.approx(-0.1)
    assert "CoT-SC at equal budget (completion tokens) (k \u2248 4.0)" in verdict(comp).line
    # with match: tokens the verdict row is the tokens one
    compute_paired(st, "r", StatsSpec(match="tokens"))
    assert st.sql("SELECT unit FROM paired_tests WHERE is_verdict AND axis = 'all'")[0][0] == "tokens"
    st.close()


def test_per_axis_rows_are_one_holm_family_across_the_values(tmp_path):
    n = 60
    rng = np.random.default_rng(0)
    ds = {lab: {"y": (rng.random(n) < 0.5).astype(int), "tokens": [250] * n, "budget": [50] * n} for lab in "abc"}
    st = _store(tmp_path / "a.duckdb", ds, n, axis_values=(1, 2, 3))
    compute_paired(st, "r", StatsSpec(match="tokens"))
    fam = st.df("""SELECT axis, against, unit, family, family_size, count(*) AS rows FROM paired_tests
                   GROUP BY ALL ORDER BY ALL""")
    curve = fam[(fam["against"] == "curve") & (fam["unit"] == "tokens")].set_index("axis")
    assert curve.loc["all", "family_size"] == 3 and curve.loc["all", "family"] == "group"
    assert curve.loc["depth", "family_size"] == 9 and curve.loc["depth", "family"] == "axis"  # 3 designs × 3 values
    pairs = fam[~fam["against"].isin(["curve", "cot"])]
    assert set(pairs.loc[pairs["axis"] == "depth", "family_size"]) == {9}  # 3 pairs × 3 values
    assert set(pairs.loc[pairs["axis"] == "all", "family_size"]) == {3}
    cot = fam[fam["against"] == "cot"].set_index("axis")
    assert cot.loc["depth", "family_size"] == 9 and cot.loc["all", "family_size"] == 3
    # Holm levels of the axis family: α/9 … α
    lv = sorted(st.df("SELECT level_holm FROM paired_tests WHERE against = 'curve' AND unit = 'tokens' "
                      "AND axis = 'depth'")["level_holm"])
    assert lv == pytest.approx(sorted(0.05 / np.arange(1, 10)))
    st.close()


def test_needs_n_from_the_50_percent_interval(tmp_path):
    n = 40
    y = np.array([1] * 26 + [0] * 14)  # 65% vs the curve's 50% at k = 3 (300 tokens)
    st = _store(tmp_path / "n.duckdb", {"x": {"y": y, "tokens": [300] * n, "budget": [60] * n}}, n)
    compute_paired(st, "r", StatsSpec(match="tokens", test="student-t"))
    r = st.df("SELECT * FROM paired_tests WHERE against = 'curve' AND axis = 'all' AND unit = 'tokens'").iloc[0]
    d = y - 0.5
    m, sd = d.mean(), d.std(ddof=1)
    assert r["mean_diff"] == pytest.approx(m) and r["sd_task"] == pytest.approx(sd)
    q = t_quantile(0.5, n - 1)  # the 50% t interval, by hand
    lo, hi = m - q * sd / math.sqrt(n), m + q * sd / math.sqrt(n)
    zs = NormalDist().inv_cdf(1 - 0.05 / 2) + NormalDist().inv_cdf(0.8)
    assert lo > 0
    assert r["n_needed"] == math.ceil((zs * sd / hi) ** 2)  # the farther end: the smallest n
    assert r["n_needed_hi"] == math.ceil((zs * sd / lo) ** 2)
    if r["verdict"] == "inconclusive":
        assert r["reason"] == f"needs n \u2248 {r['n_needed']}\u2013{r['n_needed_hi']} tasks (has {n})"
    # a design equal to the curve: its 50% interval holds 0, so no n is claimed
    st2 = _store(tmp_path / "z.duckdb", {"x": {"y": np.array([1, 0] * 20), "tokens": [300] * n, "budget": [60] * n}}, n)
    compute_paired(st2, "r", StatsSpec(match="tokens", test="student-t"))
    z = st2.df("SELECT * FROM paired_tests WHERE against = 'curve' AND axis = 'all' AND unit = 'tokens'").iloc[0]
    assert z["reason"] == f"no difference shown at n = {n}" and str(z["n_needed"]) in ("<NA>", "None", "nan")
    st.close()
    st2.close()


@pytest.mark.slow
def test_mcnemar_is_clustered_by_task(tmp_path):
    """Two seeds that are exact copies: the clustered McNemar counts each task once."""
    n = 30
    rng = np.random.default_rng(2)
    ya, yb = (rng.random(n) < 0.7).astype(int), (rng.random(n) < 0.4).astype(int)
    ds = {"a": {"y": ya, "tokens": [200] * n, "budget": [40] * n}, "b": {"y": yb, "tokens": [200] * n, "budget": [40] * n}}
    p = {}
    for seeds in (1, 2):
        st = _store(tmp_path / f"m{seeds}.duckdb", ds, n, seeds=seeds)
        compute_paired(st, "r")
        p[seeds] = st.df("SELECT * FROM paired_tests WHERE against = 'b' AND axis = 'all'").iloc[0]
        st.close()
    b, c = int(((ya == 1) & (yb == 0)).sum()), int(((ya == 0) & (yb == 1)).sum())
    for seeds in (1, 2):
        assert p[seeds]["p_value"] == pytest.approx(mcnemar_exact(b, c), rel=1e-9)  # not mcnemar_exact(2b, 2c)
        assert (p[seeds]["n_discordant_plus"], p[seeds]["n_discordant_minus"]) == (b, c)
        assert p[seeds]["method"] == "exact McNemar (clustered by task)"
    assert mcnemar_exact(2 * b, 2 * c) < mcnemar_exact(b, c)  # what counting cells would have claimed
    # 30 tasks: the interval is Monte Carlo (2^30 > B), seeded by the suite's seed: a rerun gives the same rows
    st = _store(tmp_path / "again.duckdb", ds, n)
    compute_paired(st, "r")
    first = st.df("SELECT * FROM paired_tests ORDER BY ALL")
    compute_paired(st, "r")
    pd.testing.assert_frame_equal(first, st.df("SELECT * FROM paired_tests ORDER BY ALL"))
    # ... and the suite's seed is the one that draws them: another seed, other Monte-Carlo intervals
    # (the exact McNemar p stays)
    compute_paired(st, "r", StatsSpec(seed=5))
    other = st.df("SELECT * FROM paired_tests ORDER BY ALL")
    mc = first["method"] == "exact McNemar (clustered by task)"  # the design-pair rows
    assert mc.sum() >= 2 and (other["method"] == first["method"]).all()
    assert np.allclose(first.loc[mc, "p_value"], other.loc[mc, "p_value"])
    cols = ["ci_lo", "ci_hi", "ci_lo_holm", "ci_hi_holm"]
    assert not np.allclose(first.loc[mc, cols].to_numpy(float), other.loc[mc, cols].to_numpy(float))
    st.close()


def test_the_resample_count_resolves_the_smallest_holm_level(tmp_path):
    """α = 0.001, two designs against cot: x is tested at α/2 = 0.0005, which 2000 sign vectors cannot
    resolve (the smallest p they give is 2/2001 ≈ 0.001: the interval would be all of [−1, 1]); the
    harness raises B to 20·2/α = 40000 ≥ 2^12, so the interval is the exact one."""
    n = 12
    won = {"cot": _won(n, 0), "x": _won(n, 11), "y": _won(n, 6)}
    st = _store(tmp_path / "r.duckdb", {lab: {"y": y, "tokens": [300] * n, "budget": [60] * n} for lab, y in won.items()}, n)
    compute_paired(st, "r", StatsSpec(match="tokens", alpha=0.001))
    x = st.df("SELECT * FROM paired_tests WHERE against = 'cot' AND axis = 'all' AND design = 'x'").iloc[0]
    # McNemar by hand: b = 11, c = 0 → 2/2^11; Holm first of two: level 0.0005, p_holm 2·2/2048
    assert x["p_value"] == pytest.approx(2 / 2048) and x["level_holm"] == pytest.approx(0.0005)
    assert x["bootstrap"] == 40000 and x["p_holm"] == pytest.approx(4 / 2048)
    lo, hi = _brute_ci(_won(n, 11).astype(float), 1 - 0.0005)
    assert (x["ci_lo_holm"], x["ci_hi_holm"]) == pytest.approx((lo, hi), abs=1e-6) and lo > -0.5
    st.close()


# --- brute force: the sign-flip test over all 2^n sign vectors, written out here (not the module's
# threshold arithmetic), for the small families below (n = 12: 4096 vectors, which the harness
# enumerates too once the resample count reaches 2^12)

@functools.cache
def _all_signs(n: int) -> np.ndarray:
    return np.array(list(itertools.product([1.0, -1.0], repeat=n)))


def _sides(d: np.ndarray, mu: float) -> tuple[float, float]:
    """P(S* ≥ S) and P(S* ≤ S) over every sign vector, for H0: E[d] = μ."""
    x = np.asarray(d, float) - mu
    sums, s = _all_signs(len(x)) @ x, x.sum()
    return float((sums >= s - 1e-12).mean()), float((sums <= s + 1e-12).mean())


def _brute_p(d: np.ndarray) -> float:
    return min(1.0, 2 * min(_sides(d, 0.0)))


def _brute_ci(d: np.ndarray, level: float) -> tuple[float, float]:
    """{μ : p(μ) ≥ 1 − level} by bisection: P(S* ≥ S) rises with μ, P(S* ≤ S) falls."""
    a = 1 - level

    def edge(ok, bad: float, good: float) -> float:
        for _ in range(80):
            mid = (bad + good) / 2
            bad, good = (bad, mid) if ok(mid) else (mid, good)
        return good

    lo = edge(lambda mu: 2 * _sides(d, mu)[0] >= a, -1.0, float(np.mean(d)))
    hi = edge(lambda mu: 2 * _sides(d, mu)[1] >= a, 1.0, float(np.mean(d)))
    return lo, hi


def _won(n: int, wins: int) -> np.ndarray:
    return np.array([1] * wins + [0] * (n - wins))


def _curve_rows(st, unit: str = "tokens", axis: str = "all"):
    return st.df("SELECT * FROM paired_tests WHERE against = 'curve' AND unit = ? AND axis = ? ORDER BY design",
                 [unit, axis]).set_index("design")


FAMILY = {  # label → (tasks won of 12, tokens per task, the curve at that cost: K_ACC interpolated)
    "x": (9, 150, 0.35),  # k = 1.5; d = +0.65 ×9, −0.35 ×3
    "y": (8, 100, 0.30),  # k = 1; d = +0.70 ×8, −0.30 ×4
    "z": (10, 300, 0.50),  # k = 3; d = +0.50 ×10, −0.50 ×2
}


def _family_store(path):
    n = 12
    ds = {lab: {"y": _won(n, w), "tokens": [tok] * n, "budget": [tok / 5] * n} for lab, (w, tok, _) in FAMILY.items()}
    st = _store(path, ds, n)
    compute_paired(st, "r", StatsSpec(match="tokens", bootstrap=4096))  # 4096 = 2^12: every sign vector
    return st, n


def test_the_verdict_is_decided_at_the_holm_level_not_the_raw_one(tmp_path):
    """A family of three designs, each better than the curve at raw p < α, none at Holm's level."""
    st, n = _family_store(tmp_path / "h.duckdb")
    rows = _curve_rows(st)
    d = {lab: _won(n, w) - c for lab, (w, _, c) in FAMILY.items()}
    # raw p by brute force (also by hand for z, a sign test: 2·(C(12,10) + C(12,11) + 1)/2^12 = 158/4096)
    p = {"x": 88 / 4096, "y": 112 / 4096, "z": 158 / 4096}
    for lab in FAMILY:
        assert _brute_p(d[lab]) == pytest.approx(p[lab], abs=1e-12)
        assert rows.loc[lab, "p_value"] == pytest.approx(p[lab], abs=1e-12)
        assert rows.loc[lab, "mean_diff"] == pytest.approx(d[lab].mean())
    # Holm by hand: ranks x (0.0215), y (0.0273), z (0.0386); levels α/3, α/2, α;
    # adjusted: 3·0.021484 = 0.064453; max(0.064453, 2·0.027344 = 0.054688) = 0.064453;
    #           max(0.064453, 1·0.038574) = 0.064453 — every one at or above α = 0.05
    holm = 3 * 88 / 4096
    assert rows["level_holm"].to_dict() == pytest.approx({"x": 0.05 / 3, "y": 0.05 / 2, "z": 0.05})
    assert rows["p_holm"].to_dict() == pytest.approx({"x": holm, "y": holm, "z": holm})
    assert set(rows["family_size"]) == {3} and set(rows["family"]) == {"group"}
    # z, ranked last, is tested at α itself: its raw p 0.0386 < α and its Holm-level (95%) interval
    # excludes 0 — the raw p would call it "worth it"; Holm's 0.0645 does not
    assert p["z"] < 0.05 and rows.loc["z", "ci_lo_holm"] > 0
    assert (rows.loc["z", "ci_lo_holm"], rows.loc["z", "ci_hi_holm"]) == pytest.approx(_brute_ci(d["z"], 0.95), abs=1e-8)
    assert rows["verdict"].to_dict() == {"x": "inconclusive", "y": "inconclusive", "z": "inconclusive"}
    assert rows["is_verdict"].all()
    st.close()


def test_needs_n_is_planned_at_each_designs_holm_level(tmp_path):
    """"needs n ≈ lo–hi" at the level the design is tested at (α/3, α/2, α), not at α."""
    st, n = _family_store(tmp_path / "n.duckdb")
    rows = _curve_rows(st)
    want = {}
    for lab, (w, _, c) in FAMILY.items():
        d = _won(n, w) - c
        lo, hi = _brute_ci(d, 0.5)  # the central 50% interval, by brute force
        sd = math.sqrt(w * (n - w) / (n * (n - 1)))  # SD of w values 1 − c and n − w values −c (ddof 1)
        lv = rows.loc[lab, "level_holm"]
        zs = NormalDist().inv_cdf(1 - lv / 2) + NormalDist().inv_cdf(0.8)
        want[lab] = (math.ceil((zs * sd / hi) ** 2), math.ceil((zs * sd / lo) ** 2))
    # by hand: x: [19/60, 29/60], σ 0.452267, z_{1−α/6} + z_0.8 = 2.393980 + 0.841621 = 3.235601
    #   → (3.235601·0.452267/0.483333)² = 9.17 → 10 and /0.316667 → 21.35 → 22   (at α: 7 and 17)
    # y: [19/70, 9/20], σ 0.492366, z_{1−α/4} + z_0.8 = 2.241403 + 0.841621 = 3.083024
    #   → 11.38 → 12 and 31.28 → 32   (at α: 10 and 26)
    # z: [1/4, 1/2], σ 0.389249, at α: 2.801585 → 4.76 → 5 and 19.03 → 20
    assert want == {"x": (10, 22), "y": (12, 32), "z": (5, 20)}
    got = {lab: (int(rows.loc[lab, "n_needed"]), int(rows.loc[lab, "n_needed_hi"])) for lab in FAMILY}
    assert got == want
    for lab, (lo, hi) in want.items():
        assert rows.loc[lab, "reason"] == f"needs n \u2248 {lo}\u2013{hi} tasks (has {n})"
    st.close()


def test_tied_p_values_go_to_the_larger_t_first(tmp_path):
    """Two designs with the same p (the same sign-test count) but different |t|: Holm ranks the
    larger |t| first, whatever the labels say."""
    n = 12
    ds = {"a": {"y": _won(n, 10), "tokens": [350] * n, "budget": [70] * n},  # curve 0.55: d = +0.45 ×10, −0.55 ×2
          "b": {"y": _won(n, 10), "tokens": [300] * n, "budget": [60] * n}}  # curve 0.50: d = +0.50 ×10, −0.50 ×2
    st = _store(tmp_path / "t.duckdb", ds, n)
    compute_paired(st, "r", StatsSpec(match="tokens", bootstrap=4096))
    rows = _curve_rows(st)
    # both p = 158/4096 by brute force (for b a sign test: 2·(C(12,10) + C(12,11) + 1)/2^12)
    da, db = _won(n, 10) - 0.55, _won(n, 10) - 0.5
    assert _brute_p(da) == _brute_p(db) == pytest.approx(158 / 4096)
    assert rows["p_value"].to_dict() == pytest.approx({"a": 158 / 4096, "b": 158 / 4096}, abs=1e-12)
    # |t| = |mean|/(sd/√n): same sd (the two values differ by 1 in both), means 3.4/12 < 4/12 → b first
    assert abs(db.mean()) > abs(da.mean()) and da.std(ddof=1) == pytest.approx(db.std(ddof=1))
    assert rows["level_holm"].to_dict() == pytest.approx({"a": 0.05, "b": 0.025})
    assert rows["p_holm"].to_dict() == pytest.approx({"a": 2 * 158 / 4096, "b": 2 * 158 / 4096})
    # each interval is at its own level: b's at 97.5%, a's at 95%
    assert (rows.loc["b", "ci_lo_holm"], rows.loc["b", "ci_hi_holm"]) == pytest.approx(_brute_ci(db, 0.975), abs=1e-8)
    assert (rows.loc["a", "ci_lo_holm"], rows.loc["a", "ci_hi_holm"]) == pytest.approx(_brute_ci(da, 0.95), abs=1e-8)
    st.close()


def test_an_axis_family_spans_every_value_and_ties_go_by_label(tmp_path):
    """Per-axis rows: one Holm family across every design at every value (family = 'axis'); with
    every p and |t| equal, the rank is the label "design|against|value" — design before value,
    which is not the order the rows come in (value, then design)."""
    n = 24  # task t has depth 1 + t % 2: 12 tasks per value
    lose = {"t0", "t1", "t10", "t11"}  # the first two tasks of each value (ordered by task id) are lost
    y = np.array([0 if f"t{t}" in lose else 1 for t in range(n)])
    ds = {lab: {"y": y, "tokens": [300] * n, "budget": [60] * n} for lab in ("a", "b")}  # curve 0.5 everywhere
    st = _store(tmp_path / "x.duckdb", ds, n, axis_values=(1, 2))
    compute_paired(st, "r", StatsSpec(match="tokens", bootstrap=4096))
    rows = st.df("SELECT * FROM paired_tests WHERE against = 'curve' AND unit = 'tokens' AND axis = 'depth'")
    got = {(r.design, r.axis_value): r for r in rows.itertuples()}
    assert len(got) == 4 and {r.family for r in got.values()} == {"axis"} and {r.family_size for r in got.values()} == {4}
    # every cell: 10 of 12 won at ±0.5, the sign test: p = 158/4096; Holm: 4p for all (running max)
    for r in got.values():
        assert r.p_value == pytest.approx(158 / 4096, abs=1e-12) and r.p_holm == pytest.approx(4 * 158 / 4096)
    # rank by label: a|curve|1, a|curve|2, b|curve|1, b|curve|2 → α/4, α/3, α/2, α
    # (in row order — by value, then design — (b, 1) would get α/3 and (a, 2) α/2)
    assert {k: r.level_holm for k, r in got.items()} == pytest.approx(
        {("a", 1): 0.05 / 4, ("a", 2): 0.05 / 3, ("b", 1): 0.05 / 2, ("b", 2): 0.05})
    assert {r.verdict for r in got.values()} == {"inconclusive"}
    # the whole-suite rows stay their own family (two designs, 24 tasks each)
    whole = _curve_rows(st)
    assert set(whole["family"]) == {"group"} and set(whole["family_size"]) == {2} and set(whole["n_tasks"]) == {24}
    st.close()


def _mcnemar_by_hand(b: int, c: int) -> float:
    """2·P(X ≤ min(b, c)), X ~ Binomial(b + c, ½), at most 1."""
    m = b + c
    return min(1.0, 2 * sum(math.comb(m, i) for i in range(min(b, c) + 1)) / 2**m)


def test_rows_against_cot_and_between_designs(tmp_path):
    """A suite that ran the ``cot`` design: x (10 of 12), y (12 of 12), cot (6 of 12), all at 300 tokens
    (curve 0.5). Every row's columns by hand; the non-verdict rows carry no verdict columns."""
    n = 12
    won = {"cot": _won(n, 6), "x": _won(n, 10), "y": _won(n, 12)}  # tasks 0.. won first
    ds = {lab: {"y": y, "tokens": [300] * n, "budget": [60] * n} for lab, y in won.items()}
    st = _store(tmp_path / "c.duckdb", ds, n)
    spec = StatsSpec(match="tokens", alpha=0.005, power=0.9, bootstrap=100, seed=3)
    assert compute_paired(st, "r", spec) == st.sql("SELECT count(*) FROM paired_tests")[0][0]
    rows = st.df("SELECT * FROM paired_tests WHERE axis = 'all' AND unit IN ('tokens', '-')")
    key = {(r.design, r.against): r for r in rows.itertuples()}
    assert set(key) == {("cot", "curve"), ("x", "curve"), ("y", "curve"), ("x", "cot"), ("y", "cot"),
                        ("cot", "x"), ("cot", "y"), ("x", "y")}  # never cot against cot, nor (b, a) pairs
    for r in rows.itertuples():
        assert (r.run_id, r.alpha, r.power, r.n_tasks, r.n_cells) == ("r", 0.005, 0.9, n, n)
        assert pd.isna(r.axis_value)
    # against the curve: the family is x and y (cot is a baseline): B = 20·2/0.005 = 8000 ≥ 2^12
    x, y, cot = key[("x", "curve")], key[("y", "curve")], key[("cot", "curve")]
    assert (x.bootstrap, y.bootstrap) == (8000, 8000)
    assert x.p_value == pytest.approx(158 / 4096) and y.p_value == pytest.approx(2 / 4096)  # brute force / by hand
    assert (x.ci_lo, x.ci_hi) == pytest.approx(_brute_ci(_won(n, 10) - 0.5, 0.95), abs=1e-8)
    assert (y.level_holm, x.level_holm) == pytest.approx((0.0025, 0.005))
    assert (y.p_holm, x.p_holm) == pytest.approx((4 / 4096, 158 / 4096))  # 2·2/4096; max(4/4096, 158/4096)
    assert (x.verdict, y.verdict) == ("inconclusive", "worth it")  # y: p_holm 0.00098 < 0.005, interval above 0
    assert (x.method, x.position, x.k_match, x.family, x.family_size) == ("sign-flip", "within", 3.0, "group", 2)
    assert x.is_verdict and y.is_verdict and not cot.is_verdict
    # the baseline's own row: tested, but outside the family and without a verdict
    assert cot.p_value == pytest.approx(1.0) and cot.p_holm == cot.p_value and cot.level_holm == 0.005
    assert cot.family_size == 1 and pd.isna(cot.family) and pd.isna(cot.verdict) and pd.isna(cot.reason)
    assert pd.isna(cot.n_needed) and pd.isna(cot.n_needed_hi) and cot.mean_diff == pytest.approx(0.0)
    # against cot (the design ran): McNemar clustered by task, one seed: exact McNemar.
    # x: right where cot is wrong on tasks 6–9 (b = 4), never the other way (c = 0): 2/2⁴ = 0.125
    # y: b = 6, c = 0: 2/2⁶ = 0.03125. Holm over x, y: 2·0.03125 = 0.0625; max(0.0625, 0.125) = 0.125
    xc, yc = key[("x", "cot")], key[("y", "cot")]
    assert (xc.p_value, yc.p_value) == pytest.approx((_mcnemar_by_hand(4, 0), _mcnemar_by_hand(6, 0)))
    assert (xc.p_value, yc.p_value) == pytest.approx((0.125, 0.03125))
    assert (xc.p_holm, yc.p_holm, xc.level_holm, yc.level_holm) == pytest.approx((0.125, 0.0625, 0.005, 0.0025))
    assert (xc.n_discordant_plus, xc.n_discordant_minus, yc.n_discordant_plus, yc.n_discordant_minus) == (4, 0, 6, 0)
    assert xc.method == "exact McNemar (clustered by task)" and xc.mean_diff == pytest.approx(4 / 12)
    # its interval: the sign-flip inversion over every vector (B = 8000 ≥ 2^12), by brute force
    dxc = _won(n, 10) - _won(n, 6)
    assert (xc.ci_lo, xc.ci_hi) == pytest.approx(_brute_ci(dxc, 0.95), abs=1e-8)
    assert (xc.ci_lo_holm, xc.ci_hi_holm) == pytest.approx(_brute_ci(dxc, 0.995), abs=1e-8)
    # between designs: a < b only; cot−x: b = 0, c = 4; cot−y: 0, 6; x−y: 0, 2 (2/2² = 0.5).
    # Holm over three: 3·0.03125 = 0.09375; max(·, 2·0.125 = 0.25) = 0.25; max(0.25, 0.5) = 0.5
    pc = {k: key[k] for k in (("cot", "x"), ("cot", "y"), ("x", "y"))}
    assert {k: (r.n_discordant_plus, r.n_discordant_minus) for k, r in pc.items()} == {
        ("cot", "x"): (0, 4), ("cot", "y"): (0, 6), ("x", "y"): (0, 2)}
    assert {k: r.p_value for k, r in pc.items()} == pytest.approx({("cot", "x"): 0.125, ("cot", "y"): 0.03125,
                                                                  ("x", "y"): 0.5})
    assert {k: r.p_holm for k, r in pc.items()} == pytest.approx({("cot", "x"): 0.25, ("cot", "y"): 0.09375,
                                                                 ("x", "y"): 0.5})
    assert {k: r.level_holm for k, r in pc.items()} == pytest.approx({("cot", "x"): 0.005 / 2,
                                                                     ("cot", "y"): 0.005 / 3, ("x", "y"): 0.005})
    assert pc[("cot", "x")].mean_diff == pytest.approx(-4 / 12)
    assert (pc[("cot", "x")].ci_lo, pc[("cot", "x")].ci_hi) == pytest.approx(_brute_ci(-dxc, 0.95), abs=1e-8)
    for r in [xc, yc, *pc.values()]:
        assert (r.unit, r.family, r.bootstrap) == ("-", "group", 8000 if r in (xc, yc) else 12000)
        assert pd.isna(r.position) and pd.isna(r.k_match) and pd.isna(r.verdict) and pd.isna(r.reason)
        assert pd.isna(r.n_needed) and pd.isna(r.n_needed_hi) and not r.is_verdict
    # no column every row has is left NULL (a dropped default reads NULL, not False / a number)
    for col in ("run_id", "axis", "design", "against", "unit", "n_tasks", "n_cells", "mean_diff", "ci_lo", "ci_hi",
                "p_value", "method", "family_size", "p_holm", "level_holm", "ci_lo_holm", "ci_hi_holm", "is_verdict",
                "bootstrap", "alpha", "power"):
        assert st.sql(f"SELECT count(*) FROM paired_tests WHERE {col} IS NULL")[0][0] == 0, col
    assert st.sql("SELECT count(*) FROM paired_tests WHERE is_verdict")[0][0] == 4  # x and y, tokens, all and src
    # a rerun replaces the rows
    before = st.sql("SELECT count(*) FROM paired_tests")[0][0]
    assert compute_paired(st, "r", spec) == before == st.sql("SELECT count(*) FROM paired_tests")[0][0]
    st.close()


def test_against_cot_without_a_cot_design_is_against_the_curves_maj1(tmp_path):
    n = 12
    st = _store(tmp_path / "m.duckdb", {"x": {"y": _won(n, 10), "tokens": [300] * n, "budget": [60] * n}}, n)
    compute_paired(st, "r", StatsSpec(match="tokens", bootstrap=4096))
    r = st.df("SELECT * FROM paired_tests WHERE against = 'cot' AND axis = 'all'").iloc[0]
    # maj@1 of every cell is 0.3: d = +0.7 ×10, −0.3 ×2; the suite's test (sign-flip), p by brute force
    d = _won(n, 10) - 0.3
    assert r["method"] == "sign-flip" and r["p_value"] == pytest.approx(_brute_p(d), abs=1e-12)
    assert _brute_p(d) == pytest.approx(8 / 4096)
    assert r["mean_diff"] == pytest.approx(d.mean()) and r["sd_task"] == pytest.approx(d.std(ddof=1))
    assert pd.isna(r["n_discordant_plus"]) and pd.isna(r["n_discordant_minus"])
    st.close()


def test_two_tasks_get_a_needs_n_and_seeds_count_as_cells(tmp_path):
    """Student t on 2 tasks of 4 seeds: d = (1 − 0.5, ¾ − 0.5) = (0.5, 0.25): mean 0.375, sd 0.176777,
    se 0.125; df 1 is Cauchy, so the 50% interval is mean ± tan(π/4)·se = [0.25, 0.5] and
    p = 1 − (2/π)·atan(3) = 0.2048 (inconclusive). needs n: (2.801585·0.176777/0.5)² = 0.25 → 2 (the
    floor), (2.801585·0.176777/0.25)² = 3.92 → 4."""
    ds = {"x": {"y": [[1, 1, 1, 1], [1, 1, 1, 0]], "tokens": [300, 300], "budget": [60, 60]}}
    st = _store(tmp_path / "s.duckdb", ds, n=2, seeds=4)
    compute_paired(st, "r", StatsSpec(match="tokens", test="student-t"))
    r = st.df("SELECT * FROM paired_tests WHERE against = 'curve' AND axis = 'all' AND unit = 'tokens'").iloc[0]
    assert (r["n_tasks"], r["n_cells"], r["method"]) == (2, 8, "Student t")
    assert r["mean_diff"] == pytest.approx(0.375) and r["sd_task"] == pytest.approx(math.sqrt(2) / 8)
    assert r["p_value"] == pytest.approx(1 - 2 / math.pi * math.atan(3))
    assert (r["n_needed"], r["n_needed_hi"]) == (2, 4)
    assert r["verdict"] == "inconclusive" and r["reason"] == "needs n \u2248 2\u20134 tasks (has 2)"
    st.close()


def test_one_task_stores_no_sd_and_claims_no_n(tmp_path):
    """One task: its SD is undefined (stored as NULL) and no n is planned from it."""
    st = _store(tmp_path / "o.duckdb", {"x": {"y": [1], "tokens": [300], "budget": [60]}}, n=1)
    compute_paired(st, "r", StatsSpec(match="tokens", test="bootstrap-t"))
    r = st.df("SELECT * FROM paired_tests WHERE against = 'curve' AND axis = 'all' AND unit = 'tokens'").iloc[0]
    assert r["n_tasks"] == 1 and r["p_value"] == 1.0 and r["mean_diff"] == pytest.approx(0.5)
    for col in ("sd_task", "n_needed", "n_needed_hi"):
        assert pd.isna(r[col]), col
    assert r["reason"] == "no difference shown at n = 1"
    st.close()


def test_the_verdict_unit_falls_back_to_tokens_only_for_a_budget_match(tmp_path):
    n = 12
    ds = {"x": {"y": _won(n, 10), "tokens": [300] * n, "budget": [60] * n}}
    st = _store(tmp_path / "u.duckdb", ds, n, curve_budget=0.0)  # the curve recorded no budget spend
    units = {"budget": "tokens", "tokens": "tokens", "calls": "calls"}
    for match, want in units.items():
        compute_paired(st, "r", StatsSpec(match=match))
        got = st.sql("SELECT unit FROM paired_tests WHERE is_verdict AND axis = 'all'")
        assert got == [(want,)], match
    assert st.sql("SELECT count(*) FROM paired_tests WHERE unit = 'budget'")[0][0] == 0
    st.close()


def test_a_design_whose_cost_varies_is_tested_on_the_cost_adjusted_differences(tmp_path):
    """x costs 200 and 300 tokens on alternate tasks: c̄ = 250, k̂ = 2.5 (curve 0.45, slope 0.1 per
    sample), every sample 100 tokens (s_t = s̄). By hand: IF_t = (c_t − 250)/100 = ∓½ and
    d'_t = d_t − 0.1·IF_t = d_t ± 0.05: the test reads d', not d."""
    n = 12
    tok = np.array([200, 300] * 6)
    st = _store(tmp_path / "v.duckdb", {"x": {"y": _won(n, 10), "tokens": tok, "budget": [60] * n}}, n)
    compute_paired(st, "r", StatsSpec(match="tokens", bootstrap=4096))
    r = st.df("SELECT * FROM paired_tests WHERE against = 'curve' AND axis = 'all' AND unit = 'tokens'").iloc[0]
    d = _won(n, 10) - 0.45
    adj = d - 0.1 * (tok - 250) / 100
    assert r["k_match"] == pytest.approx(2.5) and r["mean_diff"] == pytest.approx(d.mean())
    assert _brute_p(adj) == pytest.approx(38 / 4096) and _brute_p(d) == pytest.approx(28 / 4096)  # it matters
    assert r["p_value"] == pytest.approx(38 / 4096, abs=1e-12)
    assert r["sd_task"] == pytest.approx(adj.std(ddof=1))
    st.close()


def test_the_small_rules_by_hand():
    import zlib

    from masbench.harness.paired_tests import MAX_RESAMPLES, _f, family_of, resamples_for, stats_spec_of
    from masbench.harness.stats.clustered import comparison_seed as _seed

    # each comparison's resampling seed: the suite's seed and the comparison's parts, so a published
    # p-value is reproducible from (data, stats.seed) on any machine
    assert _seed(7, "all", None, "tokens", "x") == 7 * 1_000_003 + zlib.crc32(b"all|None|tokens|x")
    assert _seed(0, "cot") == zlib.crc32(b"cot")
    # B ≥ stats.bootstrap and ≥ 20·m/α (m ≥ 1), at most the cap
    spec = StatsSpec(bootstrap=100, alpha=0.05)
    assert [resamples_for(m, spec) for m in (0, 1, 3, 7)] == [400, 400, 1200, 2800]
    assert resamples_for(3, StatsSpec()) == 2000 and resamples_for(3, StatsSpec(alpha=0.01)) == 6000
    assert resamples_for(7, StatsSpec(bootstrap=100, alpha=0.03)) == 4667  # ⌈4666.67⌉
    assert MAX_RESAMPLES == 200_000 and resamples_for(10**6, spec) == 200_000
    assert resamples_for(10**6, StatsSpec(bootstrap=300_000)) == 300_000
    assert (family_of("all"), family_of("depth"), family_of("src")) == ("group", "axis", "axis")
    assert _f(2) == 2.0 and _f("2.5") == 2.5 and _f(None) is None and _f("x") is None and _f(math.nan) is None
    assert stats_spec_of(None) == StatsSpec() == stats_spec_of({}) == stats_spec_of({"stats": None})
    assert stats_spec_of({"stats": {"alpha": 0.1, "test": "student-t"}}) == StatsSpec(alpha=0.1, test="student-t")


def test_mcnemar_of_seed_means_is_exact_on_their_lattice(tmp_path):
    """Two seeds that disagree: per-task means on the ½ lattice; the p is the exact sign-flip p over
    every vector (brute force), not a Monte-Carlo estimate (B = 2000 < 2^12 here)."""
    n = 12
    ya = [[1, 1]] * 6 + [[1, 0]] * 4 + [[0, 0]] * 2
    yb = [[0, 0]] * 6 + [[0, 0]] * 4 + [[0, 1]] * 2  # a − b per task: 1 ×6, ½ ×4, −½ ×2
    ds = {"a": {"y": ya, "tokens": [300] * n, "budget": [60] * n}, "b": {"y": yb, "tokens": [300] * n, "budget": [60] * n}}
    st = _store(tmp_path / "l.duckdb", ds, n, seeds=2)
    compute_paired(st, "r")
    r = st.df("SELECT * FROM paired_tests WHERE against = 'b' AND axis = 'all'").iloc[0]
    d = np.array([1.0] * 6 + [0.5] * 4 + [-0.5] * 2)
    assert r["bootstrap"] == 2000 and r["n_cells"] == 2 * n
    assert r["p_value"] == pytest.approx(_brute_p(d), abs=1e-12)
    st.close()


def test_reading_one_family_at_a_time_gives_the_rows_of_the_whole_run(tmp_path):
    """compute_paired reads the paired views one Holm family at a time (bounded memory at any
    number of tasks): its rows are exactly those the tests give on the whole run's frames."""
    from masbench.harness.paired_tests import _cot_rows, _pair_rows, curve_rows

    rng = np.random.default_rng(7)
    n = 30
    designs = {name: {"y": rng.integers(0, 2, n), "tokens": rng.integers(80, 400, n), "budget": rng.integers(10, 90, n)}
               for name in ("cot", "debate", "expert", "refine")}
    st = _store(tmp_path / "s.duckdb", designs, n=n, seeds=2, axis_values=(1, 2, 3))
    spec = StatsSpec(bootstrap=200, match="budget")
    names = {d: d for d in designs}
    tasks = st.df("SELECT * FROM paired_task_diffs WHERE run_id = ? ORDER BY ALL", ["r"])
    pairs = st.df("SELECT * FROM design_pair_diffs WHERE run_id = ? ORDER BY ALL", ["r"])
    want = curve_rows("r", tasks, names, spec) + _cot_rows("r", tasks, spec) + _pair_rows("r", pairs, spec)
    assert compute_paired(st, "r", spec) == len(want) > 0
    cols = list(want[0].columns())
    got = st.sql(f"SELECT {', '.join(cols)} FROM paired_tests WHERE run_id = 'r'")

    def norm(v):
        return None if v is None or (isinstance(v, float) and (math.isinf(v) or math.isnan(v))) else v

    assert sorted(map(repr, (tuple(norm(v) for v in g) for g in got))) == \
        sorted(map(repr, (tuple(norm(r[c]) for c in cols) for r in want)))
    assert {"group", "axis"} <= {r["family"] for r in want}  # both kinds of family are compared
    st.close()


def test_a_run_read_in_task_slices_gives_the_rows_of_one_read(tmp_path, monkeypatch):
    """The families are read a slice of tasks at a time (DuckDB's working memory is one slice's,
    whatever the run's size): the rows written are the same whatever the slice, and each slice's
    SQL gives exactly the view's rows of its tasks (the view, unsliced, is the reference)."""
    import masbench.harness.paired_reads as paired_reads
    import masbench.harness.paired_tests as pt
    from masbench.store.paired import design_pair_diffs, paired_task_diffs

    rng = np.random.default_rng(4)
    n = 40
    ds = {lab: {"y": rng.random((n, 2)) < p, "tokens": rng.integers(150, 450, n), "budget": rng.uniform(10, 90, n)}
          for lab, p in (("cot", 0.5), ("x", 0.6), ("y", 0.7))}
    st = _store(tmp_path / "s.duckdb", ds, n, seeds=2, axis_values=(1, 2))
    spec = StatsSpec(match="tokens", bootstrap=200)

    def written():
        compute_paired(st, "r", spec)
        return st.df("SELECT * EXCLUDE (created_at) FROM paired_tests ORDER BY ALL") \
            if "created_at" in st.columns("paired_tests") else st.df("SELECT * FROM paired_tests ORDER BY ALL")

    one = written()
    assert len(pt.task_slices(st, "r")) == 1 and len(one) > 20
    monkeypatch.setattr(paired_reads, "PAIRED_CHUNK_TASKS", 7)
    slices = pt.task_slices(st, "r")
    # string order: t0 t1 t10 … t19 t2 t20 …; every 7th starts a slice
    assert [lo for lo, _ in slices] == ["t0", "t15", "t21", "t28", "t34", "t5"]
    pd.testing.assert_frame_equal(written(), one)
    for view, name in ((paired_task_diffs, "paired_task_diffs"), (design_pair_diffs, "design_pair_diffs")):
        parts = [st.df(f"SELECT * FROM ({view(pt.slice_condition(hi is None))}) ORDER BY ALL",
                       {"run_id": "r", "lo": lo} | ({} if hi is None else {"hi": hi})) for lo, hi in slices]
        assert all(len(p) for p in parts)
        whole = st.df(f"SELECT * FROM {name} ORDER BY ALL")
        pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True).sort_values(list(whole.columns),
                                      ignore_index=True), whole.sort_values(list(whole.columns), ignore_index=True))
    st.close()
