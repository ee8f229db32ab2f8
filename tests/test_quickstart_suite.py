"""The quickstart suite (tasks/quickstart.yaml): it validates, every design fits the per-task budget
even when every call spends its whole ``max_tokens``, and on a SIMULATED model with the embedded
model's measured shape its designs separate as the suite's comment claims. (The real-model run is
``make demo`` itself, not a unit test.)"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import yaml
from typer.testing import CliRunner

from masbench.bench import load_suite_tasks
from masbench.cli import app
from masbench.harness import RunOptions, run_suite
from masbench.spec import SuiteSpec

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "tasks" / "quickstart.yaml"


def _suite() -> dict:
    return yaml.safe_load(QUICKSTART.read_text(encoding="utf-8"))


def _write(tmp_path: Path, name: str, data: dict) -> Path:
    d = tmp_path / "tasks"
    d.mkdir(exist_ok=True)
    p = d / f"{name}.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return p


def _rows(store: Path, sql: str, params: list) -> list[dict]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        cur = con.execute(sql, params)
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    finally:
        con.close()


def test_quickstart_validates_and_has_two_levels_of_at_least_40():
    res = CliRunner().invoke(app, ["validate", str(QUICKSTART)])
    assert res.exit_code == 0, res.output
    suite = SuiteSpec.model_validate(_suite())
    tasks = load_suite_tasks(suite, QUICKSTART.parent)
    by_level: dict[str, list] = {}
    for t in tasks:
        by_level.setdefault(t.source, []).append(t)
    assert sorted(by_level) == ["arithmetic", "one-step"]
    assert all(len(v) >= 40 for v in by_level.values())
    assert len({t.id for t in tasks}) == len(tasks)
    assert by_level["arithmetic"][0].question.startswith("What is ")  # bare arithmetic
    assert not by_level["one-step"][0].question.startswith("What is ")
    labels = [d if isinstance(d, str) else (d.label or d.design) for d in suite.designs]
    assert labels == ["cot", "expression-calculator", "debate-tiny"]
    assert suite.cot_sc.enabled and suite.cot_sc.agent == "tiny-cot-solver"


@pytest.mark.slow
async def test_quickstart_fits_its_budget_when_every_call_hits_its_cap(tmp_path):
    data = _suite()
    # A simulator that always wants 5,000 tokens: every call is cut at its agent's max_tokens, the
    # worst case the budget must hold (no design may be refused a call).
    data["models"] = {"default": {"id": "sim/worst", "sim": {"completion_tokens": {"mean": 5000, "sd": 0}}}}
    data["store"] = str(tmp_path / "q.duckdb")
    s = await run_suite(RunOptions(suite=str(_write(tmp_path, "quickstart", data)), limit=8))
    assert s.failed == 0
    budget = data["budget"]["per_task_tokens"]
    rows = _rows(s.store, "SELECT design, max(tokens) AS worst, max(calls) AS calls, "
                 "sum(CASE WHEN json_extract(detail, '$.budget.exhausted')::BOOLEAN THEN 1 ELSE 0 END) AS exhausted "
                 "FROM results WHERE run_id = ? GROUP BY design", [s.run_id])
    worst = {r["design"]: r for r in rows}
    assert set(worst) == {"cot", "expression-calculator", "debate-tiny"}
    for r in rows:
        assert r["exhausted"] == 0 and 0 < r["worst"] <= budget, r
    assert worst["cot"]["calls"] == 1 and worst["expression-calculator"]["calls"] == 1
    assert worst["debate-tiny"]["calls"] == 3  # 2 debaters x 1 round + the decider
    # Caps really bind: a CoT sample is its prompt plus 64 completion tokens, the expression 16.
    calls = _rows(s.store, "SELECT agent, max(completion_tokens) AS c FROM calls WHERE run_id = ? GROUP BY agent",
                  [s.run_id])
    cap = {r["agent"]: r["c"] for r in calls}
    assert cap["tiny-cot-solver"] == 64 and cap["tiny-debater"] == 64 and cap["expression-writer"] == 16 and cap["tiny-decider"] == 32
    pool = _rows(s.store, "SELECT task_id, sum(prompt_tokens + completion_tokens) AS t FROM calls "
                 "WHERE run_id = ? AND purpose = 'pool' GROUP BY task_id", [s.run_id])
    assert pool and max(r["t"] for r in pool) <= budget


# The embedded model's measured shape (docs/benchmarks.md "The quickstart"): per-call accuracy of a short CoT
# sample and of the expression writer, per level. Wrong answers are spread over many values (a
# tiny model's errors rarely agree), which is why a majority of CoT samples beats one sample.
SHAPE = {
    "arithmetic": {"reasoning": 0.3, "arith.expression": 0.93},
    "one-step": {"reasoning": 0.22, "arith.expression": 0.3},
}


async def _sim_level(tmp_path: Path, level: str) -> tuple[Path, str]:
    suite = SuiteSpec.model_validate(_suite())
    tasks = [t for t in load_suite_tasks(suite, QUICKSTART.parent) if t.source == level]
    d = tmp_path / level
    d.mkdir()
    (d / "tasks.jsonl").write_text("".join(
        json.dumps({"id": t.id, "question": t.question, "answer": f"#### {t.answers[0]}"}) + "\n" for t in tasks))
    data = _suite()
    # Tasks without skills, so a call's accuracy is its agent's (tiny-cot-solver and the debaters:
    # reasoning; expression-writer: arith.expression).
    data["tasks"] = [{"jsonl": str(d / "tasks.jsonl"), "name": level, "n": len(tasks), "params": {"skills": []}}]
    data["models"] = {"default": {"id": f"sim/shape-{level}", "sim": {
        "accuracy": {"default": 0.0, **SHAPE[level]},
        "completion_tokens": {"mean": 12, "sd": 2},  # under every cap (the expression: 16)
        "errors": {"distractors": 20, "concentration": 50, "overlap": 0.0},
        "difficulty": {"spread": 0.0},
    }}}
    data["store"] = str(d / "q.duckdb")
    s = await run_suite(RunOptions(suite=str(_write(d, "quickstart", data))))
    assert s.failed == 0
    return s.store, s.run_id


def _comparison(store: Path, run_id: str) -> dict[str, dict]:
    rows = _rows(store, "SELECT * FROM design_comparison WHERE run_id = ? AND axis = 'all'", [run_id])
    return {r["design"]: r for r in rows}


def _verdicts(store: Path, run_id: str) -> dict[str, str]:
    from masbench.report import data
    from masbench.report.verdict import verdicts

    st = data.open_store(store)
    try:
        return {v.design: v.verdict for v in verdicts(data.comparison(st, run_id, "all"))}
    finally:
        st.close()


def _curve(store: Path, run_id: str) -> dict[int, dict]:
    rows = _rows(store, "SELECT * FROM cot_sc_curve WHERE run_id = ? AND axis = 'all'", [run_id])
    return {int(r["k"]): r for r in rows}


@pytest.mark.slow
async def test_quickstart_designs_separate_on_a_simulated_model_of_the_same_shape(tmp_path):
    """SIMULATED. The suite comment's claims: on bare arithmetic the expression design is above the
    whole CoT-SC curve (intervals apart) for fewer tokens than CoT-SC@2, and debate costs
    2-3x a CoT sample without beating the curve; on one-step word problems the differences are
    within the intervals (inconclusive)."""
    store, run = await _sim_level(tmp_path, "arithmetic")
    comp, curve = _comparison(store, run), _curve(store, run)
    expr, cot, debate = comp["expression-calculator"], comp["cot"], comp["debate-tiny"]
    assert max(curve) == 4 and curve[4]["accuracy"] > curve[1]["accuracy"]  # voting helps here
    best = max(curve.values(), key=lambda p: p["accuracy"])
    assert expr["ci_lo"] > best["ci_hi"]  # above the whole curve, intervals apart
    assert expr["tokens"] < curve[2]["tokens"]  # for less than CoT-SC@2 (its one-shot prompt is longer)
    assert 2.0 <= debate["tokens"] / cot["tokens"] <= 6.0
    assert not debate["ci_lo"] > curve[4]["ci_hi"]  # no significant gain for its cost
    v = _verdicts(store, run)  # the paired verdicts against the curve at equal cost (issue 12)
    assert v["expression-calculator"] == "worth it" and v["debate-tiny"] != "worth it", v

    store, run = await _sim_level(tmp_path, "one-step")
    comp, curve = _comparison(store, run), _curve(store, run)
    expr = comp["expression-calculator"]
    assert expr["ci_lo"] <= curve[1]["ci_hi"] and curve[1]["ci_lo"] <= expr["ci_hi"]  # overlapping
    v = _verdicts(store, run)
    assert v["expression-calculator"] != "worth it" and v["debate-tiny"] != "worth it", v


async def test_expression_calculator_sends_its_stop_sequence_and_python_computes():
    from masbench.bench.types import TaskInstance
    from masbench.library import Library
    from masbench.llm import Gateway, Reply
    from masbench.runtime import RunContext, run_design
    from masbench.spec import ModelSpec

    seen: list[dict] = []

    async def backend(a):
        seen.append(dict(a.req))
        return Reply("Expression: 20 + 22", 40, 6)

    gw = Gateway({"default": ModelSpec(id="sim/perfect")}, backend=backend)
    task = TaskInstance(id="t", source="unit", question="What is 20 plus 22?", answers=["42"])
    r = await run_design("expression-calculator", task, RunContext(gateway=gw, library=Library()))
    assert r.status == "ok" and r.answers == ["42"] and r.calls == 1
    assert seen == [{"temperature": 0.8, "max_tokens": 16, "stop": ["\n"]}]


def test_arith_generator_is_bare_arithmetic_outside_the_axes():
    from masbench.bench import GENERATORS
    from masbench.runtime import calculate

    tasks = GENERATORS["masbench.arith"]([1], 40, 0, "test")
    assert len({t.id for t in tasks}) == 40 and all(t.id.startswith("arith-1-test-s0-") for t in tasks)
    assert all(t.axis is None and t.axis_value is None and t.source == "masbench.arith" for t in tasks)
    words = {"plus": "+", "minus": "-", "times": "*"}
    checked = 0
    for t in tasks:
        q = t.question.removeprefix("What is ").removesuffix("?")
        expr = " ".join(words.get(w, w) for w in q.split())
        if all(w in words or w.isdigit() for w in q.split()):  # the plain binary forms
            assert str(calculate(expr)) == t.answers[0], t.question
            checked += 1
    assert checked >= 30  # most are "What is A plus/minus/times B?" (the rest "half of A")


def test_calculate_in_text_reads_the_expression_a_tiny_model_writes_in_a_sentence():
    import pytest

    from masbench.runtime import CalculatorError
    from masbench.runtime.pyfuncs import calculate_in_text

    # Replies the embedded model wrote in the quickstart's first demo run:
    assert calculate_in_text("the expression is: 5 + 5") == 10
    assert calculate_in_text("the expression you asked is 7 + 1, which equals 8") == 8  # Python's 8
    assert calculate_in_text("1 times 3 equals 3") == 3 and calculate_in_text("to find 8 plus 7, we need") == 15
    assert calculate_in_text("the expression you asked is 7 + 1, which equals 9") == 8  # not the model's 9
    for bad in ["the answer is 8", "x + 1", "open('/etc/passwd')", "1; 2", ""]:
        with pytest.raises(CalculatorError):
            calculate_in_text(bad)
