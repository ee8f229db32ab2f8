"""The simulator's error model (SIMULATED): latent task difficulty, shared wrong answers, reactions.

Every test compares a measurement (through the gateway, the runtime or the harness) with the exact
number the profile configures (``masbench.llm.sim`` exact functions), within sampling error.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import duckdb
import numpy as np
import pytest
from typer.testing import CliRunner

from masbench.analysis import diagnose
from masbench.bench import load_suite_tasks
from masbench.cli import app
from masbench.harness import RunOptions, run_suite
from masbench.library import Library
from masbench.llm import Gateway
from masbench.llm.sim import (
    BUILTIN_PROFILES,
    Simulator,
    correctness_correlation,
    expected_unanimity,
    fit_concentration,
    fit_difficulty,
    maj_at_k,
    p_correct,
    pool_curve,
    sim_model,
    tune_unanimity,
)
from masbench.spec import SuiteSpec
from masbench.spec.model import ModelSpec, SimProfile
from masbench.spec.sim import SimDifficulty, SimErrors, SimReaction
from masbench.store import Store

SUITE = """name: {name}
models:
  default: {{id: sim/{name}, sim: {sim}}}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: {n}, seed: 5}}
designs: {designs}
cot_sc: {{k_max: {k_max}, bootstrap: 200}}
budget: {{per_task_tokens: 40000}}
concurrency: 16
store: {store}
"""

TERSE = """name: cot-terse
kind: baseline
description: One CoT call with a different prompt (a second single-call design on the same tasks).
nodes:
  solve:
    agent: cot-solver
    prompt: "{question}\\n\\nSolve it briefly. End with \\"Answer: <final answer>\\"."
