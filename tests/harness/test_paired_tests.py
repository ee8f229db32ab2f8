"""paired_tests from hand-built stores: the budget unit, per-axis Holm families, the needs-n range,
McNemar clustered by task. Expected values from the rows by hand."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from masbench.harness import compute_paired
from masbench.harness.stats.paired import mcnemar_exact
from masbench.harness.stats.tests.student_t import t_quantile
from masbench.spec import StatsSpec
from masbench.store import Store, StoreWriter

K_ACC = {1: 0.3, 2: 0.4, 3: 0.5, 4: 0.6}  # every cell's maj@k: the curve is 0.3, 0.4, 0.5, 0.6


def _store(path, designs: dict[str, dict], n: int = 40, seeds: int = 1, axis_values=(None,), basis="completion"):
    """designs: label → {"y": per-task 0/1 (n,), "tokens": per-task, "budget": per-task}. Curve: k·100
    tokens, k·20 on the budget basis; per-group curves for each axis value."""
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
                                   "cost_usd": 0.0, "budget_basis": basis, "budget_spent": 20.0 * k})
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
