"""Learning a handbook (masbench.routing.learn) on hand-made inputs: split and merge's divergence measure (a
child counts only when every model has at least ``min_obs`` pooled observations of it), then the taxonomy from
tags, the tag matrix, the evidence fit, contrastive pairs, the LLM taxonomy's prompt and reply, strengths and
weaknesses, and what a learned handbook records of its learning."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from masbench.routing import HandbookSpec, compile_handbook, credit
from masbench.routing.demand import learn_indicators
from masbench.routing.handbook import CompiledHandbook
from masbench.routing.learn import (
    PROPOSE_PROMPT,
    annotate,
    contrastive_pairs,
    divergence,
    fit_evidence,
    learn_handbook,
    parse_taxonomy_reply,
    propose_taxonomy,
    refine,
    tag_matrix,
    tags_from_taxonomy,
    taxonomy_from_tags,
)
from masbench.routing.matrix import Arrays
from masbench.spec import ModelSpec
from masbench.spec.handbook import ModelProfile, SkillSpec, SkillStats


def _hb(n_y: float) -> HandbookSpec:
    """Parent a, children a.x and a.y; m: 4/1 on a.x, 1/4 on a.y; n: 3/2 on a.x, n_y observations of a.y."""
    return HandbookSpec(
        name="div", shrinkage=0.0,
        taxonomy={"a": SkillSpec(description="a"), "a.x": SkillSpec(description="x"), "a.y": SkillSpec(description="y")},
        profiles={"m": ModelProfile(skills={"a.x": SkillStats(wins=4, losses=1), "a.y": SkillStats(wins=1, losses=4)}),
                  "n": ModelProfile(skills={"a.x": SkillStats(wins=3, losses=2), "a.y": SkillStats(wins=n_y, losses=0)})})


def test_a_child_seen_too_little_by_one_model_is_left_out():
    ch = compile_handbook(_hb(1.0))  # n saw a.y once: fewer than 3
    assert divergence(ch, ch.index["a"], min_obs=3.0) == (0.0, [ch.index["a.x"]])


def test_the_largest_spread_of_the_childrens_means_over_models():
    """κ = 0: each child's posterior is its own evidence. m: a.x 4/5, a.y 1/5 → std 0.3; n: a.x 3/5, a.y 3/3
    → std 0.2; the largest is 0.3. At exactly min_obs the child counts."""
    ch = compile_handbook(_hb(3.0))
    value, kids = divergence(ch, ch.index["a"], min_obs=3.0)
    assert kids == [ch.index["a.x"], ch.index["a.y"]]
    assert value == pytest.approx(0.3)
    assert np.std([0.8, 0.2]) == pytest.approx(0.3) and np.std([0.6, 1.0]) == pytest.approx(0.2)


# ----- the rest of learning, worked by hand ------------------------------------------------------------
def _arrays(Y, questions=None, tags=None, C=None, T=None) -> Arrays:
    Y = np.asarray(Y, float)
    n, m = Y.shape
    return Arrays([f"t{i}" for i in range(n)], [f"m{j + 1}" for j in range(m)], Y,
                  np.zeros_like(Y) if C is None else np.asarray(C, float), np.zeros_like(Y) if T is None else np.asarray(T, float),
                  tags or [[] for _ in range(n)], questions or [f"q{i}" for i in range(n)])


def test_a_taxonomy_from_tags_has_every_dotted_ancestor_and_a_few_short_examples():
    """Examples are the first ``examples`` questions of each tag, whitespace collapsed, cut to
    ``example_chars`` with "..." (13 x's at 10 characters: 7 x's and "..."); a tag's ancestors get none."""
    tax = taxonomy_from_tags([["a.b.c"], ["d"], ["d"], ["e"], ["f"]],
                             ["Q  one\n two", "x" * 13, "second", "", "abcdefghij"], indicators=False, examples=1,
                             example_chars=10)
    assert {k: (v.description, v.indicators, v.examples) for k, v in tax.items()} == {
        "a": ("a (from task metadata)", [], []), "a.b": ("a.b (from task metadata)", [], []),
        "a.b.c": ("a.b.c (from task metadata)", [], ["Q one two"]), "d": ("d (from task metadata)", [], ["xxxxxxx..."]),
        "e": ("e (from task metadata)", [], []), "f": ("f (from task metadata)", [], ["abcdefghij"])}
    tax = taxonomy_from_tags([["d"]] * 3, ["one", "y" * 121, "three"], indicators=False)  # the defaults: 2, 120
    assert tax["d"].examples == ["one", "y" * 117 + "..."]
    assert taxonomy_from_tags([["d"]], None)["d"].examples == []