output: solve
"""


def write_suite(tmp: Path, name: str, sim: dict, n: int, designs: str, k_max: int) -> Path:
    (tmp / "tasks").mkdir(exist_ok=True)
    p = tmp / "tasks" / f"{name}.yaml"
    p.write_text(SUITE.format(name=name, sim=json.dumps(sim), n=n, designs=designs, k_max=k_max,
                              store=tmp / "runs" / f"{name}.duckdb"))
    return p


def suite_tasks(path: Path):
    import yaml

    return load_suite_tasks(SuiteSpec.model_validate(yaml.safe_load(path.read_text())), path.parent)


def model_of(path: Path) -> tuple[str, SimProfile]:
    import yaml

    m = yaml.safe_load(path.read_text())["models"]["default"]
    return m["id"], SimProfile.model_validate(m["sim"])


# --------------------------------------------------------------------------- the exact numbers


def test_fixed_profile_keeps_todays_numbers():
    m = sim_model("sim/p60")
    assert m.fixed and all(m.p_correct(f"t{i}") == 0.6 for i in range(50))
    d = m.answer_distribution("t1", ["7"])
    assert d == pytest.approx({("7",): 0.6, ("8",): 0.2, ("9",): 0.12, ("10",): 0.08})


def test_difficulty_is_stable_per_task_and_calibrated_to_the_accuracy():
    prof = SimProfile(accuracy={"default": 0.7, "arith": 0.9}, difficulty=SimDifficulty(spread=2.0))
    ps = np.array([p_correct("sim/x", f"task-{i}", profile=prof) for i in range(4000)])
    assert p_correct("sim/x", "task-3", profile=prof) == ps[3]  # a pure function of the task id
    assert abs(ps.mean() - 0.7) < 0.02  # mean over tasks = the configured accuracy
    assert ps.std() > 0.2 and ps.min() < 0.1 and ps.max() > 0.97  # tasks really differ
    arith = np.array([p_correct("sim/x", f"task-{i}", ["arith.add"], profile=prof) for i in range(4000)])
    assert abs(arith.mean() - 0.9) < 0.02 and (arith >= ps).all()  # dotted skill → parent's ability
    fixed = [p_correct("sim/x", f"task-{i}", profile=SimProfile(accuracy={"default": 0.7})) for i in range(20)]
    assert set(fixed) == {0.7}


def test_presets_are_simulated_and_share_hard_tasks():
    f, s = sim_model("sim/frontier"), sim_model("sim/7b")
    pf = np.array([f.p_correct(f"t{i}") for i in range(3000)])
    ps = np.array([s.p_correct(f"t{i}") for i in range(3000)])
    assert 0.85 < pf.mean() < 0.95 and 0.45 < ps.mean() < 0.55
    assert np.corrcoef(pf, ps)[0, 1] > 0.4  # the same world: hard for one, mostly hard for the other
    assert BUILTIN_PROFILES["frontier"].reactions["verifier"].adopt_wrong > 0.5  # rubber-stamps


# --------------------------------------------------------------------------- maj@k vs the pool


@pytest.mark.slow
async def test_exact_maj_at_k_equals_the_pool_curve(tmp_path):
    sim = {"accuracy": {"default": 0.6}, "difficulty": {"spread": 2.0},
           "errors": {"distractors": 4, "concentration": 0.4, "overlap": 0.5}}
    suite = write_suite(tmp_path, "irtpool", sim, n=75, designs="[cot]", k_max=9)
    s = await run_suite(RunOptions(suite=str(suite)))
    con = duckdb.connect(str(s.store), read_only=True)
    curve = {k: (a, lo, hi) for k, a, lo, hi in con.execute(
        "SELECT k, accuracy, ci_lo, ci_hi FROM cot_sc_curve WHERE run_id = ? AND axis = 'all'", [s.run_id]).fetchall()}
    con.close()
    tasks = suite_tasks(suite)
    m = sim_model(*model_of(suite))
    pairs = [(t.id, t.answers) for t in tasks]
    exact = pool_curve(m, pairs, 9)
    for k in (1, 3, 5, 9):
        acc, lo, hi = curve[k]
        assert lo - 0.01 <= exact[k - 1] <= hi + 0.01, (k, acc, lo, hi, exact[k - 1])
    # At k = k_max the curve is the exact subset: its only noise is the samples given the tasks.
    per_task = [maj_at_k(m.answer_distribution(t, g), g, 9) for t, g in pairs]
    se = math.sqrt(sum(e * (1 - e) for e in per_task)) / len(per_task)
    assert abs(curve[9][0] - exact[8]) < 4 * se + 1e-9, (curve[9][0], exact[8], se)
    # ... and it saturates far below independent coins with the same mean accuracy (0.6, 4 distractors)
    iid = maj_at_k({("g",): 0.6, **{(f"w{i}",): 0.1 for i in range(4)}}, ["g"], 9)
    assert curve[9][2] < iid - 0.1, (curve[9], iid)


# --------------------------------------------------------------------------- correlation


def _phi(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x.astype(float), y.astype(float))[0, 1])


@pytest.mark.slow
@pytest.mark.parametrize("spread", [0.0, 2.5])
async def test_correctness_correlates_across_designs_as_configured(tmp_path, spread):
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines" / "cot-terse.yaml").write_text(TERSE)
    sim = {"accuracy": {"default": 0.6}, "difficulty": {"spread": spread}}
    suite = write_suite(tmp_path, f"corr{int(spread * 10)}", sim, n=300, designs="[cot, cot-terse]", k_max=1)
    s = await run_suite(RunOptions(suite=str(suite), lib=[tmp_path]))
    con = duckdb.connect(str(s.store), read_only=True)
    rows = con.execute("""SELECT a.correct, b.correct FROM results a JOIN results b USING (run_id, task_id, seed)
                          WHERE a.run_id = ? AND a.design = 'cot' AND b.design = 'cot-terse'""", [s.run_id]).fetchall()
    con.close()
    assert len(rows) == 600
    a, b = np.array(rows).T
    measured = _phi(a, b)
    m = sim_model(*model_of(suite))
    configured = correctness_correlation(m)
    # the same figure over these very tasks (no task-sampling noise): Var(p) / (μ(1 − μ))
    p = np.array([m.p_correct(t.id) for t in suite_tasks(suite)])
    in_sample = p.var() / (p.mean() * (1 - p.mean()))
    se = 1 / math.sqrt(len(rows))
    assert abs(configured - in_sample) < 4 * se
    assert abs(measured - in_sample) < 3.5 * se, (measured, in_sample, configured)
    if spread == 0:
        assert configured == pytest.approx(0.0, abs=1e-12)
    else:
        assert configured > 0.3  # the paired-design correlation a calibration study relies on


async def _calls(gw: Gateway, alias: str, tasks: list[str], gold: str = "5", **meta) -> list[str]:
    async def one(t):
        r = await gw.complete(alias, [{"role": "user", "content": "Q"}],
                              metadata={"sim": {"gold": [gold], "task": t, **meta}})
        return r.text.rsplit("Answer:", 1)[-1].strip()
    return await asyncio.gather(*[one(t) for t in tasks])


@pytest.mark.slow
@pytest.mark.parametrize("overlap", [0.0, 1.0])
async def test_models_of_one_world_share_hard_tasks_and_wrong_answers(overlap):
    diff = SimDifficulty(spread=2.0, own=1.0)
    err = SimErrors(distractors=5, concentration=0.5, overlap=overlap)
    a = ModelSpec(id="sim/a", sim=SimProfile(accuracy={"default": 0.7}, difficulty=diff, errors=err))
    b = ModelSpec(id="sim/b", sim=SimProfile(accuracy={"default": 0.5}, difficulty=diff, errors=err, seed=1))
    c = ModelSpec(id="sim/c", sim=SimProfile(accuracy={"default": 0.5}, difficulty=diff.model_copy(update={"world": 9}),
                                             errors=err))
    gw = Gateway({"a": a, "b": b, "c": c})
    tasks = [f"w-{i}" for i in range(3000)]
    ya, yb, yc = [await _calls(gw, x, tasks) for x in "abc"]
    ca, cb, cc = (np.array([v == "5" for v in y]) for y in (ya, yb, yc))
    ma, mb, mc = sim_model(a), sim_model(b), sim_model(c)
    se = 1 / math.sqrt(len(tasks))
    assert abs(_phi(ca, cb) - correctness_correlation(ma, mb)) < 4 * se
    assert correctness_correlation(ma, mb) > 0.2
    assert abs(_phi(ca, cc)) < 4 * se and correctness_correlation(ma, mc) == 0.0  # another world
    # wrong answers: P(same wrong answer | both wrong), measured vs exact
    both = ~ca & ~cb
    same = sum(1 for i in np.flatnonzero(both) if ya[i] == yb[i])
    num = den = 0.0
    for t in tasks:
        qa = ma.answer_distribution(t, ["5"])
        qb = mb.answer_distribution(t, ["5"])
        w = (1 - qa[("5",)]) * (1 - qb[("5",)])
        den += w
        num += sum(qa[k] * qb.get(k, 0.0) for k in qa if k != ("5",))
    want = num / den
    got = same / both.sum()
    assert abs(got - want) < 4 * math.sqrt(want * (1 - want) / both.sum()), (got, want)
    assert want > 0.35 if overlap == 1.0 else want < 0.3  # E[Σq²] ≈ 0.43 (shared) vs 5·0.2² = 0.2


# --------------------------------------------------------------------------- reactions


@pytest.mark.slow
async def test_calls_that_see_answers_keep_fix_and_adopt_as_configured():
    r = SimReaction(keep_right=0.8, fix_wrong=0.25, adopt_wrong=0.6)
    prof = SimProfile(accuracy={"default": 0.5}, difficulty=SimDifficulty(spread=1.0), errors=SimErrors(),
                      reactions={"debater": r, "critic": SimReaction(keep_right=0.9, fix_wrong=0.1, adopt_wrong=0.7)})
    gw = Gateway({"m": ModelSpec(id="sim/react", sim=prof)})
    tasks = [f"r-{i}" for i in range(3000)]
    n = len(tasks)

    def close(got: float, want: float) -> bool:
        return abs(got - want) < 4 * math.sqrt(want * (1 - want) / n) + 1e-9

    right = await _calls(gw, "m", tasks, agent="debater", shown=["5", "5", "9"])
    assert close(sum(v == "5" for v in right) / n, r.keep_right)
    wrong = await _calls(gw, "m", tasks, agent="debater", shown=["9", "5", "9"])
    assert close(sum(v == "5" for v in wrong) / n, r.fix_wrong)
    assert close(sum(v == "9" for v in wrong) / n, r.adopt_wrong)
    # an agent with no reaction (and no default) ignores what it was shown: its own P(correct)
    m = sim_model(gw.models["m"])
    plain = await _calls(gw, "m", tasks, agent="final-decider", shown=["9", "9", "9"])
    assert close(sum(v == "5" for v in plain) / n, sum(m.p_correct(t) for t in tasks) / n)
    # a judge shown a wrong candidate rubber-stamps it at adopt_wrong
    sim = Simulator()
    stamps = 0
    for t in tasks:
        reply = await sim.complete("sim/react", prof, [{"role": "user", "content": t}], None, 0, 1,
                                   {"gold": ["5"], "task": t, "agent": "critic", "mode": "judge", "candidate": "7",
                                    "json": True})
        stamps += json.loads(reply.text)["correct"]
    assert close(stamps / n, 0.7)


def test_reaction_probabilities_are_validated():
    with pytest.raises(ValueError, match="exceeds 1"):
        SimReaction(fix_wrong=0.6, adopt_wrong=0.6)


# --------------------------------------------------------------------------- premature consensus


@pytest.mark.slow
async def test_debate_reproduces_premature_consensus_and_diagnose_reports_it(tmp_path):
    target = 0.45  # the configured rate of unanimity after round one
    sim = {"accuracy": {"default": 0.4}, "difficulty": {"spread": 2.5},
           "errors": {"distractors": 4, "concentration": 1.0, "overlap": 1.0},
           "reactions": {"debater": {"keep_right": 0.95, "fix_wrong": 0.1, "adopt_wrong": 0.8}}}
    suite = write_suite(tmp_path, "consensus", sim, n=150, designs="[debate]", k_max=1)
    pairs = [(t.id, t.answers) for t in suite_tasks(suite)]
    m = tune_unanimity(sim_model(*model_of(suite)), target, 3, pairs)
    sim["errors"]["concentration"] = m.profile.errors.concentration
    suite = write_suite(tmp_path, "consensus", sim, n=150, designs="[debate]", k_max=1)
    assert expected_unanimity(sim_model(*model_of(suite)), pairs, 3) == pytest.approx(target, abs=2e-3)
    s = await run_suite(RunOptions(suite=str(suite)))
    store = Store(s.store)
    try:
        (row,) = diagnose(store, s.run_id, ["debate"], Library())
    finally:
        store.close()
    u = row["unanimity"]
    assert row["simulated"] is True and u["tasks"] == 300
    per = [sum(q ** 3 for q in m.answer_distribution(t, g).values()) for t, g in pairs]
    se = math.sqrt(sum(x * (1 - x) for x in per)) / len(per)
    assert abs(u["share"] - target) < 4 * se, (u["share"], target, se)
    fixed = 0.4 ** 3 + sum((0.6 * w) ** 3 for w in (0.5, 0.3, 0.2))  # independent coins: ≈ 0.11
    assert u["share"] > fixed + 0.2
    res = CliRunner().invoke(app, ["diagnose", "--store", str(s.store)])
    assert res.exit_code == 0, res.output
    assert "SIMULATED" in res.output and f"{100 * u['share']:.0f}% of 300" in res.output
    with pytest.raises(ValueError, match="out of reach"):
        tune_unanimity(m, 0.95, 3, pairs)


@pytest.mark.slow
@pytest.mark.parametrize("spread", [0.0, 1.0, 2.5])
async def test_fit_difficulty_recovers_the_spread_of_a_simulated_pool(spread):
    prof = SimProfile(accuracy={"default": 0.4}, difficulty=SimDifficulty(spread=spread))
    gw = Gateway({"m": ModelSpec(id="sim/fit", sim=prof)})
    tasks = [f"f-{i}" for i in range(1500)]
    k = 6

    async def pool(t):
        rs = await asyncio.gather(*[gw.complete("m", [{"role": "user", "content": t}], sample_index=j,
                                                metadata={"sim": {"gold": ["5"], "task": t}}) for j in range(k)])
        return sum(r.text.endswith("Answer: 5") for r in rs)
    counts = await asyncio.gather(*[pool(t) for t in tasks])
    acc, fitted, _ = fit_difficulty(counts, k)
    assert abs(acc - 0.4) < 0.04
    assert abs(fitted - spread) < 0.35, (fitted, spread)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.3, 3.0])
async def test_fit_concentration_recovers_the_wrong_answer_concentration(alpha):
    prof = SimProfile(accuracy={"default": 0.2}, errors=SimErrors(distractors=8, concentration=alpha, overlap=1.0))
    gw = Gateway({"m": ModelSpec(id="sim/fitc", sim=prof)})
    tasks = [f"c-{i}" for i in range(800)]

    async def wrong(t):
        rs = await asyncio.gather(*[gw.complete("m", [{"role": "user", "content": t}], sample_index=j,
                                                metadata={"sim": {"gold": ["5"], "task": t}}) for j in range(6)])
        return [a for a in (r.text.rsplit("Answer: ", 1)[-1] for r in rs) if a != "5"]
    agree, fitted = fit_concentration(await asyncio.gather(*[wrong(t) for t in tasks]), 8)
    assert agree == pytest.approx((alpha + 1) / (8 * alpha + 1), abs=0.03)
    assert fitted == pytest.approx(alpha, rel=0.35)


class _Recording(Gateway):
    """A real gateway that keeps every request's simulator metadata."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.seen: list[dict] = []

    async def complete(self, model, messages, **kw):
        self.seen.append((kw.get("metadata") or {}).get("sim") or {})
        return await super().complete(model, messages, **kw)


