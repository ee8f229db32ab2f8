"""What a router and its runtime hook pass along, checked field by field (masbench.routing.router): the
decision row, where a call's demand comes from (indicators, the agent's hints, the task's tags, an LLM
classifier), a cell's tags, the hook's cached routers and their seeds, classifiers and candidates.

The handbook is the one of ``test_router_by_hand.py`` with indicators: κ = 2, prior Beta(1, 1); skills
``a`` (indicator "alpha") and ``b`` (indicator "beta"); model ``m`` with a: 3 wins 1 loss, b: 0 wins 2
losses; ``n`` with no evidence. By hand (see that file): m on a Beta(4, 2), mean 2/3; m on b Beta(1, 3),
mean 1/4; n everywhere ½. No costs are known (no prices): at any λ, demand {a} chooses m and {b} n.

A second handbook, ``subs``, has sub-agent designs as candidates (target ``design``): ``solo`` with 5 wins on
``a``, ``duo`` with 5 losses; a route node (``via = "node"``) chooses among them, an agent's call cannot."""

from __future__ import annotations

import inspect
import json
import re
import time
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from masbench.routing import HandbookSpec, RouteHook, SkillRouter
from masbench.routing.demand import LLMDemandClassifier
from masbench.spec import RouteSpec
from masbench.spec.handbook import ModelProfile, SkillSpec, SkillStats


def _hb() -> HandbookSpec:
    return HandbookSpec(name="hand", shrinkage=2.0,
                        taxonomy={"a": SkillSpec(description="a", indicators=["alpha"]),
                                  "b": SkillSpec(description="b", indicators=["beta"])},
                        profiles={"m": ModelProfile(skills={"a": SkillStats(wins=3, losses=1),
                                                            "b": SkillStats(wins=0, losses=2)}),
                                  "n": ModelProfile()})


def _subs(*names: str) -> HandbookSpec:
    stats = {"solo": SkillStats(wins=5, losses=0), "duo": SkillStats(wins=0, losses=5)}
    return HandbookSpec(name="subs", taxonomy={"a": SkillSpec(description="a", indicators=["alpha"])},
                        profiles={k: ModelProfile(target="design", skills={"a": stats.get(k, SkillStats())})
                                  for k in names})


class _Library:
    """The two calls the router makes of a library: a handbook by name, whether a design exists."""

    def __init__(self, handbooks: dict[str, HandbookSpec], designs: set[str] = frozenset()):  # type: ignore[assignment]
        self.handbooks, self.designs = handbooks, set(designs)

    def handbook(self, name: str) -> HandbookSpec:
        return self.handbooks[name]

    def has(self, kind: str, name: str) -> bool:
        return kind == "design" and name in self.designs


class _Classifier:
    """A stand-in for the LLM classifier: answers a fixed demand and records the text it was shown."""

    def __init__(self, reply: dict[str, float]):
        self.reply, self.seen = reply, []

    async def classify(self, text: str) -> dict[str, float]:
        self.seen.append(text)
        return dict(self.reply)


class _Gateway:
    """A gateway that knows no model and answers every completion with ``reply``."""

    def __init__(self, reply: str):
        self.reply, self.models, self.prompts = reply, {}, []

    def add_model(self, name: str, spec: Any) -> None:
        self.models[name] = spec

    async def complete(self, model: str, messages: list[dict[str, str]], **kw: Any) -> Any:
        self.prompts.append((model, messages[-1]["content"]))
        return SimpleNamespace(ok=True, text=self.reply, cost_usd=0.0)


def _lib() -> _Library:
    return _Library({"hand": _hb(), "subs": _subs("solo", "duo"), "subs3": _subs("solo", "duo", "trio")},
                    {"solo", "duo"})


def _route(name: str, lam: float | None = None, **kw: Any) -> RouteSpec:
    """A route as a suite writes it (``lambda`` is a keyword of Python, so it is read from a mapping)."""
    return RouteSpec.model_validate({"route": name, **({} if lam is None else {"lambda": lam}), **kw})


AGENT = SimpleNamespace(name="solver", model=_route("hand", 0.0), skills=["b"])
TASK = SimpleNamespace(id="t9", skills=["a"])