def test_indicators_are_learned_from_the_tagged_questions_when_asked():
    qs = ["add these plus", "plus more here", "times that", "times again"]
    tags = [["s.add"], ["s.add"], ["s.mul"], ["s.mul"]]
    learned = learn_indicators(qs, tags)
    assert [i.pattern for i in learned["s.add"]] == ["plus"]
    tax = taxonomy_from_tags(tags, qs)
    assert tax["s.add"].indicators == learned["s.add"] and tax["s.mul"].indicators == learned["s.mul"]
    assert taxonomy_from_tags(tags, qs, indicators=False)["s.add"].indicators == []
    assert taxonomy_from_tags(tags, [""] * 4)["s.add"].indicators == []


def test_tag_matrix_keeps_evidence_at_the_finest_known_skill():
    """x.y is merged into x (inactive) but evidence still lands on x.y; an unknown child falls back to
    its prefix, an unknown skill and an untagged task to the root; a demand's weights are normalised."""
    hb = HandbookSpec(name="t", taxonomy={"x": SkillSpec(), "x.y": SkillSpec(active=False), "z": SkillSpec()},
                      profiles={"m": ModelProfile()})
    ch = compile_handbook(hb)
    assert ch.skills == ["*", "x", "x.y", "z"]
    np.testing.assert_allclose(tag_matrix(ch, [["x.y"], ["x.y.q"], ["nope"], [], ["x.y", "z"]]),
                               [[0, 0, 1, 0], [0, 0, 1, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0.5, 0.5]])
    np.testing.assert_allclose(tag_matrix(ch, [["x"]], [{"x.y": 3.0, "z": 1.0}]), [[0, 0, 0.75, 0.25]])
    # x.q falls back to x (a one-part prefix); x.y.q.r to x.y (the longest known prefix); two unknown tags add up
    np.testing.assert_allclose(tag_matrix(ch, [["x.q"], ["x.y.q.r"], ["nope", "other", "z"]]),
                               [[0, 1, 0, 0], [0, 0, 1, 0], [2 / 3, 0, 0, 1 / 3]])


def _one_skill() -> CompiledHandbook:
    return compile_handbook(HandbookSpec(name="o", shrinkage=0.0, taxonomy={"a": SkillSpec()},
                                         profiles={"m1": ModelProfile(), "m2": ModelProfile()}))


def test_fit_evidence_adds_outcomes_costs_tokens_and_latency_by_demand():
    """One task on a: m1 right at $0.002, 100 tokens, 1 s; m2 wrong at $0.001, 50 tokens, 2 s. Added twice:
    the evidence doubles (the first fit's is kept as the base of the second); without tokens, 0."""
    ch = _one_skill()
    W, Y = np.array([[0.0, 1.0]]), np.array([[1.0, 0.0]])
    for _ in range(2):
        fit_evidence(ch, W, Y, np.array([[0.002, 0.001]]), np.array([[100.0, 50.0]]), mode="demand",
                     lat=np.array([[1.0, 2.0]]))
    np.testing.assert_allclose([ch.wins[:, 1], ch.losses[:, 1]], [[2, 0], [0, 2]])
    np.testing.assert_allclose([ch.cost_sum[:, 1], ch.tok_sum[:, 1], ch.lat_sum[:, 1], ch.cost_n[:, 1]],
                               [[0.004, 0.002], [200, 100], [2, 4], [2, 2]])
    np.testing.assert_allclose(ch.cost[:, 1], [0.002, 0.001])  # refreshed
    np.testing.assert_allclose(ch.mean[:, 1], [1, 0])  # κ = 0: the raw rates
    bare = _one_skill()
    fit_evidence(bare, W, Y, np.array([[0.002, 0.001]]), mode="whole")
    np.testing.assert_allclose([bare.tok_sum[:, 1], bare.lat_sum[:, 1], bare.wins[:, 1]], [[0, 0], [0, 0], [1, 0]])