async def test_the_runtime_tells_the_simulator_the_task_agent_and_shown_answers():
    from masbench.bench.types import TaskInstance
    from masbench.runtime import RunContext, run_design

    lib = Library()
    gw = _Recording({"default": ModelSpec(id="sim/frontier")})
    task = TaskInstance(id="meta-task-1", source="unit", question="Tom has 3 apples and gets 4 more. How many?",
                        answers=["7"])
    for design in ("debate", "self-refine"):
        ctx = RunContext(gateway=gw, library=lib, tags={"run_id": "r", "design": design, "task_id": task.id})
        await run_design(lib.design(design), task, ctx)
    assert {m["task"] for m in gw.seen} == {"meta-task-1"}
    debaters = [m for m in gw.seen if m.get("agent") == "debater"]
    assert len(debaters) == 6  # 3 roles x 2 rounds
    assert [len(m.get("shown", [])) for m in debaters] == [0, 0, 0, 3, 3, 3]  # round 2 sees round 1
    final = next(m for m in gw.seen if m.get("agent") == "final-decider")
    assert len(final["shown"]) == 3
    critic = next(m for m in gw.seen if m.get("agent") == "critic")
    assert critic["mode"] == "judge" and critic["shown"] == [critic["candidate"]]


@pytest.mark.slow
async def test_self_refine_rubber_stamping_is_reported_as_configured(tmp_path):
    keep, adopt = 0.9, 0.7
    sim = {"accuracy": {"default": 0.5}, "difficulty": {"spread": 1.5}, "errors": {},
           "reactions": {"critic": {"keep_right": keep, "fix_wrong": 0.1, "adopt_wrong": adopt}}}
    suite = write_suite(tmp_path, "stamp", sim, n=200, designs="[{design: self-refine, params: {max_rounds: 1}}]",
                        k_max=1)
    s = await run_suite(RunOptions(suite=str(suite)))
    store = Store(s.store)
    try:
        (row,) = diagnose(store, s.run_id, None, Library())
    finally:
        store.close()
    ap = row["approvals"]
    m = sim_model(*model_of(suite))
    # round one: the critic sees the draft; it approves a right draft with keep, a wrong one with adopt
    p = np.array([m.p_correct(t.id) for t in suite_tasks(suite)])
    approved = p * keep + (1 - p) * adopt
    want = float(((1 - p) * adopt).sum() / approved.sum())
    assert abs(ap["approved"] - approved.sum()) < 4 * math.sqrt((approved * (1 - approved)).sum())
    assert abs(ap["share_wrong"] - want) < 4 * math.sqrt(want * (1 - want) / ap["approved"]), (ap, want)
    res = CliRunner().invoke(app, ["diagnose", "--store", str(s.store)])
    assert f"{100 * ap['share_wrong']:.0f}% of {ap['approved']}" in res.output


def test_task_arrays_give_the_studies_the_same_numbers():
    from masbench.llm.sim.exact import frontier_tasks, seven_b_tasks, task_arrays

    p, w = task_arrays(sim_model("sim/7b"), np.random.default_rng(1), 3000)
    assert p.shape == (3000,) and w.shape == (3000, 6) and np.allclose(w.sum(axis=1), 1.0)
    assert abs(p.mean() - 0.5) < 0.03 and p.std() > 0.2
    pf, wf = frontier_tasks(np.random.default_rng(2), 3000)
    assert abs(pf.mean() - 0.9) < 0.02 and wf.shape == (3000, 4)
    again, _ = seven_b_tasks(np.random.default_rng(1), 5)
    assert np.allclose(again, p[:5])  # the same rng gives the same task ids, hence the same tasks
