"""No silent zeros and an honest budget basis, through whole runs: an unpriced model stops the run
before any call; a usage-less response is recorded as such; ``budget: {basis: completion}``
enforces and matches on completion tokens; the counterfactual-pricing view reproduces a run's own
cost from its own prices and re-prices it under another public price table."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.harness import RunOptions, run_suite

M = 1e6


def suite_file(tmp_path: Path, name: str, models: str, designs: str = "[cot]", n: int = 2, k_max: int = 2,
               budget: str = "{}") -> Path:
    d = tmp_path / "tasks"
    d.mkdir(exist_ok=True)
    p = d / f"{name}.yaml"
    p.write_text(f"""name: {name}
models: {models}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: {n}, seed: 3}}
designs: {designs}
cot_sc: {{k_max: {k_max}, bootstrap: 50}}
budget: {budget}
cache: false
store: {tmp_path / "runs" / (name + ".duckdb")}
""")
    return p


def test_unpriced_model_stops_the_run_before_any_call(http_server, tmp_path):
    srv = http_server(prompt_tokens=5, completion_tokens=5)
    suite = suite_file(tmp_path, "unpriced", f"{{default: {{id: openai/no-such-model-xyz, api_base: '{srv.base_url}'}}}}")
    res = CliRunner().invoke(app, ["run", str(suite)])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip() and not ln.strip().isdigit()]
    assert len(lines) == 1, res.output  # one line ...
    assert "'default'" in lines[0] and "openai/no-such-model-xyz" in lines[0] and "price: 0" in lines[0]
    assert srv.stats.requests == 0  # ... and no call was made
    assert not (tmp_path / "runs" / "unpriced.duckdb").exists()
    # the same through a --model override of a priced (simulated) suite
    ok = suite_file(tmp_path, "simpriced", "{default: sim/p60}")
    res = CliRunner().invoke(app, ["run", str(ok), "--model", "default=openai/no-such-model-xyz"])
    assert res.exit_code == 2 and "no-such-model-xyz" in res.output


@pytest.mark.slow
async def test_usage_less_responses_are_recorded_as_usage_missing(http_server, tmp_path):
    srv = http_server(omit_usage=True, reply="Answer: 7")
    suite = suite_file(tmp_path, "nousage",
                       f"{{default: {{id: openai/free-local-model, api_base: '{srv.base_url}', price: 0}}}}")
    s = await run_suite(RunOptions(suite=str(suite)))  # price: 0 lets an unpriced model run
    assert srv.stats.requests > 0
    con = duckdb.connect(str(s.store), read_only=True)
    rows = con.execute("SELECT status, usage_status, prompt_tokens, completion_tokens, cost_usd, cost_source, error "
                       "FROM calls WHERE run_id = ?", [s.run_id]).fetchall()
    counts = con.execute("SELECT sum(calls), sum(usage_missing) FROM call_status_counts WHERE run_id = ?",
                         [s.run_id]).fetchone()
    con.close()
    assert rows and all(r[0] == "usage_missing" and r[1] == "missing" for r in rows)
    assert all(r[2] is None and r[3] is None and r[4] is None for r in rows)  # NULL, not 0
    assert all(r[5] == "zero-declared" and r[6].startswith("usage_missing") for r in rows)
    assert counts == (len(rows), len(rows))
    out = CliRunner().invoke(app, ["compare", "--store", str(s.store), "--run", s.run_id])
    assert f"{len(rows)} without usage (usage_missing)" in " ".join(out.output.split()), out.output


CAP = 700


async def _basis_run(tmp_path: Path, basis: str):
    suite = suite_file(tmp_path, f"basis-{basis}", "{default: sim/p60}", n=4, k_max=3,
                       designs="[debate, {design: cot-sc, params: {k: 9}}]",
                       budget=f"{{per_task_tokens: {CAP}, basis: {basis}}}")
    s = await run_suite(RunOptions(suite=str(suite)))
    return s, duckdb.connect(str(s.store), read_only=True)


@pytest.mark.slow
async def test_budget_basis_completion_enforces_and_matches_on_completion_tokens(tmp_path):
    s, con = await _basis_run(tmp_path, "completion")
    rid = [s.run_id]
    per_cell = con.execute("""SELECT design, task_id, seed, sum(completion_tokens), sum(prompt_tokens + completion_tokens)
                              FROM calls WHERE run_id = ? AND purpose = 'design' GROUP BY ALL""", rid).fetchall()
    assert max(r[3] for r in per_cell) <= CAP  # the cap holds on completion tokens ...
    assert max(r[4] for r in per_cell) > CAP  # ... and prompt tokens are not counted against it
    exhausted = con.execute("SELECT count(*) FROM results WHERE run_id = ? AND status = 'budget_exhausted'",
                            rid).fetchone()[0]
    assert exhausted > 0  # the cap really bit
    res = con.execute("SELECT budget_basis, budget_spent, completion_tokens FROM results WHERE run_id = ?", rid).fetchall()
    assert all(b == "completion" and spent == ct for b, spent, ct in res)
    # the curve's spend at k = k × mean over tasks of the task's mean sample completion tokens
    per_task = con.execute("SELECT avg(completion_tokens) FROM pool WHERE run_id = ? GROUP BY task_id, seed",
                           rid).fetchall()
    mean_sample = float(np.mean([r[0] for r in per_task]))
    curve = con.execute("SELECT k, accuracy, budget_basis, budget_spent FROM cot_sc_curve WHERE run_id = ? "
                        "AND axis = 'all' ORDER BY k", rid).fetchall()
    for k, _acc, b, spent in curve:
        assert b == "completion" and spent == pytest.approx(k * mean_sample)
    # matching: iso_gap_budget = accuracy − the curve's accuracy interpolated at the design's completion spend
    comp = con.execute("SELECT design, accuracy, budget_spent, iso_gap_budget, budget_basis FROM design_comparison "
                       "WHERE run_id = ? AND axis = 'all'", rid).fetchall()
    xs, ys = [c[3] for c in curve], [c[1] for c in curve]
    checked = 0
    for design, acc, spent, gap, b in comp:
        assert b == "completion"
        if xs[0] <= spent <= xs[-1]:
            assert gap == pytest.approx(acc - float(np.interp(spent, xs, ys)))
            checked += 1
        else:
            assert gap is None  # outside the curve: no iso-cost gap, never an extrapolation
    assert checked or comp
    con.close()
    # the same cap on all tokens lets far fewer CoT-SC samples in: the basis changes the enforcement
    s2, con2 = await _basis_run(tmp_path, "tokens")
    q = "SELECT avg(calls) FROM results WHERE run_id = ? AND design LIKE 'cot-sc%'"
    con = duckdb.connect(str(s.store), read_only=True)
    assert con.execute(q, rid).fetchone()[0] > con2.execute(q, [s2.run_id]).fetchone()[0]
    assert con2.execute("SELECT max(t) FROM (SELECT sum(prompt_tokens + completion_tokens) t FROM calls WHERE "
                        "run_id = ? AND purpose = 'design' GROUP BY design, task_id, seed)", [s2.run_id]).fetchone()[0] <= CAP
    con.close()
    con2.close()


@pytest.mark.slow
async def test_counterfactual_pricing_reproduces_the_runs_own_cost(http_server, tmp_path):
    usage = {"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340,
             "prompt_tokens_details": {"cached_tokens": 256}, "completion_tokens_details": {"reasoning_tokens": 0}}
    srv = http_server(usage=usage, reply="Answer: 7")
    suite = suite_file(tmp_path, "reprice", f"{{default: {{id: openai/gpt-4o-mini, api_base: '{srv.base_url}'}}}}")
    s = await run_suite(RunOptions(suite=str(suite)))
    res = CliRunner().invoke(app, ["reprice", "--store", str(s.store), "--run", s.run_id, "--own",
                                   "--as", "claude-haiku-4-5"])
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(s.store), read_only=True)
    n, recorded = con.execute("SELECT count(*), sum(cost_usd) FROM calls WHERE run_id = ?", [s.run_id]).fetchone()
    got = dict(con.execute("SELECT price_table, repriced_usd FROM run_reprice WHERE run_id = ?", [s.run_id]).fetchall())
    con.close()
    assert n == srv.stats.requests > 0
    # gpt-4o-mini per call: 44 fresh × 0.15 + 256 cached × 0.075 + 40 × 0.60 = 6.6 + 19.2 + 24 = 49.8 µ$
    assert recorded == pytest.approx(n * 49.8 / M)
    assert got["own"] == pytest.approx(recorded, rel=1e-12)
    # claude-haiku-4-5's table (cache read 0.10, no writes here): 44 × 1 + 256 × 0.10 + 40 × 5 = 269.6 µ$ a call
    assert got["claude-haiku-4-5"] == pytest.approx(n * 269.6 / M)