def test_demand_fit_splits_by_weight_even_when_the_rates_differ():
    """κ = 0, m1 a: 3/1 (0.75), b: 1/3 (0.25); one task on (½, ½), wrong: demand credit gives each skill half
    a loss (responsibility would blame b more)."""
    hb = HandbookSpec(name="d", shrinkage=0.0, taxonomy={"a": SkillSpec(), "b": SkillSpec()},
                      profiles={"m1": ModelProfile(skills={"a": SkillStats(wins=3, losses=1), "b": SkillStats(wins=1, losses=3)})})
    ch = compile_handbook(hb)
    fit_evidence(ch, np.array([[0, 0.5, 0.5]]), np.array([[0.0]]), np.zeros((1, 1)), mode="demand")
    np.testing.assert_allclose(ch.losses[0], [0, 1.5, 3.5])


def test_responsibility_fit_ends_at_its_fixed_point():
    """EM: the evidence added equals the responsibility credit computed from the final rates (to the 10⁻⁶
    tolerance), not from the starting ones. Two skills, tasks on (½, ½), (1, 0) and (0, 1)."""
    hb = HandbookSpec(name="em", shrinkage=1.0, taxonomy={"a": SkillSpec(), "b": SkillSpec()},
                      profiles={"m1": ModelProfile()})
    ch = compile_handbook(hb)
    W = np.array([[0, 0.5, 0.5]] * 4 + [[0, 1, 0]] * 2 + [[0, 0, 1]] * 2)
    Y = np.array([[1.0], [1.0], [0.0], [1.0], [1.0], [1.0], [0.0], [0.0]])
    start = ch.mean.copy()
    fit_evidence(ch, W, Y, np.zeros_like(Y))
    win, loss = credit(W, np.broadcast_to(ch.mean[0], W.shape), Y[:, 0])
    np.testing.assert_allclose([ch.wins[0], ch.losses[0]], [win.sum(0), loss.sum(0)], atol=1e-5)
    first, _ = credit(W, np.broadcast_to(start[0], W.shape), Y[:, 0])
    assert abs(first.sum(0)[1] - win.sum(0)[1]) > 1e-3  # one step from the start is not the fixed point


def test_contrastive_pairs_take_a_solved_and_a_failed_task_of_the_same_model():
    """m1 solved t0 and failed t1 (0.5 is a failure); m2 the reverse; m3 solved both: no pair. Per model
    max(1, n_pairs // 3) pairs, cut to n_pairs."""
    A = _arrays([[1.0, 0.0, 1.0], [0.5, 0.7, 1.0]])
    assert contrastive_pairs(A, 6) == [("m1", "q0", "q1")] * 2 + [("m2", "q1", "q0")] * 2
    assert contrastive_pairs(A, 3) == [("m1", "q0", "q1"), ("m2", "q1", "q0")]
    assert contrastive_pairs(A, 1) == [("m1", "q0", "q1")]
    assert contrastive_pairs(A) == [("m1", "q0", "q1")] * 2 + [("m2", "q1", "q0")] * 2  # default 8: 2 each


def test_an_llm_taxonomy_reply_keeps_only_valid_entries():
    # invalid entries (a bad id, a string, a parent that is no string, no id) are skipped, not the end
    text = ('Here: {"skills": [{"id": " Arith.Add ", "description": "adding", "indicators": ["plus", " ", 3], '
            '"parent": "arith"}, {"id": "bad id!"}, "str", {"id": "arith"}, {"id": "odd", "parent": 5}, '
            '{"description": "no id"},\n {"id": "geo.area", "parent": "geo"}]}\ndone')  # an object over two lines
    tax = parse_taxonomy_reply(text)
    assert {k: (v.description, v.indicators, v.parent) for k, v in tax.items()} == {
        "arith.add": ("adding", ["plus", "3"], "arith"), "arith": ("", [], None), "geo.area": ("", [], None)}
    assert parse_taxonomy_reply("no json here") == {} and parse_taxonomy_reply("{not: json}") == {}
    assert parse_taxonomy_reply('[{"id": "x"}]') == {}  # an object without "skills"


class _Gateway:
    def __init__(self, ok: bool, text: str):
        self.ok, self.text, self.calls = ok, text, []

    async def complete(self, model, messages, **kw):
        self.calls.append((model, messages, kw))
        return SimpleNamespace(ok=self.ok, text=self.text, cost_usd=0.25, total_tokens=40)


