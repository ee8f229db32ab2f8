"""Routing over sub-agents (issue 28): a handbook learned from designs' results in one run, a
``kind: route`` node choosing a sub-design per task, the route-target kinds."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from masbench.bench import score
from masbench.library import Library
from masbench.routing import ROUTE_TARGETS, RouteHook, compile_handbook, fill_outcomes, learn_handbook, load_handbook
from masbench.routing.handbook import handbook_yaml
from masbench.routing.matrix import matrix_from_designs, to_arrays
from masbench.runtime import RunContext, run_design
from masbench.spec import DesignSpec, RouteSpec
from masbench.spec.handbook import HandbookSpec, ModelProfile, SkillSpec, SkillStats
from masbench.store import ResultRow, StoreWriter

# Hand-built run: designs A and B on 10 bare-arithmetic and 10 one-step tasks, two seeds.
# A is right on 9 of 10 arithmetic tasks and 1 of 10 one-step tasks; B on 2 of 10 and 6 of 10.
WINS = {("A", "arith"): 9, ("A", "step"): 1, ("B", "arith"): 2, ("B", "step"): 6}
TOKENS = {"A": 100, "B": 300}


def _results() -> list[ResultRow]:
    rows = []
    for design in ("A", "B", "C"):
        for kind in ("arith", "step"):
            for i in range(10):
                src, axis, val = ("masbench.arith", None, None) if kind == "arith" else ("masbench.depth", "depth", 1)
                ok = i < WINS.get((design, kind), 5)
                for seed in (0, 1):
                    rows.append(ResultRow(run_id="run1", design=design, task_id=f"{kind}-{i}", seed=seed, source=src,
                                          axis=axis, axis_value=val, correct=ok, tokens=TOKENS.get(design, 50),
                                          cost_usd=0.0, calls=1, wall_s=1.0, status="ok"))
    # a failed cell (infrastructure) is not evidence: it must not turn B's arith-0 into a loss
    rows.append(ResultRow(run_id="run1", design="B", task_id="arith-0", seed=2, source="masbench.arith",
                          correct=False, tokens=0, status="failed"))
    return rows


@pytest.fixture
def run_store(store):
    w = StoreWriter(store)
    for r in _results():
        w.put(r)
    w.flush()
    store.sql("INSERT INTO runs (run_id, suite, status, created_at) VALUES ('run1', 'hand', 'finished', now())")
    return store


def test_design_task_outcomes_view_matches_plain_sql(run_store):
    got = run_store.sql("SELECT design, skill, sum(correct), count(*), avg(tokens) FROM design_task_outcomes "
                        "WHERE run_id = 'run1' GROUP BY ALL ORDER BY 1, 2")
    want = run_store.sql("""
        SELECT design, CASE WHEN axis_value IS NULL THEN source ELSE source || '.L1' END,
               sum(CAST(correct AS INT)) / 2, count(DISTINCT task_id), avg(tokens)
        FROM results WHERE status = 'ok' GROUP BY ALL ORDER BY 1, 2""")
    assert [(a, b, float(c), d, float(e)) for a, b, c, d, e in got] == \
           [(a, b, float(c), d, float(e)) for a, b, c, d, e in want]
    assert ("B", "masbench.arith", 2.0, 10, 300.0) in [(a, b, float(c), d, float(e)) for a, b, c, d, e in got]


def test_handbook_learned_from_a_run_recovers_the_per_skill_winners(run_store):
    df = matrix_from_designs(run_store, ["A", "B"], tasks=[])
    assert set(df["model"]) == {"A", "B"} and len(df) == 40          # C is not a candidate
    hb = learn_handbook(df, name="hand", target="design", cost_unit="ktokens", shrinkage=1.0)
    assert {p.target for p in hb.profiles.values()} == {"design"}
    ch = compile_handbook(hb)
    arith, step = ch.index["masbench.arith"], ch.index["masbench.depth.L1"]
    a, b = ch.models.index("A"), ch.models.index("B")
    assert ch.mean[a, arith] > ch.mean[b, arith] and ch.mean[b, step] > ch.mean[a, step]
    # posterior means close to the hand-set rates (κ = 1 pulls each by at most 1/11 toward its parent)
    for (d, kind), w in WINS.items():
        s = arith if kind == "arith" else step
        assert abs(ch.mean[ch.models.index(d), s] - w / 10) <= 1 / 11 + 1e-9
    # tokens per task from the results, and the learning cost recorded as for any store
    assert ch.tokens[a, arith] == pytest.approx(100) and ch.tokens[b, step] == pytest.approx(300)
    p = hb.provenance
    assert p.tasks == 20 and p.observations == 40 and p.learning_tokens == 20 * 100 + 20 * 300


def test_skills_learn_cli_with_candidates(run_store, tmp_path):
    from masbench.cli import app

    path = run_store.path
    run_store.close()
    out = tmp_path / "skills" / "hand.yaml"
    r = CliRunner().invoke(app, ["skills", "learn", "--store", str(path), "--candidates", "A,B", "--out", str(out)])
    assert r.exit_code == 0, r.output
    hb = load_handbook(out)
    assert hb.cost_unit == "ktokens" and set(hb.profiles) == {"A", "B"}
    assert hb.provenance.source == "store" and hb.provenance.runs == ["run1"]
    r = CliRunner().invoke(app, ["skills", "learn", "--store", str(path), "--candidates", "A,Z", "--out", str(out)])
    assert r.exit_code == 2 and "no run holds results of every candidate" in r.output


# ----- a route node over sub-agent designs (SIMULATED models) -------------------------------------
def _subagent_handbook() -> HandbookSpec:
    """κ = 0, so each posterior mean is wins / (wins + losses): utilities checkable by hand."""
    stats = {"sub-tiny": {"arith.add": (9, 1), "arith.mul": (2, 8)},
             "sub-mathy": {"arith.add": (9.5, 0.5), "arith.mul": (9, 1)}}
    tok = {"sub-tiny": 100.0, "sub-mathy": 300.0}
    return HandbookSpec(
        name="subs", cost_unit="ktokens", shrinkage=0.0,
        taxonomy={"arith": SkillSpec(), "arith.add": SkillSpec(indicators=["plus", "sum", "add", "total"]),
                  "arith.mul": SkillSpec(indicators=["times", "product", "multiply", "each"])},
        profiles={d: ModelProfile(target="design", cost_usd=0.0, tokens=tok[d], calls=20, skills={
            s: SkillStats(wins=w, losses=l, cost_usd=0.0, tokens=tok[d], calls=10) for s, (w, l) in st.items()})
            for d, st in stats.items()})


def _library(tmp_path, hb: HandbookSpec) -> Library:
    (tmp_path / "skills").mkdir(exist_ok=True)
    (tmp_path / "skills" / f"{hb.name}.yaml").write_text(handbook_yaml(hb))
    (tmp_path / "baselines").mkdir(exist_ok=True)
    for name, model in (("sub-tiny", "sim/tiny"), ("sub-mathy", "sim/mathy")):
        (tmp_path / "baselines" / f"{name}.yaml").write_text(json.dumps({
            "name": name, "kind": "baseline", "nodes": {"solve": {"agent": {
                "name": f"{name}-solver", "model": model, "prompt": "{question}\nEnd with \"Answer: <x>\"."}}},
            "output": "solve"}))
    return Library(roots=[tmp_path], include_cwd=False)


ROUTED = {"name": "routed-subs", "nodes": {"solve": {"kind": "route", "params": {
    "route": "subs", "lambda": 0.5, "candidates": ["sub-tiny", "sub-mathy"]}}}, "output": "solve"}


async def test_route_node_logs_decisions_with_utilities_and_fills_outcomes(store, tmp_path):
    from masbench.llm import Gateway
    from masbench.routing.study import study_pool, study_tasks

    hb = _subagent_handbook()
    lib = _library(tmp_path, hb)
    design = DesignSpec.model_validate(ROUTED)
    w = StoreWriter(store)
    gw = Gateway({m: s for m, s in study_pool().items() if m in ("sim/tiny", "sim/mathy")}, sink=w.put)
    hook = RouteHook(lib, gw, w.sink("routing_decisions"))
    tasks = [t for t in study_tasks(60, seed=5) if len(t.skills) == 1 and t.skills[0] in ("arith.add", "arith.mul")]
    texts = {}
    for t in tasks:
        tags = {"run_id": "sub-run", "design": "routed-subs", "task_id": t.id, "seed": 0}
        res = await run_design(design, t, RunContext(gateway=gw, library=lib, tags=tags, route=hook.bind(**tags)))
        texts[t.id] = res.text
        w.add("results", {**tags, "correct": score(t, res.answers).correct, "status": res.status})
    w.flush()
    dec = store.df("SELECT task_id, node, chosen, skills, candidates FROM routing_decisions WHERE run_id = 'sub-run'")
    assert len(dec) == len(tasks) and set(dec["node"]) == {"solve"}
    p = {"sub-tiny": {"arith.add": 0.9, "arith.mul": 0.2}, "sub-mathy": {"arith.add": 0.95, "arith.mul": 0.9}}
    tok = {"sub-tiny": 0.1, "sub-mathy": 0.3}
    for r in dec.itertuples():
        demand = json.loads(r.skills)
        cands = {c["model"]: c for c in json.loads(r.candidates)}
        assert set(cands) == {"sub-tiny", "sub-mathy"}
        for d, c in cands.items():   # U = Σ w·E[p] − λ·E[c], E[c] in thousands of tokens
            want = sum(wt * p[d][s] for s, wt in demand.items()) - 0.5 * tok[d]
            assert c["utility"] == pytest.approx(want, abs=1e-5)
        assert r.chosen == max(cands, key=lambda d: cands[d]["utility"])
    # the chosen sub-agent is the one that ran: its model answered the task's call
    calls = store.df("SELECT task_id, model_alias FROM calls WHERE run_id = 'sub-run'")
    ran = dict(zip(calls["task_id"], calls["model_alias"]))
    assert len(calls) == len(tasks)
    assert all(ran[r.task_id] == {"sub-tiny": "sim/tiny", "sub-mathy": "sim/mathy"}[r.chosen] for r in dec.itertuples())
    kinds = {t.id: t.skills[0] for t in tasks}
    assert {kinds[r.task_id] for r in dec.itertuples() if r.chosen == "sub-tiny"} == {"arith.add"}
    # the chosen sub-agent samples as it would alone on that task and seed: the same reply
    gw2 = Gateway({m: s for m, s in study_pool().items() if m in ("sim/tiny", "sim/mathy")})
    for r in list(dec.itertuples())[:6]:
        t = next(x for x in tasks if x.id == r.task_id)
        alone = await run_design(lib.design(r.chosen), t, RunContext(gateway=gw2, library=lib, seed=0,
                                                                    tags={"task_id": t.id, "seed": 0}))
        assert alone.text == texts[t.id]
    assert fill_outcomes(store, "sub-run") == len(tasks)
    filled = store.sql("SELECT count(*) FROM routing_decisions d JOIN results r USING (run_id, task_id) "
                       "WHERE d.outcome = r.correct")[0][0]
    assert filled == len(tasks)
    per_skill = store.sql("SELECT chosen, sum(choices) FROM routing_choices WHERE run_id = 'sub-run' GROUP BY 1")
    assert sum(n for _, n in per_skill) == len(tasks)


def test_route_node_checks_its_settings_and_candidate_kinds(tmp_path):
    from masbench.spec.problems import SpecError

    hb = _subagent_handbook()
    lib = _library(tmp_path, hb)
    from masbench.runtime import check_design

    bad = {**ROUTED, "nodes": {"solve": {"kind": "route", "params": {"route": "subs", "candidates": ["nope"]}}}}
    probs = check_design(DesignSpec.model_validate(bad), None, lib)
    assert any("unknown design 'nope'" in str(p) for p in probs)
    none = {**ROUTED, "nodes": {"solve": {"kind": "route", "params": {"route": "subs"}}}}
    assert any("params.candidates" in str(p) for p in check_design(DesignSpec.model_validate(none), None, lib))
    # a design-target handbook cannot serve an agent's model route, and vice versa
    hook = RouteHook(lib, None, None)
    with pytest.raises(ValueError, match="can only be chosen by a `kind: route` node"):
        hook.router_for(RouteSpec(route="subs"), "call")
    assert set(ROUTE_TARGETS.names()) >= {"model", "design"}
    assert SpecError  # imported for the failure path of run_design


def test_unregistered_target_kind_is_named(tmp_path):
    hb = _subagent_handbook()
    hb.profiles["sub-tiny"] = hb.profiles["sub-tiny"].model_copy(update={"target": "remote-agent"})
    lib = _library(tmp_path, hb)
    with pytest.raises(ValueError, match="'remote-agent', which is not a registered route target"):
        RouteHook(lib, None, None).router_for(RouteSpec(route="subs"), "node")


def test_ktokens_cost_unit_uses_tokens():
    ch = compile_handbook(_subagent_handbook())
    assert np.allclose(ch.unit_cost()[:, 0], [0.1, 0.3][:: 1 if ch.models[0] == "sub-tiny" else -1])
    assert to_arrays  # the matrix helpers are importable together with the view reader
