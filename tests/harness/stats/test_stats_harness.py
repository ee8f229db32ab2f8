"""Paired tests end to end on simulated suites: cot-sc[k] vs the curve, the tie rule, the views,
seeds clustered by task, `masbench plan` / `masbench stats`."""

from __future__ import annotations

import json
import math
import runpy
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.harness import RunOptions, compute_paired, run_suite
from masbench.store import Store, StoreWriter

SUITE = """name: {name}
models: {{default: sim/p55}}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: {n}, seed: 5}}
designs: [cot, {{design: cot-sc, params: {{k: 5}}}}, self-refine]
seeds: {seeds}
cot_sc: {{k_max: 8, bootstrap: 200, tie: {tie}}}
stats: {{match: calls, bootstrap: 1000}}
budget: {{per_task_tokens: 20000}}
store: {store}
"""


async def _run(tmp_path: Path, name: str, tie: str = "split", n: int = 40, seeds: str = "[0]"):
    d = tmp_path / "tasks"
    d.mkdir(exist_ok=True)
    p = d / f"{name}.yaml"
    p.write_text(SUITE.format(name=name, n=n, tie=tie, seeds=seeds, store=tmp_path / f"{name}.duckdb"))
    return await run_suite(RunOptions(suite=str(p)))


@pytest.mark.slow
@pytest.mark.parametrize("tie", ["split", "random", "first"])
async def test_cot_sc_at_5_agrees_with_the_curve_at_5_within_the_paired_ci(tmp_path, tie):
    s = await _run(tmp_path, f"agree-{tie}", tie)
    with Store(s.store) as st:
        row = st.df("""SELECT * FROM paired_tests WHERE run_id = ? AND axis = 'all' AND against = 'curve'
                       AND unit = 'calls' AND design = 'cot-sc[k=5]'""", [s.run_id]).iloc[0]
        cfg = json.loads(st.sql("SELECT config FROM runs WHERE run_id = ?", [s.run_id])[0][0])
        votes = [json.loads(x)["votes"]["vote"] for (x,) in st.sql(
            "SELECT detail FROM results WHERE run_id = ? AND design = 'cot-sc[k=5]'", [s.run_id])]
    assert row["k_match"] == pytest.approx(5.0) and row["position"] == "within"
    assert row["n_tasks"] == 80
    assert row["ci_lo"] <= 0 <= row["ci_hi"], (row["mean_diff"], row["ci_lo"], row["ci_hi"])
    assert row["ci_hi"] - row["ci_lo"] < 0.3  # a real interval, not an empty claim
    assert row["verdict"] is None  # baselines get no verdict
    assert cfg["cot_sc"]["tie"] == tie  # the rule is recorded with the run
    breaks = {v["tie_break"] for v in votes if v["tie"]}
    label = {"split": "split (seeded uniform draw)", "random": "random priority", "first": "first-seen"}[tie]
    assert breaks <= {label} and breaks, "no tie in 80 five-sample votes at p = 0.55 is implausible"


@pytest.mark.slow
async def test_paired_views_match_the_group_curve_and_design_metrics(tmp_path):
    s = await _run(tmp_path, "views", n=15)
    with Store(s.store) as st:
        got = st.df("""SELECT p.design, p.unit, avg(p.curve_y) AS curve_y, avg(p.y) AS y, count(*) AS n,
                              any_value(c.curve_acc_at_calls) AS at_calls, any_value(c.curve_acc_at_tokens) AS at_tok,
                              any_value(c.accuracy) AS acc
                       FROM paired_diffs p JOIN design_comparison c ON c.run_id = p.run_id AND c.axis = p.axis
                            AND c.axis_value IS NOT DISTINCT FROM p.axis_value AND c.design = p.design
                       WHERE p.run_id = ? AND p.axis = 'all' AND p.position = 'within' GROUP BY ALL""", [s.run_id])
        cells = st.sql("SELECT count(*) FROM results WHERE run_id = ? AND design = 'cot'", [s.run_id])[0][0]
    assert len(got) >= 3
    for r in got.to_dict("records"):
        want = r["at_calls"] if r["unit"] == "calls" else r["at_tok"]
        assert r["curve_y"] == pytest.approx(want, abs=1e-9), r  # per-cell interpolation averages to the curve's
        assert r["y"] == pytest.approx(r["acc"]) and r["n"] == cells