async def test_the_taxonomy_prompt_shows_each_pair_cut_to_400_characters():
    A = _arrays([[1.0, 1.0], [0.0, 1.0]], questions=["S" * 450, "F" * 450])
    gw = _Gateway(True, '{"skills": [{"id": "s.a", "description": "d"}]}')
    tax, cost, tokens = await propose_taxonomy(cast(Any, gw), "llm", A, n_pairs=4, max_skills=5, max_tokens=99)
    pair = "SOLVED: " + "S" * 400 + "\n  FAILED: " + "F" * 400
    prompt = PROPOSE_PROMPT.format(pairs=f"Pair 1 (model m1):\n  {pair}\n\nPair 2 (model m1):\n  {pair}", max_skills=5)
    assert gw.calls == [("llm", [{"role": "user", "content": prompt}],
                         {"temperature": 0.0, "max_tokens": 99, "tags": {"purpose": "routing"}})]
    assert "at most 5 skills" in prompt
    assert (list(tax), tax["s.a"].description, cost, tokens) == (["s.a"], "d", 0.25, 40)
    failed = _Gateway(False, '{"skills": [{"id": "s.a"}]}')
    assert await propose_taxonomy(cast(Any, failed), "llm", A) == ({}, 0.25, 40)  # a failed call: no skills, still paid
    assert failed.calls[0][2]["max_tokens"] == 800 and "at most 12 skills" in failed.calls[0][1][0]["content"]


def test_tags_from_a_taxonomy_by_its_indicators():
    tax = {"a": SkillSpec(indicators=["alpha"]), "b": SkillSpec(indicators=["beta"])}
    assert tags_from_taxonomy(tax, ["alpha beta beta", "nothing", "alpha"]) == [["b", "a"], [], ["a"]]


def test_strengths_and_weaknesses_on_active_skills_every_model_has_seen():
    """κ = 0. On a: m 9/1 (0.9), n 8.6/1.4 (0.86), o 5/5 (0.5); strong within 0.05 of the best (≥ 0.85): m, n;
    weak 0.2 below the median 0.86 (≤ 0.66): o. b was seen by m only, c is merged (inactive): neither counts.
    On the edges, one observation each is enough: d: m 1/0, n 19/1 (exactly 1 − 0.05), o 1/0: all strong;
    e: m 1/0, n 1/0, o 4/1 (exactly the median 1 − 0.2): o weak. Among m and n alone, a's median is 0.88:
    nobody is weak, and o's profile is left as it was."""
    hb = HandbookSpec(name="s", shrinkage=0.0,
                      taxonomy={k: SkillSpec(active=k != "c") for k in "abcde"},
                      profiles={"m": ModelProfile(skills={"a": SkillStats(wins=9, losses=1), "b": SkillStats(wins=3),
                                                          "c": SkillStats(losses=5), "d": SkillStats(wins=1),
                                                          "e": SkillStats(wins=1)}),
                                "n": ModelProfile(skills={"a": SkillStats(wins=8.6, losses=1.4), "c": SkillStats(wins=5),
                                                          "d": SkillStats(wins=19, losses=1), "e": SkillStats(wins=1)}),
                                "o": ModelProfile(skills={"a": SkillStats(wins=5, losses=5), "c": SkillStats(wins=5),
                                                          "d": SkillStats(wins=1), "e": SkillStats(wins=4, losses=1)})})
    out = annotate(hb, ["m", "n", "o"])
    assert {k: (p.strengths, p.weaknesses) for k, p in out.profiles.items()} == {
        "m": (["a", "d", "e"], []), "n": (["a", "d", "e"], []), "o": (["d"], ["a", "e"])}
    two = annotate(hb, ["m", "n"])
    assert {k: (p.strengths, p.weaknesses) for k, p in two.profiles.items()} == {
        "m": (["a", "d", "e"], []), "n": (["a", "d", "e"], []), "o": ([], [])}


def _families(active: dict[str, bool]) -> HandbookSpec:
    """κ = 0, two families, every child seen 3 times by each model. m: a.x 2/1 (2/3), a.y 0/3 (0): spread
    std(2/3, 0) = 1/3; everything else 3/0: spread 0. So a diverges by 1/3 (0.3333 to 4 places), b by 0."""
    three = SkillStats(wins=3)
    return HandbookSpec(
        name="fam", shrinkage=0.0,
        taxonomy={k: SkillSpec(active=active.get(k, True)) for k in ("a", "a.x", "a.y", "b", "b.x", "b.y")},
        profiles={"m": ModelProfile(skills={"a.x": SkillStats(wins=2, losses=1), "a.y": SkillStats(losses=3),
                                            "b.x": three, "b.y": three}),
                  "n": ModelProfile(skills={k: three for k in ("a.x", "a.y", "b.x", "b.y")})})


