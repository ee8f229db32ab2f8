"""A compiled handbook's costs, tokens, latencies, demand vectors and written-back evidence, worked by hand
(masbench.routing.handbook).

The handbook: κ = 2, prior Beta(1, 1); skills ``x``, its child ``x.y`` (by the dotted name) and ``z``. Models:

* ``p``: prices $1 / $3 per Mtok, no cost evidence, x.y: 2 wins 1 loss. Its cost falls back to the price
  of 200 + 200 tokens: (1·200 + 3·200) / 10⁶ = $0.0008 on every skill; tokens and latency 0.
* ``q``: x.y: 1 win, 4 calls at $0.002, 300 tokens, 2 s; z: 1 loss, 1 call at $0.004, 100 tokens, 1 s.
  Pooled: x = x.y; the root 5 calls: $0.012 / 5 = $0.0024, 1300 / 5 = 260 tokens, 9 s / 5 = 1.8 s.
* ``r``: only a model-wide mean: $0.001, 50 tokens, 0.5 s over 2 calls; every skill falls back to it.

Posteriors of p: root Beta(1 + 2, 1 + 1) = Beta(3, 2), mean 0.6; x Beta(2·0.6 + 2, 2·0.4 + 1) = Beta(3.2, 1.8),
mean 0.64; x.y Beta(2·0.64 + 2, 2·0.36 + 1) = Beta(3.28, 1.72); z (no evidence) Beta(1.2, 0.8)."""

from __future__ import annotations

import numpy as np
import pytest

from masbench.routing import HandbookSpec, compile_handbook
from masbench.routing.handbook import handbook_yaml, load_handbook, save_handbook
from masbench.spec import ModelSpec
from masbench.spec.handbook import BetaPrior, ModelProfile, SkillSpec, SkillStats


def _hb(**kw) -> HandbookSpec:
    return HandbookSpec(
        name="costs", shrinkage=2.0,
        taxonomy={"x": SkillSpec(description="x"), "x.y": SkillSpec(description="y"), "z": SkillSpec(description="z")},
        profiles={
            "p": ModelProfile(model=ModelSpec(id="sim/p", input_usd_per_mtok=1.0, output_usd_per_mtok=3.0),
                              skills={"x.y": SkillStats(wins=2, losses=1)}),
            "q": ModelProfile(skills={"x.y": SkillStats(wins=1, cost_usd=0.002, tokens=300, latency_s=2.0, calls=4),
                                      "z": SkillStats(losses=1, cost_usd=0.004, tokens=100, latency_s=1.0, calls=1)}),
            "r": ModelProfile(cost_usd=0.001, tokens=50, latency_s=0.5, calls=2)},
        **kw)


def _at(ch, arr, model: str) -> list[float]:
    return [float(arr[ch.models.index(model), i]) for i in (0, ch.index["x"], ch.index["x.y"], ch.index["z"])]


def test_skills_are_ordered_parents_first_and_posteriors_shrink_by_hand():
    ch = compile_handbook(_hb())
    assert ch.skills == ["*", "x", "x.y", "z"]  # index 0: the root (model-wide)
    assert list(ch.parent) == [-1, 0, 1, 0] and list(ch.depth) == [0, 1, 2, 1]
    np.testing.assert_allclose(_at(ch, ch.alpha, "p"), [3, 3.2, 3.28, 1.2])
    np.testing.assert_allclose(_at(ch, ch.beta, "p"), [2, 1.8, 1.72, 0.8])
    assert ch.ancestors(ch.index["x.y"]) == [2, 1, 0]


def test_costs_tokens_and_latency_fall_back_up_the_tree_then_to_prices():
    ch = compile_handbook(_hb())
    np.testing.assert_allclose(_at(ch, ch.cost, "p"), [8e-4] * 4)
    np.testing.assert_allclose(_at(ch, ch.tokens, "p") + _at(ch, ch.latency, "p"), [0] * 8)
    np.testing.assert_allclose(_at(ch, ch.cost, "q"), [0.0024, 0.002, 0.002, 0.004])
    np.testing.assert_allclose(_at(ch, ch.tokens, "q"), [260, 300, 300, 100])
    np.testing.assert_allclose(_at(ch, ch.latency, "q"), [1.8, 2, 2, 1])
    np.testing.assert_allclose(_at(ch, ch.cost, "r"), [0.001] * 4)
    np.testing.assert_allclose(_at(ch, ch.tokens, "r"), [50] * 4)
    np.testing.assert_allclose(_at(ch, ch.latency, "r"), [0.5] * 4)


def test_the_cost_units():
    """usd_per_1k_calls: USD × 1000; relative: ÷ the priciest model-wide cost (q's $0.0024); ktokens:
    tokens ÷ 1000; relative with every cost 0: USD ÷ 1."""
    usd = compile_handbook(_hb())
    assert usd.cost_scale() == 1e-3
    np.testing.assert_allclose(_at(usd, usd.unit_cost(), "q"), [2.4, 2, 2, 4])
    rel = compile_handbook(_hb(cost_unit="relative"))
    assert rel.cost_scale() == pytest.approx(0.0024)
    np.testing.assert_allclose(_at(rel, rel.unit_cost(), "r"), [0.001 / 0.0024] * 4)
    kt = compile_handbook(_hb(cost_unit="ktokens"))
    np.testing.assert_allclose(_at(kt, kt.unit_cost(), "q"), [0.26, 0.3, 0.3, 0.1])
    free = compile_handbook(HandbookSpec(name="free", cost_unit="relative", taxonomy={"x": SkillSpec()},
                                         profiles={"a": ModelProfile(), "b": ModelProfile()}))
    assert free.cost_scale() == 1.0