def test_a_decision_row_names_its_cell_and_what_was_weighed():
    rows = []
    r = SkillRouter(_hb(), lambda_=0.25, sink=rows.append)
    t0 = time.time()
    d = r.decide({"a": 1.0}, "given", {"run_id": "r1", "design": "cot", "task_id": "t1", "seed": 3, "node": "solve",
                                       "agent": "solver"})
    t1 = time.time()
    (row,) = rows
    assert len(d.decision_id) == 16 and d.chosen == "m" and d.demand_source == "given"
    assert {k: v for k, v in row.as_dict().items() if k != "ts"} == {
        "decision_id": d.decision_id, "run_id": "r1", "design": "cot", "task_id": "t1", "seed": 3, "node": "solve",
        "agent": "solver", "handbook": "hand", "strategy": "greedy", "lambda_": 0.25, "skills": '{"a": 1.0}',
        "candidates": json.dumps(d.candidates), "chosen": "m", "outcome": None}
    assert t0 <= row.ts <= t1
    assert r.observe_task("never-seen", 1.0) == 0  # a task without pending decisions teaches nothing


def test_from_route_reads_the_handbook_through_the_library_and_keeps_the_routes_settings():
    rows = []
    route = _route("hand", 0.5, strategy="floor", tau=0.6, candidates=["n"])
    r = SkillRouter.from_route(route, _lib(), sink=rows.append)
    assert (r.lambda_, r.strategy, r.tau, r.models, r.sink) == (0.5, "floor", 0.6, ["n"], rows.append)


def test_demand_from_indicators_then_the_agents_hints_then_the_tasks_tags():
    r = SkillRouter(_hb())
    assert r.demand("alpha?", AGENT, TASK) == ({"a": 1.0}, "indicators")
    assert r.demand("no cue", AGENT, TASK) == ({"b": 1.0}, "hints")
    assert r.demand("no cue", None, TASK) == ({"a": 1.0}, "task")
    assert SkillRouter(_hb(), use_task_skills=False).demand("no cue", None, TASK) == ({}, "none")


async def test_the_classifiers_demand_first_then_the_same_fallbacks():
    clf = _Classifier({"b": 1.0})
    r = SkillRouter(_hb(), classifier=cast(Any, clf))
    assert await r.ademand([{"role": "user", "content": "alpha"}], AGENT, TASK) == ({"b": 1.0}, "llm")
    assert clf.seen == ["alpha"]
    r.classifier = cast(Any, _Classifier({}))  # an unusable reply: the sync rules decide
    assert await r.ademand([{"role": "user", "content": "alpha"}], AGENT, TASK) == ({"a": 1.0}, "indicators")
    assert await r.ademand("no cue", AGENT, TASK) == ({"b": 1.0}, "hints")
    assert await r.ademand("no cue", None, TASK) == ({"a": 1.0}, "task")


async def test_achoose_logs_the_task_the_agent_and_where_the_demand_came_from():
    rows = []
    r = SkillRouter(_hb(), lambda_=0.0, sink=rows.append)
    assert await r.achoose(AGENT, "no cue", TASK, run_id="r") == "n"  # the agent's hint b: n (½ > ¼)
    assert await r.achoose(None, "no cue", SimpleNamespace(id="t8", skills=["a"])) == "m"  # the task's a: m
    assert await r.achoose(None, "no cue", TASK, task_id="given") == "m"  # a given task id wins over the task's
    assert await r.achoose(None, "alpha") == "m"
    assert [(x.agent, x.task_id, x.run_id, json.loads(x.skills or "")) for x in rows] == [
        ("solver", "t9", "r", {"b": 1.0}), (None, "t8", None, {"a": 1.0}), (None, "given", None, {"a": 1.0}),
        (None, None, None, {"a": 1.0})]
    assert [d.demand_source for k in ("t9", "t8", "given") for d in r.pending[k]] == ["hints", "task", "task"]


async def test_demand_once_asks_the_classifier_once_per_run_task_and_seed():
    """SkillOrchestra's first-turn-only demand: the second call of (r, t, 1) reuses the first's demand {a}
    (m) although the classifier now says b; another seed or run is another cell and asks again (b: n)."""
    clf = _Classifier({"a": 1.0})
    r = SkillRouter(_hb(), lambda_=0.0, classifier=cast(Any, clf), demand_once=True)
    assert await r.achoose(None, "first", run_id="r", task_id="t", seed=1) == "m"
    clf.reply = {"b": 1.0}
    assert await r.achoose(None, "second", run_id="r", task_id="t", seed=1) == "m"
    assert clf.seen == ["first"]
    assert [(d.demand, d.demand_source) for d in r.pending["t"]] == [({"a": 1.0}, "llm (first turn)")] * 2
    assert await r.achoose(None, "third", run_id="r", task_id="t", seed=2) == "n"
    assert await r.achoose(None, "fourth", run_id="r2", task_id="t", seed=1) == "n"
    assert await r.achoose(None, "fifth", run_id="r", task_id="u", seed=1) == "n"
    assert clf.seen == ["first", "third", "fourth", "fifth"]
    plain = SkillRouter(_hb(), lambda_=0.0, sink=(rows := []).append)
    assert await plain.achoose(None, "beta", run_id="r", task_id="t", seed=1) == "n"
    assert json.loads(rows[0].skills or "") == {"b": 1.0}  # without demand_once every call infers its own