def test_refine_splits_the_diverging_family_and_merges_the_other():
    hb = _families({"a.x": False, "a.y": False, "b.y": False})
    new, events = refine(hb, compile_handbook(hb))  # the handbook's threshold, 0.15; min_obs 3
    assert [(e.action, e.skill, e.children, e.divergence, isinstance(e.at, str)) for e in events] == [
        ("split", "a", ["a.x", "a.y"], 0.3333, True), ("merge", "b", ["b.x", "b.y"], 0.0, True)]
    assert {k: v.active for k, v in new.taxonomy.items()} == {
        "a": True, "a.x": True, "a.y": True, "b": True, "b.x": False, "b.y": False}
    assert refine(new, compile_handbook(new), threshold=0.2) == (new, [])  # nothing left to change
    merged = refine(new, compile_handbook(new), threshold=0.5)[1]  # above a's 1/3: merged back
    assert [(e.action, e.skill, e.divergence) for e in merged] == [("merge", "a", 0.3333)]
    ch = compile_handbook(hb)
    at_the_threshold = divergence(ch, ch.index["a"])[0]
    assert [e.action for e in refine(hb, ch, threshold=at_the_threshold)[1]] == ["split", "merge"]
    assert refine(hb, ch, min_obs=4.0) == (hb, [])  # 3 observations are too few at 4


def test_a_learned_handbook_records_its_learning():
    """Two tasks (s.a, s.b), two models: 4 observations, $0.01 + 0.02 + 0.03 + 0.04 = $0.10 and 100 tokens
    spent, plus $0.50 of extra cost; learning again on top adds the same again and keeps the creation time."""
    A = _arrays([[1, 0], [0, 1]], tags=[["s.a"], ["s.b"]], C=[[0.01, 0.02], [0.03, 0.04]], T=[[10, 20], [30, 40]])
    hb = learn_handbook(A, name="L", provenance={"source": "matrix", "extra_cost_usd": 0.5, "runs": ["r1"]},
                        models={"m1": ModelSpec(id="sim/m1")}, do_refine=False)
    p = hb.provenance
    assert (p.source, p.runs, p.tasks, p.observations, p.credit, p.learning_tokens, p.learning_calls, p.history,
            p.taxonomy_source) == ("matrix", ["r1"], 2, 4, "responsibility", 100, 4, [], "metadata")
    assert p.learning_cost_usd == pytest.approx(0.6) and p.created is not None and p.updated is not None
    assert "extra_cost_usd" not in p.model_dump()
    assert (hb.cost_unit, hb.shrinkage, hb.split_threshold, hb.description) == ("usd_per_1k_calls", 4.0, 0.15, None)
    assert list(hb.taxonomy) == ["s", "s.a", "s.b"]
    assert hb.profiles["m1"].model == ModelSpec(id="sim/m1") and hb.profiles["m2"].model is None
    assert {k: v.target for k, v in hb.profiles.items()} == {"m1": "model", "m2": "model"}

    base = hb.model_copy(update={
        "cost_unit": "relative", "shrinkage": 2.0, "split_threshold": 0.3, "description": "old",
        "provenance": p.model_copy(update={"created": "then", "taxonomy_source": "manual"}),
        "profiles": {"m0": ModelProfile(), **hb.profiles, "m9": ModelProfile()}})  # m0, m9: not in the matrix
    again = learn_handbook(A, name="L2", base=base, models={"m1": ModelSpec(id="sim/other"), "m2": ModelSpec(id="sim/m2")},
                           credit_mode="demand",
                           taxonomy={"s.a": SkillSpec(description="mine")}, do_refine=False)
    q = again.provenance
    assert (q.tasks, q.observations, q.learning_tokens, q.learning_calls, q.credit, q.created, q.taxonomy_source) == (
        4, 8, 200, 8, "demand", "then", "manual")
    assert q.learning_cost_usd == pytest.approx(0.7)
    assert (again.cost_unit, again.shrinkage, again.split_threshold, again.description) == ("relative", 2.0, 0.3, "old")
    assert again.taxonomy["s.a"].description == "mine" and "m9" in again.profiles
    assert again.profiles["m0"].skills == {} and again.profiles["m9"].skills == {}  # nobody else's outcomes
    a1 = hb.profiles["m1"].skills["s.a"]
    assert (a1.cost_usd, a1.tokens, a1.calls) == (pytest.approx(0.01), pytest.approx(10), 1)  # t0: $0.01, 10 tokens
    # a model block fills a profile without one, never replaces one
    assert again.profiles["m2"].model == ModelSpec(id="sim/m2") and again.profiles["m1"].model == ModelSpec(id="sim/m1")
    # demand credit on top of the first fit: m1 won s.a once more (1 + 1), m2 won s.b once more
    assert again.profiles["m1"].skills["s.a"].wins == pytest.approx(hb.profiles["m1"].skills["s.a"].wins + 1)
    d = learn_handbook(A, name="d", description="new", cost_unit="ktokens", shrinkage=1.0, split_threshold=0.2,
                       target="design", do_refine=False)
    assert (d.description, d.cost_unit, d.shrinkage, d.split_threshold) == ("new", "ktokens", 1.0, 0.2)
    assert {k: v.target for k, v in d.profiles.items()} == {"m1": "design", "m2": "design"}
    llm = learn_handbook(A, name="l", provenance={"taxonomy_source": "llm"}, do_refine=False).provenance
    assert llm.taxonomy_source == "llm"  # only the default "manual" becomes "metadata"