def test_demand_vectors_fall_back_to_dotted_prefixes_and_active_ancestors():
    ch = compile_handbook(_hb())
    np.testing.assert_allclose(ch.demand_vector({"x.y": 1.0, "z": 3.0}), [0, 0, 0.25, 0.75])
    np.testing.assert_allclose(ch.demand_vector({"x.y.deep": 2.0, "nope": 2.0, "z": 0.0}), [0.5, 0, 0.5, 0])
    np.testing.assert_allclose(ch.demand_vector({"z": -1.0}), [1, 0, 0, 0])
    np.testing.assert_allclose(ch.demand_vector({}), [1, 0, 0, 0])
    hb = _hb()
    hb.taxonomy["x.y"] = hb.taxonomy["x.y"].model_copy(update={"active": False})  # merged into x
    merged = compile_handbook(hb)
    assert list(merged.effective) == [0, 1, 1, 3]
    np.testing.assert_allclose(merged.demand_vector({"x.y": 1.0}), [0, 1, 0, 0])


def test_priors_prices_and_candidates():
    hb = _hb()
    hb.profiles["r"] = hb.profiles["r"].model_copy(update={"prior": BetaPrior(alpha=2, beta=6)})
    ch = compile_handbook(hb, ["r", "p"])
    assert ch.models == ["p", "r"]  # the handbook's order, not the candidates'
    np.testing.assert_allclose([ch.alpha[1, 0], ch.beta[1, 0], ch.mean[1, 0]], [2, 6, 0.25])
    np.testing.assert_allclose(ch.price_cost, [8e-4, 0.001])
    with pytest.raises(KeyError, match=r"no profile for \['s'\]"):
        compile_handbook(hb, ["p", "s"])
    with pytest.raises(ValueError, match="no candidate models"):
        compile_handbook(hb, [])


def test_to_spec_writes_back_only_evidence_and_keeps_what_it_has_no_data_for():
    """After compiling: p keeps no cost (none seen) and its model-wide fields stay unset; q's skills
    keep their means; r (no skill evidence) keeps its model-wide mean, tokens, latency and calls."""
    hb = _hb()
    back = compile_handbook(hb).to_spec()
    p, q, r = (back.profiles[k] for k in "pqr")
    assert p.skills == {"x.y": SkillStats(wins=2, losses=1, calls=0.0)}
    assert (p.cost_usd, p.tokens, p.latency_s, p.calls) == (pytest.approx(8e-4), None, None, 0.0)
    assert q.skills["x.y"].model_dump() == {"wins": 1, "losses": 0, "cost_usd": pytest.approx(0.002),
                                            "tokens": pytest.approx(300), "latency_s": pytest.approx(2.0), "calls": 4}
    assert (q.cost_usd, q.tokens, q.latency_s, q.calls) == (pytest.approx(0.0024), pytest.approx(260),
                                                            pytest.approx(1.8), 5)
    assert r.skills == {} and (r.cost_usd, r.tokens, r.latency_s, r.calls) == (
        pytest.approx(0.001), pytest.approx(50), pytest.approx(0.5), 2)
    assert p.model == hb.profiles["p"].model and back.taxonomy == hb.taxonomy


def test_yaml_text_rounds_floats_and_puts_the_name_first(tmp_path):
    hb = HandbookSpec(name="round", description="d", taxonomy={"x": SkillSpec(description="x")},
                      profiles={"m": ModelProfile(cost_usd=0.000123456789,
                                                  skills={"x": SkillStats(wins=1 / 3, losses=2.0)})})
    text = handbook_yaml(hb, "# learned by hand\n")
    assert text.startswith("# learned by hand\nname: round\n")
    assert "cost_usd: 0.00012346" in text and "wins: 0.33333" in text and "losses: 2.0" in text
    assert "shrinkage" not in text  # defaults are left out
    p = save_handbook(hb, tmp_path / "deep" / "skills" / "round.yaml", "# h")
    assert p.read_text(encoding="utf-8") == handbook_yaml(hb, "# h")
    assert save_handbook(hb, p).read_text(encoding="utf-8") == handbook_yaml(hb)  # again, into the folder now there
    back = load_handbook(p)
    assert back.profiles["m"].skills["x"].wins == 0.33333 and back.description == "d"


def test_a_skill_with_one_win_or_half_a_calls_cost_is_written_back():
    """Evidence below one observation still counts: x with 1 win (no cost), z with $0.002 and 30 tokens over
    half a call (no outcome); a skill with neither is left out."""
    hb = HandbookSpec(name="w", taxonomy={"x": SkillSpec(), "y": SkillSpec(), "z": SkillSpec()},
                      profiles={"m": ModelProfile(skills={"x": SkillStats(wins=1),
                                                          "z": SkillStats(cost_usd=0.002, tokens=30, calls=0.5)})})
    skills = compile_handbook(hb).to_spec().profiles["m"].skills
    assert {k: v.model_dump() for k, v in skills.items()} == {
        "x": {"wins": 1, "losses": 0, "cost_usd": None, "tokens": None, "latency_s": None, "calls": 0},
        "z": {"wins": 0, "losses": 0, "cost_usd": pytest.approx(0.002), "tokens": pytest.approx(30), "latency_s": None,
              "calls": 0.5}}
