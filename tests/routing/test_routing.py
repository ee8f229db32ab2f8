"""Skill-aware routing: handbook format and validator, posteriors, credit, demand, strategies,
decision log, runtime hook, learning, split/merge, metrics, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from masbench.library import Library
from masbench.routing import (
    HandbookSpec,
    IndicatorMatcher,
    RouteHook,
    SkillRouter,
    aiq,
    apgr,
    compile_handbook,
    cpt,
    credit,
    fill_outcomes,
    learn_handbook,
    load_handbook,
    refine,
    routing_entropy,
    score_batch,
    validate_handbook,
)
from masbench.routing.demand import infer_demand, learn_indicators, parse_demand_reply
from masbench.routing.handbook import handbook_yaml
from masbench.routing.learn import fit_evidence, parse_taxonomy_reply, tag_matrix
from masbench.routing.matrix import Arrays, matrix_from_store, save_matrix, to_arrays
from masbench.routing.metrics import oracle_choice, upper_hull
from masbench.runtime import RunContext, run_design
from masbench.spec import KINDS, AgentSpec, RouteSpec
from masbench.spec.handbook import ModelProfile, SkillSpec, SkillStats
from masbench.spec.problems import SpecError
from masbench.store import StoreWriter

REPO = Path(__file__).resolve().parents[2]


def hb_two(cost_a=1e-3, cost_b=1e-4, **kw) -> HandbookSpec:
    """Two models, skills arith.add / arith.mul: 'big' good at both, 'small' good at add only."""
    return HandbookSpec(
        name="two", cost_unit="relative", shrinkage=kw.pop("shrinkage", 4.0),
        taxonomy={"arith": SkillSpec(description="arithmetic"),
                  "arith.add": SkillSpec(indicators=["plus", "sum"]),
                  "arith.mul": SkillSpec(indicators=["times", {"pattern": "/product of/", "weight": 2.0}])},
        profiles={
            "big": ModelProfile(cost_usd=cost_a, calls=10, skills={
                "arith.add": SkillStats(wins=19, losses=1, cost_usd=cost_a, calls=20),
                "arith.mul": SkillStats(wins=18, losses=2, cost_usd=cost_a, calls=20)}),
            "small": ModelProfile(cost_usd=cost_b, calls=10, skills={
                "arith.add": SkillStats(wins=19, losses=1, cost_usd=cost_b, calls=20),
                "arith.mul": SkillStats(wins=4, losses=16, cost_usd=cost_b, calls=20)})},
        **kw)


# ----- format and validation -------------------------------------------------------------------------
def test_handbook_kind_registered_and_example_validates():
    assert KINDS["handbook"] is HandbookSpec
    lib = Library(include_cwd=False)
    loaded = lib.get("handbook", "arith-pool")
    hb = loaded.spec
    assert loaded.path == REPO / "skills" / "arith-pool.yaml"
    assert validate_handbook(hb) == [] and hb.provenance.simulated
    ch = compile_handbook(hb)
    assert ch.alpha.shape == (len(hb.profiles), len(hb.taxonomy) + 1)
    assert np.all((ch.mean > 0) & (ch.mean < 1))


def test_handbook_yaml_round_trip(tmp_path):
    hb = hb_two()
    p = tmp_path / "skills" / "two.yaml"
    p.parent.mkdir()
    p.write_text(handbook_yaml(hb))
    back = load_handbook(p)
    assert back == hb


@pytest.mark.parametrize("body,where,msg", [
    ("taxonomy: {a.b: {parent: nope}}\nprofiles: {m: {}}", "taxonomy.a.b.parent", "unknown parent"),
    ("taxonomy: {a: {}}\nprofiles: {m: {skills: {zz: {wins: 1}}}}", "profiles.m.skills.zz", "not in the taxonomy"),
    ("taxonomy: {a: {indicators: ['/(unclosed/']}}\nprofiles: {m: {}}", "taxonomy.a.indicators", "regular expression"),
    ("taxonomy: {a: {colour: red}}\nprofiles: {m: {}}", "taxonomy.a.colour", "unknown field"),
    ("taxonomy: {a: {}}\nprofiles: {m: {skills: {a: {wins: -1}}}}", "profiles.m.skills.a.wins", "greater than"),
    ("taxonomy: {x: {parent: y}, y: {parent: x}}\nprofiles: {m: {}}", "taxonomy.x.parent", "loops"),
    ("taxonomy: {a: {}}\nprofiles: {}", "profiles", "at least one model"),
])
def test_invalid_handbooks_are_located_errors(tmp_path, body, where, msg):
    p = tmp_path / "skills" / "bad.yaml"
    p.parent.mkdir()
    p.write_text("name: bad\n" + body + "\n")
    with pytest.raises(SpecError) as ei:
        Library(include_cwd=False, include_bundled=False).load_path(p)
    probs = ei.value.problems
    assert any(pr.field == where and msg in pr.message for pr in probs), [str(x) for x in probs]
    assert all(pr.line >= 2 for pr in probs if pr.field == where)


# ----- posteriors -------------------------------------------------------------------------------------
def test_unseen_skill_inherits_parent_and_few_observations_shrink():
    hb = hb_two()
    hb.taxonomy["arith.div"] = SkillSpec()
    ch = compile_handbook(hb)
    i_add, i_mul, i_div, i_par = (ch.index[s] for s in ("arith.add", "arith.mul", "arith.div", "arith"))
    small = ch.models.index("small")
    # unseen: exactly the parent's posterior mean, never 0
    assert ch.mean[small, i_div] == pytest.approx(ch.mean[small, i_par])
    assert 0.3 < ch.mean[small, i_div] < 0.8
    # pooled parent ≈ (22 + prior) / (40 + prior)
    assert ch.mean[small, i_par] == pytest.approx((23 + 4 * ch.mean[small, 0]) / (40 + 4), rel=1e-9)
    # a skill with 2 observations moves only part of the way from its parent
    hb2 = hb_two()
    hb2.profiles["small"].skills["arith.mul"] = SkillStats(wins=0, losses=2)
    ch2 = compile_handbook(hb2)
    m_par = ch2.mean[small, ch2.index["arith"]]
    assert 0 < ch2.mean[small, ch2.index["arith.mul"]] < m_par
    # κ = 0: the raw rate
    ch0 = compile_handbook(hb_two(shrinkage=0.0))
    assert ch0.mean[small, ch0.index["arith.mul"]] == pytest.approx(4 / 20)
    assert ch0.mean[small, ch0.index["arith.add"]] == pytest.approx(19 / 20)


def test_cost_falls_back_per_skill_then_model():
    hb = hb_two(cost_a=2e-3, cost_b=1e-4)
    hb.taxonomy["text"] = SkillSpec()
    hb.profiles["big"].skills["arith.mul"] = SkillStats(wins=18, losses=2, cost_usd=5e-3, calls=20)
    ch = compile_handbook(hb)
    b = ch.models.index("big")
    assert ch.cost[b, ch.index["arith.mul"]] == pytest.approx(5e-3)
    assert ch.cost[b, ch.index["arith.add"]] == pytest.approx(2e-3)
    assert ch.cost[b, ch.index["arith"]] == pytest.approx(3.5e-3)       # pooled over children
    assert ch.cost[b, ch.index["text"]] == pytest.approx(ch.cost[b, 0])  # no data: model-wide


# ----- credit -------------------------------------------------------------------------------------------
def test_credit_modes_conserve_and_assign_blame():
    w = np.array([[0.5, 0.5]])
    p = np.array([[0.9, 0.3]])
    w1, l1 = credit(w, p, 0.0, "responsibility")
    assert l1.sum() == pytest.approx(1.0) and w1.sum() == 0
    assert l1[0, 1] > l1[0, 0]  # a failure is blamed mostly on the weak skill
    w1, l1 = credit(w, p, 1.0, "responsibility")
    assert w1.sum() == pytest.approx(1.0) and w1[0, 0] > w1[0, 1]
    w1, l1 = credit(w, p, 1.0, "demand")
    assert np.allclose(w1, [[0.5, 0.5]]) and l1.sum() == 0
    w1, l1 = credit(w, p, 1.0, "whole")
    assert np.allclose(w1, [[1, 1]])


def test_em_credit_recovers_mixture_rates_where_whole_credit_is_biased():
    rng = np.random.default_rng(0)
    true = np.array([0.95, 0.2, 0.6])            # arith.add, arith.mul, logic
    n = 4000
    tags = []
    for _ in range(n):
        k = rng.integers(1, 3)
        tags.append(list(rng.choice(["arith.add", "arith.mul", "logic"], size=k, replace=False)))
    idx = {"arith.add": 0, "arith.mul": 1, "logic": 2}
    p_task = np.array([np.mean([true[idx[s]] for s in t]) for t in tags])
    Y = (rng.random(n) < p_task).astype(float)[:, None]
    C = np.full((n, 1), 1e-4)
    errs = {}
    for mode in ("responsibility", "whole"):
        hb = HandbookSpec(name="m", taxonomy={"arith": SkillSpec(), "arith.add": SkillSpec(),
                                              "arith.mul": SkillSpec(), "logic": SkillSpec()},
                          profiles={"m": ModelProfile()}, shrinkage=4.0)
        ch = compile_handbook(hb)
        fit_evidence(ch, tag_matrix(ch, tags), Y, C, mode=mode)
        est = np.array([ch.mean[0, ch.index[s]] for s in ("arith.add", "arith.mul", "logic")])
        errs[mode] = np.abs(est - true).max()
    assert errs["responsibility"] < 0.04
    assert errs["whole"] > 0.1


# ----- demand -------------------------------------------------------------------------------------------
def test_indicator_demand_regex_weights_and_fallbacks():
    hb = hb_two()
    mt = IndicatorMatcher(hb.taxonomy)
    assert mt.demand("What is 3 plus 4?") == {"arith.add": 1.0}
    d = mt.demand("the product of 3 and 4, plus 1")
    assert d["arith.mul"] == pytest.approx(2 / 3) and d["arith.add"] == pytest.approx(1 / 3)
    assert mt.demand("surplus") == {}  # whole words only
    assert infer_demand(mt, "hello", hints=["arith.mul"]) == ({"arith.mul": 1.0}, "hints")
    assert infer_demand(mt, "hello", fallback=["x.y", "arith.add"])[1] == "task"
    assert infer_demand(mt, "hello") == ({}, "none")


def test_learned_indicators_separate_skills_and_skip_names():
    texts = ["Then Ava asks: what is 3 plus 4?", "Ask Ben what is 5 plus 9.", "Then Ava adds 3 and 2 plus 1.",
             "Ask Ben what is 3 times 4.", "Then Cleo computes 6 times 7.", "So Ava has 2 times 2 times 3."]
    tags = [["arith.add"]] * 3 + [["arith.mul"]] * 3
    ind = learn_indicators(texts, tags)
    assert ind["arith.add"][0].pattern == "plus" and ind["arith.mul"][0].pattern == "times"
    assert not any(i.pattern in ("ava", "ben") for v in ind.values() for i in v)


def test_llm_replies_are_parsed_defensively():
    known = {"arith.add", "arith.mul"}
    assert parse_demand_reply('Sure: {"arith.add": 3, "nope": 1, "arith.mul": 1}', known) == \
        {"arith.add": 0.75, "arith.mul": 0.25}
    assert parse_demand_reply('["arith.mul"]', known) == {"arith.mul": 1.0}
    assert parse_demand_reply("garbage", known) == {}
    tax = parse_taxonomy_reply('```json\n{"skills": [{"id": "Arith.Mul", "description": "x", "indicators": ["times"],'
                               ' "parent": "arith"}, {"id": "bad id!"}, {"id": "arith"}]}\n```')
    assert set(tax) == {"arith.mul", "arith"} and tax["arith.mul"].parent == "arith"


# ----- strategies ------------------------------------------------------------------------------------------
def test_greedy_lambda_floor_thompson_ucb():
    ch = compile_handbook(hb_two())
    add = ch.demand_vector({"arith.add": 1})[None]
    mul = ch.demand_vector({"arith.mul": 1})[None]
    name = lambda sc: ch.models[int(sc.choice[0])]  # noqa: E731
    assert name(score_batch(ch, mul, 0.0)) == "big"
    assert name(score_batch(ch, add, 0.0)) == "big"          # 0.93 vs 0.89 at λ = 0
    assert name(score_batch(ch, add, 0.1)) == "small"        # cost makes the difference
    assert name(score_batch(ch, mul, 0.1)) == "big"          # but not where small is bad
    assert name(score_batch(ch, mul, 10.0)) == "small"
    assert name(score_batch(ch, add, 0.0, "floor", tau=0.7)) == "small"   # cheapest above the floor
    assert name(score_batch(ch, mul, 0.0, "floor", tau=0.7)) == "big"
    assert name(score_batch(ch, mul, 0.0, "floor", tau=0.99)) == "big"    # none reach τ: best lower bound
    # Thompson explores between near-equal models; greedy does not
    rng = np.random.default_rng(0)
    picks = {name(score_batch(ch, add, 0.0, "thompson", rng=rng)) for _ in range(60)}
    assert picks == {"big", "small"}
    # UCB favours the uncertain model when means tie
    hb = hb_two()
    hb.profiles["small"].skills["arith.mul"] = SkillStats(wins=0.9, losses=0.1)
    hb.profiles["big"].skills["arith.mul"] = SkillStats(wins=90, losses=10)
    ch2 = compile_handbook(hb)
    mul2 = ch2.demand_vector({"arith.mul": 1})[None]
    assert ch2.models[int(score_batch(ch2, mul2, 0.0, "ucb", ucb_c=2.0).choice[0])] == "small"


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_estimated_cost_is_monotone_in_lambda(seed):
    rng = np.random.default_rng(seed)
    M, skills = int(rng.integers(2, 6)), ["a", "a.x", "a.y", "b"]
    profiles = {}
    for m in range(M):
        c = float(rng.uniform(1e-5, 1e-2))
        profiles[f"m{m}"] = ModelProfile(cost_usd=c, calls=5, skills={
            s: SkillStats(wins=float(rng.uniform(0, 20)), losses=float(rng.uniform(0, 20)),
                          cost_usd=c * float(rng.uniform(0.5, 2)), calls=5) for s in skills})
    hb = HandbookSpec(name="r", cost_unit="relative", taxonomy={s: SkillSpec() for s in skills}, profiles=profiles)
    ch = compile_handbook(hb)
    W = rng.dirichlet(np.ones(len(ch.skills)), size=30)
    prev = np.inf
    for lam in (0, 0.01, 0.1, 0.3, 1, 3, 10, 100):
        sc = score_batch(ch, W, lam)
        est = sc.cost_usd[np.arange(len(W)), sc.choice]
        assert np.all(est <= np.minimum(prev, np.inf) + 1e-15)
        prev = est


# ----- router, decision log, hook ----------------------------------------------------------------------------
def test_router_logs_decisions_and_outcomes_are_filled_from_results(store):
    w = StoreWriter(store)
    r = SkillRouter(hb_two(), lambda_=0.1, sink=w.sink("routing_decisions"))
    tags = {"run_id": "r1", "design": "cot", "seed": 0}
    a1 = r.choose("solver", [{"role": "user", "content": "What is 2 plus 2?"}], task_id="t1", node="n", **tags)
    a2 = r.choose("solver", [{"role": "user", "content": "What is 2 times 3?"}], task_id="t2", node="n", **tags)
    assert (a1, a2) == ("small", "big")
    w.add("results", {"run_id": "r1", "design": "cot", "task_id": "t1", "seed": 0, "correct": True})
    w.add("results", {"run_id": "r1", "design": "cot", "task_id": "t2", "seed": 0, "correct": False})
    w.flush()
    rows = store.df("SELECT * FROM routing_decisions ORDER BY task_id")
    assert list(rows["chosen"]) == ["small", "big"] and rows["outcome"].isna().all()
    cands = json.loads(rows["candidates"][0])
    assert {c["model"] for c in cands} == {"big", "small"}
    assert all({"utility", "p_mean", "p_lo", "cost"} <= set(c) for c in cands)
    assert json.loads(rows["skills"][0]) == {"arith.add": 1.0}
    assert rows["agent"][0] == "solver" and rows["lambda_"][0] == 0.1 and rows["strategy"][0] == "greedy"
    assert fill_outcomes(store, "r1") == 2
    assert list(store.df("SELECT outcome FROM routing_decisions ORDER BY task_id")["outcome"]) == [True, False]
    assert fill_outcomes(store, "r1") == 0


def test_online_updates_move_the_posterior_and_entropy():
    r = SkillRouter(hb_two(), lambda_=0.0, strategy="greedy")
    i = r.ch.index["arith.add"]
    s = r.models.index("small")
    before = r.ch.mean[s, i]
    for k in range(20):
        d = r.decide({"arith.add": 1.0}, context={"task_id": f"t{k}"})
        assert d.chosen == "big"
    # force observations on the small model
    for _ in range(30):
        d = r.decide({"arith.add": 1.0})
        d.model_index = s
        r.observe(d, 0.0, cost_usd=1e-4)
    assert r.ch.mean[s, i] < before - 0.2
    assert r.observe_task("t3", 1.0) == 1 and "t3" not in r.pending
    h, hn = r.entropy()
    assert h == 0.0 and hn == 0.0  # everything went to 'big'
    saved = r.handbook()
    assert saved.profiles["small"].skills["arith.add"].losses == pytest.approx(1 + 30, abs=1e-6)


def test_route_hook_with_agent_spec_library_and_gateway(tmp_path):
    from masbench.llm import Gateway
    from masbench.spec import ModelSpec, SimProfile

    hb = hb_two()
    hb.profiles["big"] = hb.profiles["big"].model_copy(update={"model": ModelSpec(
        id="sim/big", sim=SimProfile(accuracy={"default": 0.9}), input_usd_per_mtok=5, output_usd_per_mtok=15)})
    hb.profiles["small"] = hb.profiles["small"].model_copy(update={"model": ModelSpec(id="sim/p50")})
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "two.yaml").write_text(handbook_yaml(hb))
    lib = Library(roots=[tmp_path], include_cwd=False)
    rows = []
    gw = Gateway({})
    hook = RouteHook(lib, gw, rows.append)
    agent = AgentSpec(name="solver", prompt="{question}", model=RouteSpec(route="two", **{"lambda": 0.1}))
    route = hook.bind(run_id="r", design="d", task_id="t", seed=1)
    assert route(agent, [{"role": "user", "content": "3 times 4"}]) == "big"
    assert route(agent, [{"role": "user", "content": "3 plus 4"}]) == "small"
    assert {"big", "small"} <= set(gw.models)  # registered from the handbook's model blocks
    assert rows[0]["task_id"] == "t" and rows[0]["seed"] == 1 and rows[0]["handbook"] == "two"
    only_small = AgentSpec(name="s", prompt="{q}", model=RouteSpec(route="two", candidates=["small"]))
    assert hook(only_small, [{"role": "user", "content": "3 times 4"}]) == "small"
    with pytest.raises(KeyError):
        hook(AgentSpec(name="s", prompt="{q}", model=RouteSpec(route="two", candidates=["nope"])), "x")


async def test_routed_call_goes_through_the_gateway_and_async_hook():
    from masbench.llm import Gateway
    from masbench.routing.study import study_pool

    pool = study_pool()
    m = {k: pool[k] for k in ("sim/tiny", "sim/mathy")}
    hb = HandbookSpec(name="p", cost_unit="relative",
                      taxonomy={"arith": SkillSpec(), "arith.add": SkillSpec(indicators=["plus"]),
                                "arith.mul": SkillSpec(indicators=["times"])},
                      profiles={k: ModelProfile(model=v) for k, v in m.items()})
    # an empty handbook (no evidence) still routes: model priors, price-based cost
    r = SkillRouter(hb, lambda_=1.0)
    assert await r.achoose(None, "3 times 4") == "sim/tiny"
    gw = Gateway(m)
    alias = r.choose(None, "What is 3 plus 4?")
    res = await gw.complete(alias, [{"role": "user", "content": "What is 3 plus 4?"}], max_tokens=64,
                            metadata={"sim": {"gold": ["7"], "skills": ["arith.add"]}})
    assert res.ok and res.alias == alias


# ----- learning, split/merge, store ------------------------------------------------------------------------------
def _arrays(models, Y, C, tags, questions=None) -> Arrays:
    n = len(tags)
    return Arrays([f"t{i}" for i in range(n)], models, np.asarray(Y, float), np.asarray(C, float), np.zeros_like(C),
                  tags, questions or [""] * n)


def test_split_and_merge_follow_divergence_and_can_be_undone():
    rng = np.random.default_rng(1)
    n = 400
    tags = [["fam.a"] if i % 2 else ["fam.b"] for i in range(n)]
    # both models equal on a and b → merge
    Y = (rng.random((n, 2)) < 0.7).astype(float)
    C = np.tile([1e-3, 1e-4], (n, 1))
    hb = learn_handbook(_arrays(["m1", "m2"], Y, C, tags), name="f")
    assert not hb.taxonomy["fam.a"].active and not hb.taxonomy["fam.b"].active
    assert hb.provenance.history[-1].action == "merge"
    # new evidence where m2 is bad at b → split again
    p = np.where(np.array([t == ["fam.b"] for t in tags])[:, None], [0.9, 0.05], [0.9, 0.95])
    Y2 = (rng.random((n, 2)) < p).astype(float)
    hb2 = learn_handbook(_arrays(["m1", "m2"], Y2, C, tags), name="f", base=hb)
    assert hb2.taxonomy["fam.a"].active and hb2.taxonomy["fam.b"].active
    assert [e.action for e in hb2.provenance.history] == ["merge", "split"]
    assert hb2.provenance.observations == 2 * n * 2 and hb2.provenance.learning_calls == 4 * n
    assert hb2.provenance.learning_cost_usd == pytest.approx(2 * C.sum())
    # merged children route as the parent
    ch = compile_handbook(hb)
    assert ch.demand_vector({"fam.b": 1.0})[ch.index["fam"]] == 1.0
    hb3, ev = refine(hb2, compile_handbook(hb2), threshold=0.99)
    assert ev and ev[0].action == "merge"


def test_matrix_from_store_single_model_results(store):
    w = StoreWriter(store)
    for model in ("sim/a", "sim/b"):
        for t, ok in (("depth-1-test-s0-0000", True), ("depth-1-test-s0-0001", model == "sim/a")):
            run = f"run-{model[-1]}"
            w.add("calls", {"run_id": run, "design": "cot", "task_id": t, "seed": 0, "purpose": "design",
                            "model_alias": "default", "model": model, "cost_usd": 0.01, "latency_s": 0.1})
            w.add("results", {"run_id": run, "design": "cot", "task_id": t, "seed": 0, "source": "masbench.depth",
                              "axis": "depth", "axis_value": 1, "correct": ok, "cost_usd": 0.01, "tokens": 100,
                              "status": "ok"})
    # a routed cell (two models) is not a single-model outcome
    w.add("calls", {"run_id": "run-a", "design": "cot", "task_id": "x", "seed": 0, "model": "sim/a"})
    w.add("calls", {"run_id": "run-a", "design": "cot", "task_id": "x", "seed": 0, "model": "sim/b"})
    w.add("results", {"run_id": "run-a", "design": "cot", "task_id": "x", "seed": 0, "correct": True, "status": "ok"})
    w.flush()
    df = matrix_from_store(store)
    assert len(df) == 4 and set(df["model"]) == {"sim/a", "sim/b"}
    A = to_arrays(df)
    assert A.Y.tolist() == [[1.0, 1.0], [1.0, 0.0]]
    assert A.skills[0] == ["masbench.depth", "masbench.depth.depth"]  # no suite config: source/axis tags


# ----- metrics ----------------------------------------------------------------------------------------------
def test_metrics_by_hand():
    # a single point at (1, 0.8) with c_max 1: hull is the line from the origin → area 0.4
    assert aiq([(1.0, 0.8)], 1.0) == pytest.approx(0.4)
    # flat after the best point, and points beyond c_max interpolate
    assert aiq([(0.5, 0.8)], 1.0) == pytest.approx(0.5 * 0.4 + 0.5 * 0.8)
    assert aiq([(2.0, 0.8)], 1.0) == pytest.approx(0.2)
    # dominated points do not matter; the hull is concave
    h = upper_hull([(0.5, 0.8), (0.6, 0.5), (1.0, 0.9)])
    assert [tuple(x) for x in h] == [(0.0, 0.0), (0.5, 0.8), (1.0, 0.9)]
    weak, strong = (0.0, 0.5), (1.0, 0.9)
    # the weak→strong line: APGR 0.5, CPT(p) = p
    line = [weak, strong]
    assert apgr(line, weak, strong) == pytest.approx(0.5)
    assert cpt(line, weak, strong, 0.5) == pytest.approx(0.5, abs=1e-3)
    assert cpt(line, weak, strong, 0.8) == pytest.approx(0.8, abs=1e-3)
    # a router at 20% cost reaching full PGR
    assert apgr([(0.2, 0.9)], weak, strong) == pytest.approx(0.9)
    assert np.isnan(cpt([(0.5, 0.6)], weak, strong, 0.8))
    assert routing_entropy([0, 0, 1, 1], 2) == (1.0, 1.0)
    assert routing_entropy([3, 3, 3], 4) == (0.0, 0.0)
    Y = np.array([[1, 1], [0, 1], [0, 0]])
    C = np.array([[2, 1], [1, 3], [5, 4]])
    assert oracle_choice(Y, C).tolist() == [1, 1, 1]


# ----- CLI ---------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_learn_show_eval(tmp_path, monkeypatch):
    from masbench.cli import app
    from masbench.routing.study import TRUE_ACCURACY, study_tasks

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    tasks = study_tasks(120, seed=3)
    rows = []
    price = {"sim/tiny": 1e-5, "sim/mathy": 3e-4, "sim/frontier": 5e-3}
    for t in tasks:
        for m in price:
            p = np.mean([TRUE_ACCURACY[m][s] for s in t.skills])
            rows.append({"task_id": t.id, "model": m, "correct": bool(rng.random() < p), "cost_usd": price[m],
                         "tokens": 100, "skills": t.skills, "question": t.question})
    save_matrix(pd.DataFrame(rows), tmp_path / "m.parquet")
    runner = CliRunner()
    r = runner.invoke(app, ["skills", "learn", "--matrix", "m.parquet", "--out", "skills/study.yaml"])
    assert r.exit_code == 0, r.output
    assert "learning cost" in r.output
    r = runner.invoke(app, ["validate", "skills/study.yaml"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["skills", "show", "study"])
    assert r.exit_code == 0 and "arith.mul" in r.output, r.output
    r = runner.invoke(app, ["route", "eval", "--matrix", "m.parquet", "--train", "40", "--seeds", "1",
                            "--out", "out", "--lambdas", "0,0.1,1"])
    assert r.exit_code == 0, r.output
    for name in ("oracle", "ours", "skillorchestra (as coded)", "cluster-best", "random (cost-matched)",
                 "single-model hull", "AIQ", "APGR", "CPT80", "SIMULATED"):
        assert name in r.output
    assert (tmp_path / "out" / "pareto.png").stat().st_size > 5000
    assert set(pd.read_csv(tmp_path / "out" / "metrics.csv")["router"]) >= {"ours", "oracle", "cluster-best"}
    r = runner.invoke(app, ["schema", "handbook"])
    assert r.exit_code == 0 and '"taxonomy"' in r.output


async def test_llm_taxonomy_proposal_and_classifier_over_http(http_server):
    from masbench.llm import Gateway
    from masbench.routing.demand import LLMDemandClassifier
    from masbench.routing.learn import propose_taxonomy
    from masbench.spec import ModelSpec

    reply = ('{{"skills": [{{"id": "arith.mul", "description": "multiplication", "indicators": ["times"]}},'
             ' {{"id": "arith.add", "description": "addition", "indicators": ["plus"]}}]}}')
    srv = http_server(reply=reply, prompt_tokens=100, completion_tokens=40)
    gw = Gateway({"llm": ModelSpec(id="openai/fake", api_base=srv.base_url, input_usd_per_mtok=1,
                                   output_usd_per_mtok=2)})
    A = _arrays(["m"], [[1], [0], [1], [0]], [[1e-4]] * 4, [[], [], [], []],
                ["3 plus 4", "3 times 4", "5 plus 1", "6 times 7"])
    tax, cost, toks = await propose_taxonomy(gw, "llm", A)
    assert set(tax) == {"arith.mul", "arith.add"} and cost == pytest.approx((100 * 1 + 40 * 2) / 1e6)
    hb = HandbookSpec(name="c", taxonomy=tax, profiles={"m": ModelProfile()})
    srv2 = http_server(reply='{{"arith.mul": 1}}')
    gw2 = Gateway({"clf": ModelSpec(id="openai/fake", api_base=srv2.base_url)})
    clf = LLMDemandClassifier(gw2, "clf", hb)
    assert await clf.classify("what is 3 plus 4") == {"arith.mul": 1.0}  # the LLM, not the indicators
    r = SkillRouter(hb, classifier=clf)
    d, src = await r.ademand("anything")
    assert src == "llm" and clf.calls == 2


async def test_routed_agent_in_a_design_run_logs_decisions_and_outcomes(tmp_path, store):
    """End to end: a design whose solver is `model: {route: …}` run by the graph runtime."""
    from masbench.bench import score
    from masbench.llm import Gateway
    from masbench.routing.study import study_pool, study_tasks
    from masbench.spec import DesignSpec

    pool = study_pool()
    hb = HandbookSpec(name="rt", cost_unit="relative",
                      taxonomy={"arith": SkillSpec(), "arith.add": SkillSpec(indicators=["plus", "sum", "add", "total"]),
                                "arith.mul": SkillSpec(indicators=["times", "product", "multiply", "each"])},
                      profiles={m: ModelProfile(model=pool[m], cost_usd=c, calls=10, skills={
                          "arith.add": SkillStats(wins=9, losses=1, cost_usd=c, calls=10),
                          "arith.mul": SkillStats(wins=wm, losses=10 - wm, cost_usd=c, calls=10)})
                          for m, c, wm in (("sim/tiny", 1e-5, 2), ("sim/mathy", 3e-4, 9))})
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "rt.yaml").write_text(handbook_yaml(hb))
    lib = Library(roots=[tmp_path], include_cwd=False)
    design = DesignSpec.model_validate({
        "name": "routed-cot", "nodes": {"solve": {"agent": "solver"}}, "output": "solve",
        "agents": {"solver": {"name": "solver", "model": {"route": "rt", "lambda": 0.2},
                              "prompt": "{question}\nEnd with \"Answer: <final answer>\"."}}})
    w = StoreWriter(store)
    gw = Gateway({}, sink=w.put)
    hook = RouteHook(lib, gw, w.sink("routing_decisions"))
    tasks = [t for t in study_tasks(60, seed=5) if len(t.skills) == 1 and t.skills[0] in ("arith.add", "arith.mul")]
    for t in tasks:
        tags = {"run_id": "rt-run", "design": "routed-cot", "task_id": t.id, "seed": 0}
        ctx = RunContext(gateway=gw, library=lib, tags=tags, route=hook.bind(**tags))
        res = await run_design(design, t, ctx)
        ok = score(t, res.answers).correct
        w.add("results", {**tags, "correct": ok, "status": res.status})
    w.flush()
    dec = store.df("SELECT d.task_id, d.chosen, c.model_alias FROM routing_decisions d "
                   "JOIN calls c ON c.task_id = d.task_id AND c.run_id = d.run_id")
    assert len(dec) == len(tasks) and (dec["chosen"] == dec["model_alias"]).all()
    kinds = {t.id: t.skills[0] for t in tasks}
    chosen = {r.task_id: r.chosen for r in dec.itertuples()}
    assert all(chosen[i] == ("sim/tiny" if k == "arith.add" else "sim/mathy") for i, k in kinds.items())
    assert fill_outcomes(store, "rt-run") == len(tasks)


def test_demand_is_reinferred_every_call_unlike_first_turn_only():
    msgs = ["Plan: what is 3 plus 4?", "Now: what is 7 times 6?"]
    ours = SkillRouter(hb_two(), lambda_=0.1)
    so_like = SkillRouter(hb_two(), lambda_=0.1, demand_once=True)
    assert [ours.choose(None, m, task_id="t") for m in msgs] == ["small", "big"]
    assert [so_like.choose(None, m, task_id="t") for m in msgs] == ["small", "small"]  # stale demand


def test_latency_and_cost_per_skill_are_learned():
    tags = [["arith.add"], ["arith.mul"]] * 20
    Y = np.ones((40, 2))
    C = np.tile([[1e-3, 1e-4], [3e-3, 1e-4]], (20, 1))
    A = _arrays(["big", "small"], Y, C, tags)
    A.L = np.tile([[1.0, 0.1], [2.0, 0.1]], (20, 1))
    hb = learn_handbook(A, name="lat")
    big = hb.profiles["big"]
    assert big.skills["arith.add"].latency_s == pytest.approx(1.0)
    assert big.skills["arith.mul"].latency_s == pytest.approx(2.0)
    assert big.skills["arith.mul"].cost_usd == pytest.approx(3e-3)
    assert big.latency_s == pytest.approx(1.5) and big.cost_usd == pytest.approx(2e-3)