def _synthetic(path: Path, seeds: int) -> None:
    """A run whose seeds are exact copies of seed 0: clustering must not count them as evidence."""
    rng = np.random.default_rng(3)
    n = 60
    y = rng.random(n) < 0.7
    curve = np.clip(rng.normal(0.6, 0.2, n), 0, 1)
    with Store(path) as st:
        st.sql("INSERT INTO runs(run_id, suite, status, simulated) VALUES ('r', 's', 'finished', true)")
        w = StoreWriter(st)
        for s in range(seeds):
            for t in range(n):
                w.add("results", {"run_id": "r", "design": "x", "design_name": "x", "task_id": f"t{t}", "seed": s,
                                  "source": "src", "correct": bool(y[t]), "tokens": 100, "calls": 1, "cost_usd": 0.0,
                                  "status": "ok"})
                w.add("cot_sc_task_curve", {"run_id": "r", "task_id": f"t{t}", "seed": s, "k": 1,
                                            "accuracy": float(curve[t]), "tokens": 100.0, "cost_usd": 0.0})
        for axis, value in (("all", None), ("src", None)):
            w.add("cot_sc_curve", {"run_id": "r", "axis": axis, "axis_value": value, "k": 1, "n_tasks": n * seeds,
                                   "accuracy": float(curve.mean()), "ci_lo": 0.5, "ci_hi": 0.7, "tokens": 100.0,
                                   "calls": 1.0, "cost_usd": 0.0})
        w.flush()
        compute_paired(st, "r")


@pytest.mark.slow
def test_seeds_are_clustered_by_task(tmp_path):
    rows = {}
    for seeds in (1, 4):
        p = tmp_path / f"s{seeds}.duckdb"
        _synthetic(p, seeds)
        with Store(p) as st:
            rows[seeds] = st.df("""SELECT * FROM paired_tests WHERE against = 'curve' AND axis = 'all'
                                   AND unit = 'tokens'""").iloc[0]
    one, four = rows[1], rows[4]
    assert four["n_cells"] == 4 * one["n_cells"] and four["n_tasks"] == one["n_tasks"] == 60
    assert four["ci_hi"] - four["ci_lo"] == pytest.approx(one["ci_hi"] - one["ci_lo"])  # copies add no evidence
    assert four["mean_diff"] == pytest.approx(one["mean_diff"])


@pytest.mark.slow
async def test_plan_and_stats_commands(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["plan", "--delta", "10", "--accuracy", "0.6", "--seeds", "1"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    want = math.ceil((z * math.sqrt(0.7 * 0.3 + 0.6 * 0.4) / 0.1) ** 2)
    assert f"│ {want} │" in res.output.replace("  ", " ").replace("  ", " ") or str(want) in res.output
    s = await _run(tmp_path, "pilot", n=15, seeds="[0, 1]")
    res = runner.invoke(app, ["plan", "--store", str(s.store), "--delta", "10"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "self-refine" in res.output and "σ between" in res.output
    with Store(s.store) as st:
        before = st.df("SELECT * EXCLUDE (run_id) FROM paired_tests ORDER BY ALL")
    res = runner.invoke(app, ["stats", "--store", str(s.store)])
    assert res.exit_code == 0 and "paired tests written" in res.output, res.output
    with Store(s.store) as st:
        after = st.df("SELECT * EXCLUDE (run_id) FROM paired_tests ORDER BY ALL")
    assert before.equals(after)  # recomputing a stored run reproduces it exactly
    assert runner.invoke(app, ["plan", "--store", str(tmp_path / "none.duckdb")]).exit_code == 2
    assert runner.invoke(app, ["plan"]).exit_code == 2  # --delta required without a pilot


@pytest.mark.slow
def test_calibration_script_runs_end_to_end(monkeypatch, capsys):
    # run as `python SCRIPT ARGS` would, but in this process (runpy): what it prints is tested, and a
    # fresh interpreter re-importing masbench cost more CPU than the script's own work
    script = Path(__file__).resolve().parents[3] / "benchmarks" / "verdict_calibration.py"
    monkeypatch.setattr("sys.argv", [str(script), "--suites", "2", "--power-suites", "2", "--tasks", "40",
                                     "--bootstrap", "200"])
    runpy.run_path(str(script), run_name="__main__")  # an exception (or a non-zero exit) fails the test
    stdout = capsys.readouterr().out
    assert stdout.startswith("SIMULATED") and "n = 40 tasks: 2 null suites" in stdout
    for test in ("sign-flip", "student-t", "bootstrap-t", "bootstrap-t-plain"):  # every registered test, one row
        assert sum(line.startswith(test + " ") for line in stdout.splitlines()) == 1, stdout
    assert "FWER [95% CI]" in stdout and "power [95% CI]" in stdout and "paired CI width" in stdout