def test_the_credit_mode_reaches_the_fit():
    """m1 right on t0 (s.a), wrong on t1 (s.a and s.b). Demand credit: t1's loss is halved, 0.5 to each skill.
    Responsibility: s.a's rate is higher after t0, so it takes less of the blame than s.b."""
    A = _arrays([[1.0], [0.0]], tags=[["s.a"], ["s.a", "s.b"]])
    by_demand = learn_handbook(A, name="c", credit_mode="demand", do_refine=False).profiles["m1"].skills
    assert (by_demand["s.a"].losses, by_demand["s.b"].losses) == (0.5, 0.5)
    by_resp = learn_handbook(A, name="c", do_refine=False).profiles["m1"].skills
    assert by_resp["s.a"].losses < 0.5 < by_resp["s.b"].losses
    assert by_resp["s.a"].losses + by_resp["s.b"].losses == pytest.approx(1)


def test_learned_indicators_fill_a_base_skill_without_any():
    qs = ["add these plus", "plus more here", "times that", "times again"]
    tags = [["s.add"], ["s.add"], ["s.mul"], ["s.mul"]]
    A = _arrays([[1], [1], [0], [0]], questions=qs, tags=tags)
    base = HandbookSpec(name="b", taxonomy={"s": SkillSpec(), "s.add": SkillSpec(description="kept"),
                                            "s.mul": SkillSpec(indicators=["mine"])}, profiles={"m1": ModelProfile()})
    hb = learn_handbook(A, name="b", base=base, do_refine=False)
    assert hb.taxonomy["s.add"].indicators == learn_indicators(qs, tags)["s.add"]
    assert hb.taxonomy["s.add"].description == "kept"
    assert [i if isinstance(i, str) else i.pattern for i in hb.taxonomy["s.mul"].indicators] == ["mine"]
    assert learn_handbook(A, name="b", indicators=False, do_refine=False).taxonomy["s.add"].indicators == []


def test_learning_merges_a_family_whose_children_agree_once_each_is_seen_min_obs_times():
    """a.x and a.y, three tasks each, every model right on all: the children's rates agree (spread 0 < 0.15),
    so the family is merged, with min_obs 3 (each child seen 3 times by each model); at min_obs 4 it is not
    looked at."""
    A = _arrays([[1, 1]] * 6, tags=[["a.x"]] * 3 + [["a.y"]] * 3)
    hb = learn_handbook(A, name="r")
    assert [(e.action, e.skill, e.children) for e in hb.provenance.history] == [("merge", "a", ["a.x", "a.y"])]
    assert (hb.taxonomy["a.x"].active, hb.taxonomy["a.y"].active) == (False, False)
    assert learn_handbook(A, name="r", min_obs=4.0).provenance.history == []
    # a model of the base that is not in the matrix is neither refined nor annotated over (it has no evidence)
    other = learn_handbook(A, name="r", base=HandbookSpec(name="r", profiles={"m9": ModelProfile()}))
    assert [e.action for e in other.provenance.history] == ["merge"]
    assert (other.profiles["m1"].strengths, other.profiles["m9"].strengths) == (["a"], [])


