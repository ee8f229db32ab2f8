"""`masbench report` / `masbench compare` over a synthetic store (no model calls).

The numbers in the report's CSV are checked against an independent recomputation done here, in
plain SQL over ``results`` and ``cot_sc_curve`` plus a NumPy interpolation — not through the views.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.harness import compute_paired
from masbench.store import Store, StoreWriter

RUN = "synth-20250102"
OLD_RUN = "synth-old"
K_MAX = 8
N_TASKS = 30
# label, design_name, p(correct) at depth 1 and 2, mean tokens, calls per task
DESIGNS = [
    ("cot", "cot", 0.60, 0.35, 300, 1),
    ("cot-sc[k=5]", "cot-sc", 0.75, 0.45, 1500, 5),
    ("debate", "debate", 0.55, 0.30, 2000, 7),            # within the curve, below it
    ("planner-workers", "planner-workers", 0.95, 0.85, 3600, 9),  # beyond k_max
    ("io-cheap", "io", 0.50, 0.20, 120, 1),               # below one CoT sample
]
CURVE = {("all", None): (0.48, 0.70), ("depth", 1): (0.60, 0.82), ("depth", 2): (0.36, 0.58)}
SAMPLE_TOKENS = 310.0


def curve_acc(lo: float, hi: float, k: int) -> float:
    return lo if k <= 2 else lo + (hi - lo) * (1 - math.exp(-(k - 2) / 2.5))


def build_synthetic_store(path: Path, with_curve: bool = True, zero_token_design: bool = False) -> Path:
    """A SIMULATED run of ~5 designs × 30 tasks (axis depth 1 and 2) plus its CoT-SC curve."""
    rng = random.Random(7)
    with Store(path) as st:
        for rid, created in ((OLD_RUN, "2024-01-01 00:00:00"), (RUN, "2025-01-02 03:04:05")):
            st.sql("INSERT INTO runs(run_id, suite, status, created_at, finished_at, models, simulated) VALUES "
                   "(?, 'synthetic', 'finished', ?, ?, ?, true)",
                   [rid, created, created, '{"default": "sim/medium", "judge": "sim/strong"}'])
        w = StoreWriter(st)
        w.add("results", {"run_id": OLD_RUN, "design": "old-design", "design_name": "old", "task_id": "t0", "seed": 0,
                          "axis": "depth", "axis_value": 1, "correct": True, "tokens": 10, "calls": 1,
                          "cost_usd": 0.0, "status": "ok", "simulated": True})
        designs = DESIGNS + ([("static", "static", 0.1, 0.1, 0, 0)] if zero_token_design else [])
        for label, name, p1, p2, tok, calls in designs:
            for i in range(N_TASKS):
                depth = 1 if i < N_TASKS // 2 else 2
                status, correct = "ok", rng.random() < (p1 if depth == 1 else p2)
                tokens = max(0, int(rng.gauss(tok, tok * 0.15))) if tok else 0
                if label == "debate" and i == 3:
                    status, correct, tokens = "failed", False, 0
                if label == "planner-workers" and i in (5, 20):
                    status = "budget_exhausted"
                w.add("results", {
                    "run_id": RUN, "design": label, "design_name": name, "task_id": f"t{i:02d}", "seed": 0,
                    "source": "masbench.depth", "axis": "depth", "axis_value": depth, "answer": "1", "gold": "1",
                    "correct": correct, "partial": float(correct), "prompt_tokens": tokens // 2,
                    "completion_tokens": tokens - tokens // 2, "tokens": tokens, "cost_usd": tokens * 2e-6,
                    "calls": calls, "status": status, "simulated": True})
        if with_curve:
            for (axis, value), (lo, hi) in CURVE.items():
                n = N_TASKS if axis == "all" else N_TASKS // 2
                for k in range(1, K_MAX + 1):
                    a = curve_acc(lo, hi, k)
                    w.add("cot_sc_curve", {"run_id": RUN, "axis": axis, "axis_value": value, "k": k, "n_tasks": n,
                                           "accuracy": a, "ci_lo": max(0, a - 0.12), "ci_hi": min(1, a + 0.12),
                                           "tokens": k * SAMPLE_TOKENS, "calls": float(k),
                                           "cost_usd": k * SAMPLE_TOKENS * 2e-6})
            for i in range(N_TASKS):  # per-cell curve: every cell sits on its depth's curve (means match 'all')
                lo, hi = CURVE[("depth", 1 if i < N_TASKS // 2 else 2)]
                for k in range(1, K_MAX + 1):
                    w.add("cot_sc_task_curve", {"run_id": RUN, "task_id": f"t{i:02d}", "seed": 0, "k": k,
                                                "accuracy": curve_acc(lo, hi, k), "tokens": k * SAMPLE_TOKENS,
                                                "cost_usd": k * SAMPLE_TOKENS * 2e-6})
        w.flush()
        if with_curve:
            compute_paired(st, RUN)
    return path


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Path:
    return build_synthetic_store(tmp_path_factory.mktemp("report") / "synth.duckdb")


@pytest.fixture(scope="module")
def report_dir(synth, tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("out") / "rep"
    res = CliRunner().invoke(app, ["report", "--store", str(synth), "--out", str(out)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return out, res.output


def _independent(store_path: Path) -> pd.DataFrame:
    """Accuracy, tokens, × CoT, marginal utility and iso-cost gap from the raw tables."""
    with Store(store_path, read_only=True) as st:
        df = st.df("""
            WITH d AS (SELECT design, count(*) AS n, avg(CASE WHEN correct THEN 1.0 ELSE 0.0 END) AS accuracy,
                              avg(tokens) AS tokens, avg(calls) AS calls
                       FROM results WHERE run_id = ? GROUP BY design),
                 c AS (SELECT accuracy AS cot_acc, tokens AS cot_tok FROM d WHERE design = 'cot')
            SELECT d.*, d.tokens / c.cot_tok AS x_cot,
                   CASE WHEN d.tokens = c.cot_tok THEN NULL
                        ELSE 100 * (d.accuracy - c.cot_acc) / ((d.tokens - c.cot_tok) / 1000) END AS mu
            FROM d, c ORDER BY design""", [RUN])
        cv = st.df("SELECT k, tokens, accuracy FROM cot_sc_curve WHERE run_id = ? AND axis = 'all' ORDER BY k", [RUN])
    xs, ys = cv["tokens"].to_numpy(), cv["accuracy"].to_numpy()
    df["iso_gap"] = [a - np.interp(t, xs, ys) if xs[0] <= t <= xs[-1] else np.nan
                     for a, t in zip(df["accuracy"], df["tokens"])]
    return df.set_index("design")


def _close(a, b) -> bool:
    if pd.isna(a) or pd.isna(b):
        return pd.isna(a) and pd.isna(b)
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


@pytest.mark.slow
def test_report_writes_all_files(report_dir):
    out, output = report_dir
    for name in ("cost_accuracy.png", "cost_accuracy.svg", "accuracy_by_axis.png", "marginal_utility.csv",
                 "marginal_utility_by_axis.csv", "marginal_utility.md", "index.html"):
        p = out / name
        assert p.exists() and p.stat().st_size > 0, name
    for png in ("cost_accuracy.png", "accuracy_by_axis.png"):
        head = (out / png).read_bytes()[:8]
        assert head == b"\x89PNG\r\n\x1a\n"
        assert (out / png).stat().st_size > 10_000  # a real figure, not an empty canvas
    page = (out / "index.html").read_text()
    # `masbench report` links designs to the live trace viewer by default: the cost/accuracy figure is
    # then inline SVG (its points are links), the other figure an <img>
    assert "<div class='fig'><svg" in page and "src='accuracy_by_axis.png'" in page
    assert "SIMULATED (sim/ models)" in page and RUN in page and "synthetic" in page
    assert "sim/medium" in page and "2025-01-02" in page
    for label, *_ in DESIGNS:
        assert label in page
    assert "SIMULATED" in (out / "cost_accuracy.svg").read_text()  # the plot title says it too
    md = (out / "marginal_utility.md").read_text()
    assert "SIMULATED" in md and "debate:" in md
    assert str(out) in output  # says where files were written


def test_csv_numbers_match_independent_sql(report_dir, synth):
    out, _ = report_dir
    csv = pd.read_csv(out / "marginal_utility.csv").set_index("design")
    ind = _independent(synth)
    assert set(csv.index) == {d[0] for d in DESIGNS}  # latest run only: old-design is not there
    for design, r in ind.iterrows():
        c = csv.loc[design]
        assert c["n"] == r["n"] == N_TASKS
        assert _close(c["accuracy"], r["accuracy"]), design
        assert _close(c["tokens"], r["tokens"]), design
        assert _close(c["calls"], r["calls"]), design
        assert _close(c["x_cot_tokens"], r["x_cot"]), design
        assert _close(c["mu_pp_per_1k_tokens"], r["mu"]), design
        assert _close(c["iso_gap_tokens"], r["iso_gap"]), (design, c["iso_gap_tokens"], r["iso_gap"])
    # the synthetic designs exercise every position against the curve
    assert csv.loc["debate", "cost_vs_curve"] == "within" and csv.loc["debate", "iso_gap_tokens"] < 0
    assert csv.loc["planner-workers", "cost_vs_curve"] == "beyond"
    assert pd.isna(csv.loc["planner-workers", "iso_gap_tokens"])
    assert csv.loc["io-cheap", "cost_vs_curve"] == "below"
    assert csv.loc["planner-workers", "n_budget_exhausted"] == 2 and csv.loc["debate", "n_failed"] == 1
    assert bool(csv.loc["planner-workers", "pareto"])  # most accurate design
    assert csv.loc["cot", "verdict"] == "baseline" and csv.loc["debate", "verdict"] in ("not worth it", "inconclusive")


def test_per_axis_csv_matches_results(report_dir, synth):
    out, _ = report_dir
    ax = pd.read_csv(out / "marginal_utility_by_axis.csv")
    assert set(ax["axis"]) == {"depth"} and set(ax["axis_value"]) == {1, 2}
    with Store(synth, read_only=True) as st:
        ind = st.df("""SELECT design, axis_value, avg(CASE WHEN correct THEN 1.0 ELSE 0.0 END) AS acc, avg(tokens) AS tok
                       FROM results WHERE run_id = ? GROUP BY ALL""", [RUN])
        kmax = dict(st.sql("SELECT axis_value, accuracy FROM cot_sc_curve WHERE run_id = ? AND axis = 'depth' "
                           "AND k = ?", [RUN, K_MAX]))
    m = ax.merge(ind, on=["design", "axis_value"])
    assert len(m) == len(DESIGNS) * 2
    assert np.allclose(m["accuracy"], m["acc"]) and np.allclose(m["tokens"], m["tok"])
    assert np.allclose(m["gap_vs_kmax"], m["accuracy"] - m["axis_value"].map(kmax))


@pytest.mark.slow
def test_compare_prints_every_design_and_verdicts(synth):
    res = CliRunner().invoke(app, ["compare", "--store", str(synth)], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    for label, *_ in DESIGNS:
        assert label in res.output
    assert "SIMULATED" in res.output
    assert "debate: \u2212" in res.output and "vs CoT-SC at equal tokens" in res.output
    assert "planner-workers:" in res.output and "CoT-SC@8" in res.output
    assert "cot-sc[k=5]:" not in res.output  # baselines get no verdict line
    res = CliRunner().invoke(app, ["compare", "--store", str(synth), "--axis", "depth", "--run", RUN],
                             env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "depth = 1" in res.output and "depth = 2" in res.output
    res = CliRunner().invoke(app, ["compare", "--store", str(synth), "--run", "nope"])
    assert res.exit_code == 2 and "nope" in res.output


@pytest.mark.slow
def test_report_without_curve_and_with_zero_tokens(tmp_path):
    p = build_synthetic_store(tmp_path / "nocurve.duckdb", with_curve=False, zero_token_design=True)
    out = tmp_path / "rep"
    res = CliRunner().invoke(app, ["report", "--store", str(p), "--out", str(out), "--run", RUN],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert (out / "cost_accuracy.png").read_bytes()[:4] == b"\x89PNG"
    page = (out / "index.html").read_text()
    assert "no CoT-SC curve" in page and "static: 0 tokens per task" in page
    csv = pd.read_csv(out / "marginal_utility.csv").set_index("design")
    assert csv["iso_gap_tokens"].isna().all()
    assert set(csv["verdict"]) <= {"baseline", "no CoT-SC curve"}
    res = CliRunner().invoke(app, ["compare", "--store", str(p)], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "static" in res.output


def test_report_errors_cleanly(tmp_path):
    res = CliRunner().invoke(app, ["report", "--store", str(tmp_path / "missing.duckdb"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no store" in res.output
    with Store(tmp_path / "empty.duckdb"):
        pass
    res = CliRunner().invoke(app, ["report", "--store", str(tmp_path / "empty.duckdb"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no runs" in res.output


def test_embedded_label_and_verdict_rule():
    from masbench.harness.stats.decide import decide
    from masbench.report import RunInfo, verdict

    info = RunInfo("r", "quickstart", "finished", None, None, {"default": "embedded/smollm2"}, False)
    assert info.label == "embedded SmolLM2-135M (real model, weak by design)"
    # the rule: significant (Holm p < α and the Holm-level CI excludes 0) in a direction, by position
    sig_up, sig_down, none = ((0.02, 0.2), 0.01), ((-0.2, -0.02), 0.01), ((-0.05, 0.1), 0.4)
    for pos, want in (("within", ("worth it", "not worth it", "inconclusive")),
                      ("below", ("worth it", "inconclusive", "inconclusive")),
                      ("beyond", ("inconclusive", "not worth it", "not shown worth it"))):
        got = tuple(decide(pos, 0.0, ci, p, 0.05, 120, 30, 8)[0] for ci, p in (sig_up, sig_down, none))
        assert got == want, pos
    assert decide("within", 0.03, (-0.05, 0.1), 0.4, 0.05, 120, 30, 8)[1] == "needs n \u2248 120 tasks (has 30)"
    assert decide("beyond", 0.0, (-0.05, 0.1), 0.4, 0.05, None, 30, 8)[1] == "costs more than CoT-SC@8"
    # a p below α with a CI touching 0 is not significant (both must agree)
    assert decide("within", 0.1, (0.0, 0.2), 0.01, 0.05, 50, 30, 8)[0] == "inconclusive"
    row = dict(design="x", baseline=False, k_max=8, x_cot_tokens=3.1, paired_verdict="not worth it",
               paired_reason="significantly worse than CoT-SC at equal cost", paired_diff=-0.12,
               paired_position="within", paired_unit="tokens", paired_k_match=3.2, paired_ci_lo_holm=-0.2,
               paired_ci_hi_holm=-0.03, paired_level=0.025, paired_family=2, paired_p_holm=0.012, paired_n_tasks=30)
    v = verdict(row)
    assert v.verdict == "not worth it"
    assert v.line == ("x: \u221212.0 pp, 97.5% paired CI [\u221220.0, \u22123.0], Holm p = 0.012 (2 designs), 30 tasks "
                      "vs CoT-SC at equal tokens (k \u2248 3.2) (3.1\u00d7 CoT cost) \u2014 not worth it "
                      "(significantly worse than CoT-SC at equal cost)")
    assert "CoT-SC@8 (k_max, cheaper)" in verdict({**row, "paired_position": "beyond"}).line
    assert verdict({**row, "paired_verdict": None}).verdict == "inconclusive"
    assert verdict({**row, "k_max": None}).verdict == "no CoT-SC curve"
    assert verdict({**row, "baseline": True}).verdict == "baseline"


@pytest.mark.slow
def test_compare_shows_paired_ci_and_tests_against_references(synth):
    res = CliRunner().invoke(app, ["compare", "--store", str(synth)], env={"COLUMNS": "250"})
    assert "paired CI [" in res.output and "verdict rule: paired" in res.output
    with Store(synth, read_only=True) as st:
        pw = st.df("""SELECT * FROM paired_tests WHERE against = 'curve' AND axis = 'all' AND unit = 'tokens'
                      AND design = 'planner-workers'""").iloc[0]
        pairs = st.df("SELECT * FROM paired_tests WHERE against NOT IN ('curve', 'cot') AND axis = 'all'")
    assert pw["position"] == "beyond" and pw["k_match"] == K_MAX
    assert len(pairs) == len(DESIGNS) * (len(DESIGNS) - 1) // 2 and set(pairs["method"]) == {"exact McNemar (clustered by task)"}
    assert (pairs["family_size"] == len(pairs)).all()  # Holm across every pair of the group
    res = CliRunner().invoke(app, ["compare", "--store", str(synth), "--against", "debate"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "exact McNemar" in res.output and res.output.count("│ debate") == len(DESIGNS) - 1
    res = CliRunner().invoke(app, ["compare", "--store", str(synth), "--against", "cot"], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "planner-workers" in res.output
    res = CliRunner().invoke(app, ["compare", "--store", str(synth), "--against", "nope"])
    assert res.exit_code == 2 and "references:" in res.output


def test_compare_prints_the_run_header_once_for_several_axes(synth):
    """`compare --axis depth --axis all`: one header, then the tables and verdicts of depth 1, depth 2
    and all tasks pooled (make demo prints its two levels this way)."""
    res = CliRunner().invoke(app, ["compare", "--store", str(synth), "--axis", "depth", "--axis", "all"],
                             env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert res.output.count(f"run {RUN} · suite synthetic") == 1 and res.output.count("budget basis:") == 1
    assert "depth = 1" in res.output and "depth = 2" in res.output and "all tasks (pooled over every task group)" in res.output
    assert res.output.count("debate: ") == 3  # its verdict in each of the three groups
    assert res.output.count("verdict rule:") == 1


def test_marginal_utility_cell_says_same_cost_instead_of_a_ratio():
    """The view decides (same_cost_*); the table shows "same cost" for it and the ratio otherwise,
    with the '*' of a cheaper design."""
    from masbench.report.tables import HEADERS, SAME_COST, formatted_row

    base = dict(design="d", n=4, accuracy=0.5, ci_lo=0.2, ci_hi=0.8, tokens=105.0, calls=1.0, cost_usd=0.001,
                cot_tokens=100.0, k_max=4)
    mu1k, mu_usd = HEADERS.index("MU pp/1k tok"), HEADERS.index("MU pp/$")
    same = formatted_row({**base, "same_cost_tokens": True, "same_cost_usd": True, "mu_pp_per_1k_tokens": None,
                          "mu_pp_per_usd": None})
    assert (same[mu1k], same[mu_usd]) == (SAME_COST, SAME_COST) == ("same cost", "same cost")
    dear = formatted_row({**base, "tokens": 300.0, "same_cost_tokens": False, "same_cost_usd": None,
                          "mu_pp_per_1k_tokens": 125.0, "mu_pp_per_usd": None})
    assert (dear[mu1k], dear[mu_usd]) == ("+125.00", "–")
    cheap = formatted_row({**base, "tokens": 50.0, "same_cost_tokens": False, "mu_pp_per_1k_tokens": -500.0})
    assert cheap[mu1k] == "-500.00*"


def test_report_gives_each_task_group_its_figure_table_and_verdicts(report_dir, synth):
    """Per group what `compare --axis depth` prints (the same verdict lines), then all tasks pooled."""
    out, _ = report_dir
    for stem in ("cost_accuracy_depth-1", "cost_accuracy_depth-2"):
        assert (out / f"{stem}.png").stat().st_size > 10_000 and (out / f"{stem}.svg").exists()
    res = CliRunner().invoke(app, ["compare", "--store", str(synth), "--axis", "depth"], env={"COLUMNS": "250"})
    debate = [line for line in res.output.splitlines() if line.startswith("debate: ")]
    assert len(debate) == 2  # depth 1, depth 2
    md = (out / "marginal_utility.md").read_text()
    d1, d2, pooled = md.index("### depth = 1"), md.index("### depth = 2"), md.index("## All tasks, pooled over the 2 task groups")
    assert d1 < d2 < pooled
    assert d1 < md.index(f"- {debate[0]}") < d2 < md.index(f"- {debate[1]}") < pooled
    page = (out / "index.html").read_text()
    assert page.index("<section class='group' id='depth-1'>") < page.index("<section class='group' id='depth-2'>") \
        < page.index("<section class='group' id='pooled'>")


def test_compare_shows_same_cost_for_a_design_within_noise_of_cot(tmp_path):
    """Through the store's views to the terminal: `twin` costs CoT's tokens + 3 a task (300 ± 45
    per task: 1% over CoT, under the 10% floor) and reads "same cost"; `dear` costs 3× and shows its
    ratio, 100 · (0.6 − 0.4) / (0.6 k tokens) = +33.33 pp/1k tok."""
    path = tmp_path / "twin.duckdb"
    with Store(path) as st:
        st.sql("INSERT INTO runs(run_id, suite, status, models, simulated) VALUES "
               "('twin-run', 'twin', 'finished', '{\"default\": \"sim/medium\"}', true)")
        w = StoreWriter(st)
        for i in range(10):
            cot = 300 + (45 if i % 2 else -45)
            for design, tokens, ok in (("cot", cot, i < 4), ("twin", cot + 3, i < 8), ("dear", 3 * cot, i < 6)):
                w.add("results", {"run_id": "twin-run", "design": design, "design_name": design, "task_id": f"t{i}",
                                  "seed": 0, "source": "src", "correct": ok, "tokens": tokens, "calls": 1,
                                  "cost_usd": 0.0, "status": "ok", "simulated": True})
        w.flush()
    res = CliRunner().invoke(app, ["compare", "--store", str(path)], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    rows = {line.split("│")[1].split()[0]: line for line in res.output.splitlines() if line.startswith("│")}
    assert "same cost" in rows["twin"] and "+33.33" in rows["dear"] and "same cost" not in rows["dear"]
    assert "same cost: the design's cost is within noise of CoT's" in res.output