def test_the_hook_caches_one_router_per_route_with_the_routes_settings_and_its_own_seed():
    rows = []
    hook = RouteHook(_lib(), sink=rows.append)
    route = _route("hand", 0.5, strategy="ucb", tau=0.6, candidates=["m", "n"])
    r = hook.router_for(route)
    assert hook.router_for(route) is r
    assert (r.lambda_, r.strategy, r.tau, r.models, r.classifier, r.sink) == (0.5, "ucb", 0.6, ["m", "n"], None,
                                                                             rows.append)
    r2 = hook.router_for(route.model_copy(update={"tau": 0.5}))
    assert r2 is not r and r2.tau == 0.5
    # seeds: the hook's seed (0) plus the number of routers built before: 0, then 1
    assert r.rng.random() == np.random.default_rng(0).random()
    assert r2.rng.random() == np.random.default_rng(1).random()
    assert RouteHook(_lib(), seed=7).router_for(route).rng.random() == np.random.default_rng(7).random()


def test_design_candidates_are_chosen_by_a_route_node_and_must_be_in_the_library():
    hook = RouteHook(_lib())
    assert hook.router_for(RouteSpec(route="subs"), "node").models == ["solo", "duo"]
    with pytest.raises(ValueError, match="can only be chosen by a `kind: route` node"):
        hook.router_for(RouteSpec(route="subs"))  # the default is an agent's call
    with pytest.raises(ValueError, match="the library has no design 'trio'"):
        hook.router_for(RouteSpec(route="subs3"), "node")
    node = SimpleNamespace(name="pick", model=_route("subs", 0.0), via="node")
    assert hook.choose(node, "alpha") == "solo"  # solo: Beta(κ·m + 5, κ·(1 − m)) beats duo on a
    with pytest.raises(ValueError, match="can only be chosen by a `kind: route` node"):
        hook.choose(SimpleNamespace(name="call", model=RouteSpec(route="subs")), "alpha")


async def test_the_async_hook_reads_the_agents_via_too():
    hook = RouteHook(_lib())
    node = SimpleNamespace(name="pick", model=_route("subs", 0.0), via="node")
    assert await hook.achoose(node, "alpha") == "solo"
    assert await hook.achoose(AGENT, "alpha") == "m"
    with pytest.raises(ValueError, match="can only be chosen by a `kind: route` node"):
        await hook.achoose(SimpleNamespace(name="call", model=RouteSpec(route="subs")), "alpha")


def test_a_classifier_is_built_only_with_a_model_and_a_gateway():
    gw = _Gateway('{"b": 1}')
    route = RouteSpec(route="hand")
    clf = RouteHook(_lib(), gw, classifier_model="judge", tags={"run_id": "r"}).router_for(route).classifier
    assert isinstance(clf, LLMDemandClassifier)
    assert (clf.gateway, clf.model, clf.known, clf.tags) == (gw, "judge", {"a", "b"}, {"run_id": "r"})
    assert RouteHook(_lib(), None, classifier_model="judge").router_for(route).classifier is None
    assert RouteHook(_lib(), gw).router_for(route).classifier is None


def test_an_agent_without_a_route_is_named_in_the_error():
    hook = RouteHook(_lib())
    with pytest.raises(TypeError, match=re.escape("agent 'solver' has no route (model: 'gpt-x')")):
        hook.choose(SimpleNamespace(name="solver", model="gpt-x"), "alpha")
    with pytest.raises(TypeError, match=re.escape("agent 'gpt-x' has no route (model: 'gpt-x')")):
        hook.choose("gpt-x", "alpha")
    assert hook.choose(_route("hand", 0.0), "alpha") == "m"  # a route is its own model


def test_the_sync_hook_passes_agent_task_and_tags_and_a_calls_tags_win():
    rows = []
    hook = RouteHook(_lib(), sink=rows.append, tags={"run_id": "r", "design": "d"})
    out = hook(AGENT, "no cue", TASK, node="n1")
    assert out == "n" and not inspect.isawaitable(out)  # the agent's hint b
    assert hook.choose(AGENT, "no cue", TASK, run_id="r2") == "n"
    assert hook.bind(run_id="cell", seed=4)(AGENT, "no cue", TASK, seed=5) == "n"
    assert [(x.agent, x.task_id, x.run_id, x.design, x.seed, x.node) for x in rows] == [
        ("solver", "t9", "r", "d", None, "n1"), ("solver", "t9", "r2", "d", None, None),
        ("solver", "t9", "cell", "d", 5, None)]
    assert {json.loads(x.skills or "")["b"] for x in rows} == {1.0}