async def test_pairs_are_drawn_with_seed_0_and_the_prompt_asks_for_8_of_them():
    """One model, three solved and three failed tasks: 8 pairs (8 // 1), drawn with the default seed 0 — the
    same pairs every time, not those of seed 1; propose_taxonomy shows exactly those."""
    A = _arrays([[1.0], [1.0], [1.0], [0.0], [0.0], [0.0]])
    pairs = contrastive_pairs(A)
    assert len(pairs) == 8 and pairs == contrastive_pairs(A, 8, 0) == contrastive_pairs(A)
    assert pairs != contrastive_pairs(A, 8, 1)
    gw = _Gateway(True, "{}")
    await propose_taxonomy(cast(Any, gw), "llm", A)
    text = "\n\n".join(f"Pair {i + 1} (model {m}):\n  SOLVED: {ok}\n  FAILED: {bad}" for i, (m, ok, bad) in enumerate(pairs))
    assert gw.calls[0][1][0]["content"] == PROPOSE_PROMPT.format(pairs=text, max_skills=12)
    seeded = _Gateway(True, "{}")
    await propose_taxonomy(cast(Any, seeded), "llm", A, seed=1)
    text1 = "\n\n".join(f"Pair {i + 1} (model {m}):\n  SOLVED: {ok}\n  FAILED: {bad}"
                        for i, (m, ok, bad) in enumerate(contrastive_pairs(A, 8, 1)))
    assert seeded.calls[0][1][0]["content"] == PROPOSE_PROMPT.format(pairs=text1, max_skills=12)  # the seed given


def _counting_refreshes(ch: CompiledHandbook) -> list[int]:
    """Count ch.refresh() calls: fit_evidence refreshes once per EM pass (add) and once more for the costs."""
    calls = [0]
    inner = ch.refresh

    def counted() -> None:
        calls[0] += 1
        inner()

    ch.refresh = counted  # type: ignore[method-assign]
    return calls


def _two_skills() -> CompiledHandbook:
    return compile_handbook(HandbookSpec(name="em", taxonomy={"a": SkillSpec(), "b": SkillSpec()},
                                         profiles={"m1": ModelProfile()}))


def test_the_em_loop_stops_at_the_first_pass_that_changes_nothing():
    """Tasks on one skill each (one-hot rows): the responsibility of a skill is w·p / Σ w·p = p / p = 1 whatever
    the rates, so the first loop pass adds exactly the evidence of the starting pass and the rates move by 0 < 10⁻⁶:
    it stops. Refreshes: the starting pass, one loop pass, the costs = 3."""
    ch = _two_skills()
    calls = _counting_refreshes(ch)
    fit_evidence(ch, np.array([[0, 1.0, 0], [0, 0, 1.0]]), np.array([[1.0], [0.0]]), np.zeros((2, 1)))
    assert calls[0] == 3
    np.testing.assert_allclose([ch.wins[0], ch.losses[0]], [[0, 1, 0], [0, 0, 1]])


def test_with_no_tolerance_the_em_loop_runs_its_30_passes():
    """The same tasks with tol = 0: a change of exactly 0 is not below 0, so the loop runs all of its default 30
    passes: 1 + 30 + 1 = 32 refreshes."""
    ch = _two_skills()
    calls = _counting_refreshes(ch)
    fit_evidence(ch, np.array([[0, 1.0, 0], [0, 0, 1.0]]), np.array([[1.0], [0.0]]), np.zeros((2, 1)), tol=0.0)
    assert calls[0] == 32


def test_the_first_em_pass_credits_by_the_starting_rates():
    """No loop (iters = 0): one solved task on (¾, ¼) with both rates at the prior's 0.5 credits w·p / Σ w·p =
    (0.375, 0.125) / 0.5 = (¾, ¼) wins (crediting by w·w instead would give (0.9, 0.1))."""
    ch = _two_skills()
    fit_evidence(ch, np.array([[0, 0.75, 0.25]]), np.array([[1.0]]), np.zeros((1, 1)), iters=0)
    np.testing.assert_allclose(ch.wins[0], [0, 0.75, 0.25])
