"""The judge scorer through whole SIMULATED runs: ``judge check`` recovers a judge's configured false
pass rate within its interval; judge calls change no design's tokens, cost, budget or curve row; a
re-score is served from the cache; ``compare`` names the judge and its agreement."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.harness import RunOptions, run_suite
from masbench.harness.judge_check import judge_check

JUDGE_AGENT = """name: sim-judge
model: judge
system: You grade replies strictly.
prompt: "{question}"
temperature: 0.7
max_tokens: 64
"""

MODELS = """models:
  default: {{id: sim/solver, sim: {{accuracy: {{default: {acc}}}, completion_tokens: {{mean: 30, sd: 5}}}},
             input_usd_per_mtok: 1.0, output_usd_per_mtok: 2.0}}
  judge: {{id: sim/grader, sim: {{grading: {{false_pass: {fp}, false_fail: {ff}}},
                                 completion_tokens: {{mean: 20, sd: 3}}}},
           input_usd_per_mtok: 3.0, output_usd_per_mtok: 6.0}}
"""


def _lib(tmp_path: Path) -> Path:
    lib = tmp_path / "lib"
    (lib / "agents").mkdir(parents=True, exist_ok=True)
    (lib / "agents" / "sim-judge.yaml").write_text(JUDGE_AGENT)
    return lib


def _q(store: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def test_judge_check_recovers_the_configured_false_pass_rate(tmp_path):
    """k = 1: a reply's verdict is one sample, so the cell-level false pass rate is the profile's 0.25."""
    lib = _lib(tmp_path)
    suite = tmp_path / "check.yaml"
    suite.write_text(f"""name: check
{MODELS.format(acc=0.5, fp=0.25, ff=0.1)}
tasks: [{{generator: masbench.arith, values: [1, 2], n: 120, seed: 1}}]
designs: [cot]
cot_sc: {{k_max: 2}}
budget: {{per_task_tokens: 4000}}
judge: {{agent: sim-judge, k: 1}}
store: {tmp_path / 'check.duckdb'}
""")
    res = asyncio.run(judge_check(RunOptions(suite=str(suite), lib=[lib])))
    row = res.row
    assert row is not None and row["judge"] == "sim-judge" and row["judge_model"] == "sim/grader"
    assert row["n_checked"] == 240 and row["simulated"]
    assert row["n_rule_fail"] > 80 and row["n_rule_pass"] > 80  # accuracy 0.5: both denominators are large
    assert row["false_pass_lo"] <= 0.25 <= row["false_pass_hi"], row
    assert row["false_fail_lo"] <= 0.10 <= row["false_fail_hi"], row
    assert row["false_pass_hi"] - row["false_pass_lo"] < 0.25  # an interval that says something
    assert row["self_consistency"] is None and row["unanimous"] == 1.0  # k = 1
    assert row["unparsed"] == 0.0  # every simulated verdict reads
    # the check's run: no pool, judged results with the rule's verdict beside the judge's
    assert _q(res.summary.store, "SELECT count(*) FROM pool WHERE run_id = ?", [res.summary.run_id]) == [(0,)]
    stored = _q(res.summary.store, "SELECT suite, false_pass, n_checked FROM judge_checks")
    assert stored == [("check", row["false_pass"], 240)]
    # the false pass rate is the share of rule-failed replies the judge passed, recomputed from the rows
    fp = _q(res.summary.store, "SELECT avg(CAST(correct AS DOUBLE)) FROM results WHERE NOT rule_correct AND run_id = ?",
            [res.summary.run_id])[0][0]
    assert fp == pytest.approx(row["false_pass"])
    # the check's judge cost: 240 replies × k = 1 is 240 scoring calls, their tokens and dollars from the calls rows
    calls = _q(res.summary.store, "SELECT count(*), sum(prompt_tokens + completion_tokens), sum(cost_usd) FROM calls "
                                  "WHERE purpose = 'scoring' AND run_id = ?", [res.summary.run_id])[0]
    assert calls[0] == 240 and (row["judge_calls"], row["judge_tokens"]) == calls[:2]
    assert row["judge_usd"] == pytest.approx(calls[2])


def test_self_consistency_with_k_samples(tmp_path):
    """k = 5, majority: per-sample false pass 0.3 gives a cell-level one of P(Bin(5, 0.3) >= 3) = 0.163,
    and two samples of one reply agree with probability 1 - 2·0.3·0.7 = 0.58 on rule-failed replies."""
    lib = _lib(tmp_path)
    suite = tmp_path / "k5.yaml"
    suite.write_text(f"""name: k5
{MODELS.format(acc=0.3, fp=0.3, ff=0.0)}
tasks: [{{generator: masbench.arith, values: [1], n: 150, seed: 2}}]
designs: [cot]
cot_sc: {{k_max: 2}}
budget: {{per_task_tokens: 4000}}
judge: {{agent: sim-judge, k: 5}}
store: {tmp_path / 'k5.duckdb'}
""")
    row = asyncio.run(judge_check(RunOptions(suite=str(suite), lib=[lib]))).row
    assert row is not None and row["k"] == 5
    assert row["false_pass_lo"] <= 0.16308 <= row["false_pass_hi"], row
    assert row["false_fail"] == 0.0
    # pairwise agreement: 0.58 on failed replies, 1 on passed ones (false_fail 0), mixed by the rule's rate
    share_fail = row["n_rule_fail"] / row["n_checked"]
    expected = share_fail * 0.58 + (1 - share_fail) * 1.0
    assert abs(row["self_consistency"] - expected) < 0.06, (row["self_consistency"], expected)


def _open_suite(tmp_path: Path, name: str, judged: bool) -> Path:
    """One task file read two ways: rule-scored (``table``, numeric) or judge-scored (``open``, with
    the same gold as a checkable one); the same task ids, questions and gold."""
    data = tmp_path / "q.jsonl"
    if not data.exists():
        rows = [{"id": i, "question": f"What is {i} plus {i + 3}?", "gold": str(2 * i + 3), "check": "numeric",
                 "rubric": "The reply gives the right sum."} for i in range(30)]
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    source = ("{path: q.jsonl, format: open, name: q, params: {skills: [arith]}}" if judged else
              "{path: q.jsonl, format: table, name: q, fields: {question: question, answer: gold, id: id}, "
              "params: {scorer: numeric, skills: [arith]}}")
    suite = tmp_path / f"{name}.yaml"
    suite.write_text(f"""name: {name}
{MODELS.format(acc=0.6, fp=0.2, ff=0.1)}
tasks: [{source}]
designs: [cot, {{design: cot-sc, params: {{k: 3}}}}, debate]
cot_sc: {{k_max: 4, bootstrap: 50}}
budget: {{per_task_tokens: 6000}}
{'judge: {agent: sim-judge, k: 3}' if judged else ''}
store: {tmp_path / (name + '.duckdb')}
""")
    return suite


_RESULT_COST = ("design, task_id, seed, answer, prompt_tokens, completion_tokens, tokens, cost_usd, calls, status, "
                "budget_basis, budget_spent")


def test_judge_calls_change_no_design_cost_budget_or_curve_row(tmp_path):
    lib = _lib(tmp_path)
    plain = asyncio.run(run_suite(RunOptions(suite=str(_open_suite(tmp_path, "plain", False)), lib=[lib])))
    judged = asyncio.run(run_suite(RunOptions(suite=str(_open_suite(tmp_path, "judged", True)), lib=[lib])))
    a, b = plain.store, judged.store
    ra, rb = plain.run_id, judged.run_id
    # the judge did run: scoring calls with their own tokens and cost, every design cell and pool sample judged
    usage = dict((d, (n, t, c)) for d, n, t, c in _q(b, "SELECT design, judge_calls, judge_tokens, judge_usd "
                                                        "FROM judge_usage WHERE run_id = ?", [rb]))
    assert set(usage) == {"cot", "cot-sc[k=3]", "debate", "__cot_pool__"}
    assert usage["cot"][0] == 30 * 3 and all(t > 0 and c > 0 for _, t, c in usage.values())
    assert _q(b, "SELECT count(*) FROM results WHERE run_id = ? AND judge = 'sim-judge' AND judge_samples = 3",
              [rb]) == [(90,)]
    assert _q(a, "SELECT count(*) FROM calls WHERE purpose = 'scoring'") == [(0,)]
    # ... and no design's row moved: results, pool, curve, metrics, per-design call usage
    order = "ORDER BY ALL"
    assert _q(a, f"SELECT {_RESULT_COST} FROM results WHERE run_id = ? {order}", [ra]) == \
        _q(b, f"SELECT {_RESULT_COST} FROM results WHERE run_id = ? {order}", [rb])
    pool = "task_id, seed, sample_index, answer, prompt_tokens, completion_tokens, tokens, cost_usd, budget_spent"
    assert _q(a, f"SELECT {pool} FROM pool WHERE run_id = ? {order}", [ra]) == \
        _q(b, f"SELECT {pool} FROM pool WHERE run_id = ? {order}", [rb])
    curve = "axis, axis_value, k, n_tasks, tokens, calls, cost_usd, budget_basis, budget_spent"
    assert _q(a, f"SELECT {curve} FROM cot_sc_curve WHERE run_id = ? {order}", [ra]) == \
        _q(b, f"SELECT {curve} FROM cot_sc_curve WHERE run_id = ? {order}", [rb])
    metrics = "design, axis, axis_value, n, tokens, calls, cost_usd, budget_spent"
    assert _q(a, f"SELECT {metrics} FROM design_metrics WHERE run_id = ? {order}", [ra]) == \
        _q(b, f"SELECT {metrics} FROM design_metrics WHERE run_id = ? {order}", [rb])
    usage_cols = "purpose, design, model, calls, prompt_tokens, completion_tokens, round(cost_usd, 12)"  # sum order
    assert _q(a, f"SELECT {usage_cols} FROM call_usage WHERE run_id = ? {order}", [ra]) == \
        _q(b, f"SELECT {usage_cols} FROM call_usage WHERE run_id = ? AND purpose <> 'scoring' {order}", [rb])
    comparison = "design, axis, tokens, cost_usd, budget_spent, cot_tokens, x_cot_tokens, x_cot_usd"
    assert _q(a, f"SELECT {comparison} FROM design_comparison WHERE run_id = ? {order}", [ra]) == \
        _q(b, f"SELECT {comparison} FROM design_comparison WHERE run_id = ? {order}", [rb])
    matched = "design, against, unit, k_match, position"  # where each design sits on the curve, by cost alone
    assert _q(a, f"SELECT {matched} FROM paired_tests WHERE run_id = ? {order}", [ra]) == \
        _q(b, f"SELECT {matched} FROM paired_tests WHERE run_id = ? {order}", [rb])


def test_a_rescore_costs_nothing_and_compare_names_the_judge(tmp_path):
    lib = _lib(tmp_path)
    suite = _open_suite(tmp_path, "again", True)
    first = asyncio.run(run_suite(RunOptions(suite=str(suite), lib=[lib])))
    second = asyncio.run(run_suite(RunOptions(suite=str(suite), lib=[lib], new=True)))
    assert first.run_id != second.run_id
    hits = _q(second.store, "SELECT sum(judge_calls), sum(cache_hits), sum(judge_spent_usd) FROM judge_usage "
                            "WHERE run_id = ?", [second.run_id])[0]
    assert hits[0] > 0 and hits[1] == hits[0] and hits[2] == 0.0
    verdicts = "SELECT design, task_id, correct, judge_passes FROM results WHERE run_id = ? ORDER BY ALL"
    assert _q(first.store, verdicts, [first.run_id]) == _q(second.store, verdicts, [second.run_id])
    # unchecked, compare says so; after a check of the same judge, it quotes the agreement
    out = CliRunner().invoke(app, ["compare", "--store", str(first.store), "--run", second.run_id])
    assert out.exit_code == 0, out.output
    assert "judged by sim-judge (sim/grader)" in out.output and "not checked" in out.output
    check = CliRunner().invoke(app, ["judge", "check", str(suite), "--lib", str(lib)])
    assert check.exit_code == 0, check.output
    assert "false pass:" in check.output and "self-consistency over k = 3" in check.output
    out = CliRunner().invoke(app, ["compare", "--store", str(first.store), "--run", second.run_id])
    n, agreement = _q(first.store, "SELECT n_tasks, agreement FROM judge_checks")[0]
    assert f"agreement {100 * agreement:.1f}% on {n} checked tasks" in out.output, out.output
    assert "judge calls" in out.output  # the judge's own cost, apart from every design's


def test_judged_tasks_without_a_judge_stop_the_run_before_any_call(tmp_path):
    lib = _lib(tmp_path)
    suite = _open_suite(tmp_path, "nojudge", True)
    suite.write_text(suite.read_text().replace("judge: {agent: sim-judge, k: 3}", ""))
    res = CliRunner().invoke(app, ["run", str(suite), "--lib", str(lib)])
    assert res.exit_code == 2, res.output
    assert "no `judge:` block" in res.output and "q-0" in res.output  # names a judged task
    assert not (tmp_path / "nojudge.duckdb").exists()
    res = CliRunner().invoke(app, ["judge", "check", str(_open_suite(tmp_path, "nogold", False)), "--lib", str(lib)])
    assert res.exit_code == 2 and "needs a judge" in res.output, res.output  # a check needs a judge too


def test_the_shipped_open_ended_suite_runs_judged_on_the_simulator(tmp_path):
    """tasks/open-ended.yaml end to end with its models swapped for the simulator (the embedded run
    is in docs/judge.md's terms, not a unit test): every reply judged k = 3 times, the judge's calls
    apart from the designs', and its check over the checkable rows."""
    store = tmp_path / "open.duckdb"
    res = CliRunner().invoke(app, ["run", "open-ended", "--model", "default=sim/p60", "--store", str(store),
                                   "--limit", "6"])
    assert res.exit_code == 0, res.output
    rows = _q(store, "SELECT count(*), count(*) FILTER (WHERE judge = 'judge-tiny' AND judge_samples = 3), "
                     "count(rule_correct) FROM results")[0]
    assert rows == (12, 12, 6)  # 6 tasks x 2 designs; every other task has a checkable gold
    designs = {d for (d,) in _q(store, "SELECT design FROM judge_usage")}
    assert designs == {"cot", "debate-tiny", "__cot_pool__"}
    check = CliRunner().invoke(app, ["judge", "check", "open-ended", "--model", "default=sim/p60", "--store",
                                     str(store), "--limit", "6"])
    assert check.exit_code == 0, check.output
    assert "replies checked on 3 tasks of open-ended" in check.output and "SIMULATED" in check.output