async def test_with_a_classifier_the_hook_answers_an_awaitable_and_the_classifier_sees_the_call():
    rows = []
    gw = _Gateway('{"b": 1}')
    hook = RouteHook(_lib(), gw, rows.append, classifier_model="judge", tags={"run_id": "r"})
    agent = SimpleNamespace(name="solver", model=_route("hand", 0.0))
    out = hook(agent, [{"role": "user", "content": "alpha"}], TASK, design="d")
    assert inspect.isawaitable(out)
    assert await out == "n"  # the classifier's b, over the indicator's a
    assert await hook.achoose(agent, "alpha", TASK, run_id="r2") == "n"
    assert [(x.agent, x.task_id, x.run_id, x.design) for x in rows] == [("solver", "t9", "r", "d"),
                                                                          ("solver", "t9", "r2", None)]
    assert [m for m, _ in gw.prompts] == ["judge", "judge"] and all("alpha" in p for _, p in gw.prompts)


def test_the_hook_feeds_a_tasks_outcome_to_every_router():
    """Two routers (all models; only n) each decide once for task t on {a}; m on a is Beta(4, 2), n Beta(1, 1).
    A win credits a and the root: m → Beta(5, 2) in the first, n → Beta(2, 1) in the second; t's decisions are
    spent, u's (m, a loss) still pending."""
    hook = RouteHook(_lib())
    both = SimpleNamespace(name="x", model=_route("hand", 0.0))
    only_n = SimpleNamespace(name="y", model=_route("hand", 0.0, candidates=["n"]))
    assert (hook.choose(both, "alpha", task_id="t"), hook.choose(only_n, "alpha", task_id="t")) == ("m", "n")
    assert hook.choose(both, "alpha", task_id="u") == "m"
    assert hook.observe_task("t", 1.0) == 2 and hook.observe_task("t", 1.0) == 0
    r1, r2 = hook.router_for(both.model), hook.router_for(only_n.model)
    a1, a2 = r1.ch.index["a"], r2.ch.index["a"]
    np.testing.assert_allclose([r1.ch.alpha[0, a1], r1.ch.alpha[0, 0], r1.ch.beta[0, a1]], [5, 5, 2])
    np.testing.assert_allclose([r2.ch.alpha[0, a2], r2.ch.alpha[0, 0], r2.ch.beta[0, a2]], [2, 2, 1])
    assert hook.observe_task("u", 0.0) == 1
    assert r1.ch.beta[0, a1] == 3


def test_choose_logs_the_task_the_agent_and_where_the_demand_came_from():
    """The sync path of the async test above (indicator demand, no classifier)."""
    rows = []
    r = SkillRouter(_hb(), lambda_=0.0, sink=rows.append)
    assert r.choose(AGENT, "no cue", TASK, run_id="r") == "n"
    assert r.choose(None, "no cue", SimpleNamespace(id="t8", skills=["a"])) == "m"
    assert r.choose(None, "no cue", TASK, task_id="given") == "m"
    assert r(None, "beta") == "n"
    assert [(x.agent, x.task_id, x.run_id, json.loads(x.skills or "")) for x in rows] == [
        ("solver", "t9", "r", {"b": 1.0}), (None, "t8", None, {"a": 1.0}), (None, "given", None, {"a": 1.0}),
        (None, None, None, {"b": 1.0})]
    assert [d.demand_source for k in ("t9", "t8", "given") for d in r.pending[k]] == ["hints", "task", "task"]
    once = SkillRouter(_hb(), lambda_=0.0, demand_once=True)
    assert [once.choose(None, m, run_id="r", task_id="t", seed=s) for m, s in (("alpha", 1), ("beta", 1), ("beta", 2))] \
        == ["m", "m", "n"]
    assert [d.demand_source for d in once.pending["t"]] == ["indicators (first turn)"] * 3


def test_a_router_without_settings_has_a_bare_routes_defaults():
    bare = RouteSpec(route="hand")
    r = SkillRouter(_hb())
    assert (r.lambda_, r.strategy, r.tau) == (bare.lambda_, bare.strategy, bare.tau) == (1.0, "greedy", 0.7)
    assert (r.ucb_c, r.z, r.credit_mode, r.use_task_skills, r.demand_once) == (1.0, 1.645, "responsibility", True, False)


async def test_a_task_without_an_id_is_routed_and_logged_without_one():
    rows = []
    r = SkillRouter(_hb(), lambda_=0.0, sink=rows.append)
    bare = SimpleNamespace(skills=["b"])
    assert r.choose(None, "no cue", bare) == "n" and await r.achoose(None, "no cue", bare) == "n"
    assert [x.task_id for x in rows] == [None, None] and r.pending == {}
