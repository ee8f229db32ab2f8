"""``masbench plan --sequential`` (masbench.harness.plan_sequential) and the multi-stream p-value path."""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.harness import RunOptions, run_suite
from masbench.harness.plan_sequential import (formula_sampler, plan_sequential_formula, plan_sequential_pilot,
                                              simulate, tilt)
from masbench.harness.stats.sequential import betting_sequence, p_paths
from masbench.store import Store

SUITE = """name: {name}
models: {{default: sim/p55}}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: 15, seed: 5}}
designs: [cot, {{design: cot-sc, params: {{k: 5}}}}, self-refine]
cot_sc: {{k_max: 8, bootstrap: 200}}
stats: {{match: calls, bootstrap: 500}}
budget: {{per_task_tokens: 20000}}
store: {store}
"""


@pytest.mark.parametrize("bet", ["agrapa", "prpl"])
def test_p_paths_is_the_betting_sequences_p_column(bet):
    rng = np.random.default_rng(1)
    d = rng.choice([-1.0, -0.25, 0.0, 0.0, 0.5, 1.0], size=(5, 120))
    got = p_paths(d, bet=bet)
    for row, g in zip(d, got):
        _, path = betting_sequence(row, bet=bet, paths=True)
        assert path is not None
        np.testing.assert_allclose(g, path[:, 2], rtol=1e-10, atol=1e-14)


def test_formula_sampler_has_the_formulas_mean_and_sd():
    """Joint Bernoulli cells (p + Δ, p) with correlation ρ: mean Δ, variance
    p₁(1 − p₁) + p(1 − p) − 2ρ√(p₁(1 − p₁)p(1 − p)) (0.21 + 0.24 − 2·0.5·√(0.21·0.24) = 0.2255)."""
    d = formula_sampler(0.6, 0.1, 0.5)(np.random.default_rng(0), (400, 1000))
    assert set(np.unique(d)) <= {-1.0, 0.0, 1.0}
    assert d.mean() == pytest.approx(0.1, abs=0.004)
    assert d.var() == pytest.approx(0.21 + 0.24 - math.sqrt(0.21 * 0.24), abs=0.004)


def test_tilt_by_hand():
    """Values (−1, 0, 1) tilted to mean ½: weights ∝ (1/u, 1, u) with u − 1/u = ½(u + 1 + 1/u),
    i.e. u² − u − 3 = 0, u = (1 + √13)/2."""
    u = (1 + math.sqrt(13)) / 2
    want = np.array([1 / u, 1, u]) / (1 / u + 1 + u)
    np.testing.assert_allclose(tilt(np.array([-1.0, 0.0, 1.0]), 0.5), want, rtol=1e-9)
    np.testing.assert_allclose(tilt(np.array([-1.0, 0.0, 1.0]), 0.0), [1 / 3] * 3, rtol=1e-9)


def test_larger_effects_decide_sooner_and_no_effect_runs_to_the_cap():
    rows = plan_sequential_formula(0.6, 0.3, [0.0, 0.05, 0.10, 0.20, -0.20], level=0.05 / 3, cap=300, batch=20,
                                   streams=600, calls_per_task=12.0)
    by = {r.delta: r for r in rows}
    assert by[0.20].tasks_mean < by[0.10].tasks_mean < by[0.05].tasks_mean < by[0.0].tasks_mean
    zero = by[0.0]
    assert zero.tasks_median == 300 and zero.right <= 0.05 and zero.fixed_n is None  # ≤ level, mostly the cap
    assert by[0.20].right > 0.95 and by[-0.20].right > 0.95 and by[-0.20].tasks_mean < by[0.05].tasks_mean
    for r in rows:
        assert r.tasks_median <= r.tasks_p90 <= 300 and r.calls_mean == pytest.approx(12.0 * r.tasks_mean)
    r = by[0.20]
    z = NormalDist().inv_cdf(1 - 0.05 / 6) + NormalDist().inv_cdf(0.8)
    assert r.fixed_n == math.ceil((z * r.sd / 0.2) ** 2)


def test_stops_fall_on_the_look_grid():
    tasks, side, _ = simulate(formula_sampler(0.5, 0.2, 0.0), delta=0.2, cap=205, batch=20, level=0.05, streams=300)
    assert set(np.unique(tasks)) <= {*range(20, 201, 20), 205} and (side >= 0).all()


@pytest.mark.slow
async def test_plan_sequential_from_a_pilot_and_the_cli(tmp_path: Path):
    runner = CliRunner()
    res = runner.invoke(app, ["plan", "--sequential", "--accuracy", "0.6", "--rho", "0.4", "--calls-per-task", "12"],
                        env={"COLUMNS": "220"})
    assert res.exit_code == 0, res.output
    for want in ("true Δ (pp)", "+0.0", "+20.0", "-20.0", "fixed-n tasks", "SIMULATED"):
        assert want in res.output
    p = tmp_path / "pilot.yaml"
    p.write_text(SUITE.format(name="pilot", store=tmp_path / "pilot.duckdb"))
    s = await run_suite(RunOptions(suite=str(p)))
    with Store(s.store) as st:
        rows = plan_sequential_pilot(st, s.run_id, [0.0, 0.2], unit="calls", cap=200, streams=300)
        pilot = st.df("""SELECT task_id, avg(diff) AS d FROM paired_diffs WHERE run_id = ? AND axis = 'all'
                         AND unit = 'calls' AND design = 'self-refine' GROUP BY ALL""", [s.run_id])
    assert {r.design for r in rows} == {"self-refine"}  # baselines are not planned
    r0, r2 = sorted(rows, key=lambda r: r.delta)
    assert r2.tasks_mean < r0.tasks_mean and r0.tasks_median == 200
    assert r0.calls_per_task is not None and r0.calls_per_task > 8  # its own calls plus the pool's 8
    assert len(pilot) == 30
    res = runner.invoke(app, ["plan", "--sequential", "--store", str(s.store), "--delta", "15"], env={"COLUMNS": "220"})
    assert res.exit_code == 0, res.output
    assert "self-refine" in res.output and "+15.0" in res.output and "-15.0" in res.output
