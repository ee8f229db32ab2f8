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


# ----- the whole YAML text, the loader's branches, compile_handbook's checks -------------------------------------
def test_the_whole_yaml_text_of_a_small_handbook():
    """Written by hand: the name first; the description folds where PyYAML's column passes width 110 (after the
    33rd "aa" the column is 13 + 33·3 − 1 = 111 > 110, so the 34th goes on the next line; at 111, or at the
    default 80, it would not fold there); "ä" stays a letter (allow_unicode); defaults (cost_unit, prior, ...)
    are left out; leaf mappings are inline, the others block style; wins 1 is the float 1.0."""
    hb = HandbookSpec(name="tiny", description=" ".join(["aa"] * 34), shrinkage=2.0,
                      taxonomy={"x": SkillSpec(description="Schätzung")},
                      profiles={"m": ModelProfile(cost_usd=0.001, skills={"x": SkillStats(wins=1, losses=2)})})
    assert handbook_yaml(hb) == (
        "name: tiny\n"
        "description: " + " ".join(["aa"] * 33) + "\n"
        "  aa\n"
        "shrinkage: 2.0\n"
        "taxonomy:\n"
        "  x: {description: Schätzung}\n"
        "profiles:\n"
        "  m:\n"
        "    cost_usd: 0.001\n"
        "    skills:\n"
        "      x: {wins: 1.0, losses: 2.0}\n")


def _small() -> HandbookSpec:
    return HandbookSpec(name="small", description="v1", taxonomy={"x": SkillSpec()}, profiles={"m": ModelProfile()})


def test_a_yaml_path_is_read_afresh_by_its_own_library_and_needs_no_skills_folder(tmp_path):
    """A .yaml/.yml path goes to a fresh library (no cwd root) with the kind given: it loads even from an agents/
    folder (where the kind guessed from the folder would be an agent), and a second load after the file changed
    sees the change (the process-wide library would have cached the first)."""
    for name in ("hb.yaml", "hb.yml", "agents/hb.yaml"):
        p = save_handbook(_small(), tmp_path / name)
        assert load_handbook(p).description == "v1"
        save_handbook(_small().model_copy(update={"description": "v2"}), p)
        assert load_handbook(p).description == "v2"


def test_a_path_without_a_yaml_suffix_is_a_name_and_a_name_comes_from_the_default_library(tmp_path):
    """A file ``hb.txt`` holding a handbook is no path to load_handbook: it is looked up as a name, and no
    handbook has that name. A plain name comes from the default library (cwd + bundled): the bundled
    ``arith-pool``."""
    from masbench.library import SpecError

    p = tmp_path / "hb.txt"
    p.write_text(handbook_yaml(_small()), encoding="utf-8")
    with pytest.raises(SpecError, match="no handbook named"):
        load_handbook(p)
    assert load_handbook("arith-pool").name == "arith-pool"


def test_an_invalid_handbook_is_refused_with_every_problem_joined():
    """Two problems, in handbook_problems' order (taxonomy first, then profiles), joined by "; "."""
    bad = HandbookSpec(name="bad", taxonomy={"x": SkillSpec(parent="nope")},
                       profiles={"m": ModelProfile(skills={"q": SkillStats(wins=1)})})
    with pytest.raises(ValueError) as e:
        compile_handbook(bad)
    assert str(e.value) == ("handbook 'bad' is invalid: taxonomy.x.parent: unknown parent skill 'nope'; "
                            "profiles.m.skills.q: skill 'q' is not in the taxonomy")


def test_an_explicit_parent_sorting_after_its_child_is_placed_first():
    """``a`` names ``b`` as its parent, though "a" < "b": the order is parents first, so [*, b, a], depths
    [0, 1, 2] (integers: they index levels)."""
    hb = HandbookSpec(name="o", taxonomy={"a": SkillSpec(parent="b"), "b": SkillSpec()},
                      profiles={"m": ModelProfile()})
    ch = compile_handbook(hb)
    assert ch.skills == ["*", "b", "a"] and list(ch.parent) == [-1, 0, 1]
    assert ch.depth.tolist() == [0, 1, 2] and all(type(d) is int for d in ch.depth.tolist())


def test_inactive_top_level_skills_route_to_the_root():
    """x (index 1) and its child x.y both merged: both route to the root; z stays itself."""
    hb = _hb()
    for s in ("x", "x.y"):
        hb.taxonomy[s] = hb.taxonomy[s].model_copy(update={"active": False})
    assert list(compile_handbook(hb).effective) == [0, 0, 0, 3]


# ----- compile_handbook's evidence and fallbacks --------------------------------------------------------------
def test_skill_evidence_beats_a_stale_model_wide_mean_and_missing_tokens_count_zero():
    """m: z 1 call at $0.004 with no tokens or latency; x.y 3 calls, no cost (its calls are not cost
    evidence); a stale model-wide $0.1 over 5 calls. The skill evidence (1 call) wins: root cost $0.004,
    tokens 0, latency 0. The root's wins/losses pool only z's 1 loss: Beta(1 + 0, 1 + 1)."""
    hb = HandbookSpec(name="s", taxonomy={"x": SkillSpec(), "x.y": SkillSpec(), "z": SkillSpec()},
                      profiles={"m": ModelProfile(cost_usd=0.1, calls=5, tokens=999, latency_s=9.0,
                                                  skills={"x.y": SkillStats(calls=3),
                                                          "z": SkillStats(losses=1, cost_usd=0.004, calls=1)})})
    ch = compile_handbook(hb)
    assert (ch.alpha[0, 0], ch.beta[0, 0]) == (1, 2)
    np.testing.assert_allclose([ch.cost[0, 0], ch.tokens[0, 0], ch.latency[0, 0]], [0.004, 0, 0])
    np.testing.assert_allclose(ch.cost_n[0], [0, 0, 0, 1])


def test_a_model_wide_mean_over_one_call_or_less_is_evidence():
    """One call: $0.001, 50 tokens, 0.5 s are the root's means (not the price fallback, which has no tokens).
    Half a call: the sums are halved and divided by the half call again: the same means.
    A model-wide cost with no tokens or latency: 0 tokens, 0 s."""
    for calls in (1.0, 0.5):
        hb = HandbookSpec(name="w", taxonomy={"x": SkillSpec()},
                          profiles={"m": ModelProfile(cost_usd=0.001, tokens=50, latency_s=0.5, calls=calls),
                                    "n": ModelProfile(cost_usd=0.002, calls=2)})
        ch = compile_handbook(hb)
        np.testing.assert_allclose(ch.cost[:, 0], [0.001, 0.002])
        np.testing.assert_allclose(ch.tokens, [[50, 50], [0, 0]])
        np.testing.assert_allclose(ch.latency, [[0.5, 0.5], [0, 0]])


def test_the_model_wide_sums_sit_on_the_root_so_later_skill_evidence_stays_its_own():
    """r's model-wide $0.001, 50 tokens, 0.5 s over 2 calls are root evidence; an online update then gives
    x (index 1) one call at $0.003, 10 tokens, 2 s: x's means are exactly those, the root's (0.002 + 0.003) / 3,
    (100 + 10) / 3, (1 + 2) / 3."""
    ch = compile_handbook(_hb(), ["r"])
    x = ch.index["x"]
    ch.cost_sum[0, x] += 0.003
    ch.tok_sum[0, x] += 10
    ch.lat_sum[0, x] += 2.0
    ch.cost_n[0, x] += 1
    ch.refresh()
    np.testing.assert_allclose([ch.cost[0, x], ch.tokens[0, x], ch.latency[0, x]], [0.003, 10, 2])
    np.testing.assert_allclose([ch.cost[0, 0], ch.tokens[0, 0], ch.latency[0, 0]], [0.005 / 3, 110 / 3, 1.0])


def test_prices_missing_on_one_side_count_zero_and_no_model_costs_nothing():
    """Only an output price $3/Mtok: 3·200 / 10⁶ = $0.0006; only an input price $2/Mtok: $0.0004; no
    model at all: $0."""
    hb = HandbookSpec(name="p", taxonomy={"x": SkillSpec()}, profiles={
        "o": ModelProfile(model=ModelSpec(id="sim/o", output_usd_per_mtok=3.0)),
        "i": ModelProfile(model=ModelSpec(id="sim/i", input_usd_per_mtok=2.0)),
        "none": ModelProfile()})
    np.testing.assert_allclose(compile_handbook(hb).price_cost, [6e-4, 4e-4, 0.0])


# ----- refresh: posteriors with κ = 0, the tiny-weight thresholds ---------------------------------------------
def test_the_root_pools_every_skill_not_only_the_first():
    """q: x.y 1 win, z 1 loss: the root is Beta(1 + 1, 1 + 1) (z's loss counts, though z is not index 1).
    m: x.y 1 win, z 2 wins: the root's alpha is 1 + 3 (x, index 1, pools only the one)."""
    ch = compile_handbook(_hb())
    q = ch.models.index("q")
    assert (ch.alpha[q, 0], ch.beta[q, 0]) == (2, 2)
    hb = HandbookSpec(name="r", taxonomy={"x": SkillSpec(), "x.y": SkillSpec(), "z": SkillSpec()},
                      profiles={"m": ModelProfile(skills={"x.y": SkillStats(wins=1), "z": SkillStats(wins=2)})})
    m = compile_handbook(hb)
    assert (m.alpha[0, 0], m.beta[0, 0]) == (4, 1)


def test_without_shrinkage_an_unseen_skill_takes_its_parents_posterior():
    """κ = 0. m: z 1 loss, x.y a trace of a win (10⁻¹²). Root Beta(1 + 10⁻¹², 2). z: Beta(0, 1) (its own
    evidence, however small against the prior). x and x.y: 10⁻¹² + 0 ≤ 10⁻¹², as good as nothing: the root's."""
    hb = HandbookSpec(name="k", shrinkage=0.0, taxonomy={"x": SkillSpec(), "x.y": SkillSpec(), "z": SkillSpec()},
                      profiles={"m": ModelProfile(skills={"x.y": SkillStats(wins=1e-12), "z": SkillStats(losses=1)})})
    ch = compile_handbook(hb)
    np.testing.assert_allclose(ch.alpha[0], [1 + 1e-12, 1 + 1e-12, 1 + 1e-12, 0], rtol=0, atol=0)
    np.testing.assert_allclose(ch.beta[0], [2, 2, 2, 1], rtol=0, atol=0)


def test_tiny_and_fractional_call_weights():
    """m: x.y 4 calls at $0.002 / 300 tokens / 2 s; z 10⁻⁹ calls at $0.004 / 100 tokens / 1 s: at most 10⁻⁹ is
    no evidence for a skill, so z falls back to the root (pooled: (0.008 + 4·10⁻⁹) / (4 + 10⁻⁹) ≈ $0.002).
    n: z 0.5 calls at $0.004 / 30 tokens / 0.4 s: the means are those (sums halved, divided by 0.5).
    o: only a model-wide mean over 5·10⁻¹⁰ calls (above the root's 10⁻¹², below the skills' 10⁻⁹): the root's
    means are its own, and every skill inherits them. p: model-wide over exactly 10⁻¹² calls: no evidence, so
    the price fallback (its own $0.001) and 0 tokens, 0 s."""
    hb = HandbookSpec(name="t", taxonomy={"x": SkillSpec(), "x.y": SkillSpec(), "z": SkillSpec()}, profiles={
        "m": ModelProfile(skills={"x.y": SkillStats(cost_usd=0.002, tokens=300, latency_s=2.0, calls=4),
                                  "z": SkillStats(cost_usd=0.004, tokens=100, latency_s=1.0, calls=1e-9)}),
        "n": ModelProfile(skills={"z": SkillStats(cost_usd=0.004, tokens=30, latency_s=0.4, calls=0.5)}),
        "o": ModelProfile(cost_usd=0.001, tokens=50, latency_s=0.5, calls=5e-10),
        "p": ModelProfile(cost_usd=0.001, tokens=50, latency_s=0.5, calls=1e-12)})
    ch = compile_handbook(hb)
    z = ch.index["z"]
    np.testing.assert_allclose([ch.cost[0, z], ch.tokens[0, z], ch.latency[0, z]], [0.002, 300, 2], rtol=1e-6)
    np.testing.assert_allclose([ch.cost[1, z], ch.tokens[1, z], ch.latency[1, z]], [0.004, 30, 0.4])
    np.testing.assert_allclose([ch.cost[1, 0], ch.tokens[1, 0], ch.latency[1, 0]], [0.004, 30, 0.4])
    np.testing.assert_allclose([ch.cost[2], ch.tokens[2], ch.latency[2]], [[0.001] * 4, [50] * 4, [0.5] * 4])
    np.testing.assert_allclose([ch.cost[3], ch.tokens[3], ch.latency[3]], [[0.001] * 4, [0] * 4, [0] * 4])


# ----- demand vectors ------------------------------------------------------------------------------------------
def test_demand_weights_add_up_skip_nonpositive_ones_and_fall_back_one_dot_at_a_time():
    """x.y 1 + x.y.deep 1 (→ x.y) + z 2: [0, 0, 0.5, 0.5]. A zero weight first is skipped, not the end:
    {z: 0, x.y: 1} → x.y. ``z.w`` → z (the one-part prefix); ``x.y.a.b`` → x.y (x.y.a first, then x.y)."""
    ch = compile_handbook(_hb())
    np.testing.assert_allclose(ch.demand_vector({"x.y": 1, "x.y.deep": 1, "z": 2}), [0, 0, 0.5, 0.5])
    np.testing.assert_allclose(ch.demand_vector({"z": 0, "x.y": 1}), [0, 0, 1, 0])
    np.testing.assert_allclose(ch.demand_vector({"z.w": 1}), [0, 0, 0, 1])
    np.testing.assert_allclose(ch.demand_vector({"x.y.a.b": 1}), [0, 0, 1, 0])


# ----- to_spec after online updates ----------------------------------------------------------------------------
def test_to_spec_writes_the_updated_means_over_fractional_weights():
    """m: z 0.5 calls at $0.004, 1 s (lat_sum 0.5); stale model-wide $0.1, 999 tokens, 9 s, 7 calls. An update
    adds 0.25 calls at 0.2 s to z: z's latency (0.5 + 0.05) / 0.75; the model-wide fields become the pooled ones
    ($0.004·0.5 / 0.75, 0 tokens, 0.55 / 0.75 s, 0.75 calls), not the stale ones, though under one call."""
    hb = HandbookSpec(name="u", taxonomy={"x": SkillSpec(), "z": SkillSpec()},
                      profiles={"m": ModelProfile(cost_usd=0.1, tokens=999, latency_s=9.0, calls=7,
                                                  skills={"z": SkillStats(cost_usd=0.004, latency_s=1.0, calls=0.5)})})
    ch = compile_handbook(hb)
    z = ch.index["z"]
    ch.cost_n[0, z] += 0.25
    ch.lat_sum[0, z] += 0.25 * 0.2
    ch.refresh()
    m = ch.to_spec().profiles["m"]
    assert m.skills["z"].latency_s == pytest.approx(0.55 / 0.75)
    assert (m.cost_usd, m.tokens, m.latency_s, m.calls) == (
        pytest.approx(0.002 / 0.75), 0.0, pytest.approx(0.55 / 0.75), 0.75)


def test_to_spec_keeps_a_latency_it_has_no_new_data_for_and_writes_a_pooled_one_below_a_second():
    """m: x.y 4 calls at $0.002 without latency, z 1 call at $0.004 and 1 s: the root's latency 1 / 5 = 0.2 s is
    written (though x, index 1, has none). n: z 1 call at $0.004, no latency anywhere: latency_s stays unset.
    o: x.y 1 win with a 2 s latency but no cost (so no calls): the old 2 s is kept; its model-wide calls 3 (no
    cost, so no evidence) are kept too."""
    hb = HandbookSpec(name="l", taxonomy={"x": SkillSpec(), "x.y": SkillSpec(), "z": SkillSpec()}, profiles={
        "m": ModelProfile(skills={"x.y": SkillStats(cost_usd=0.002, calls=4),
                                  "z": SkillStats(cost_usd=0.004, latency_s=1.0, calls=1)}),
        "n": ModelProfile(skills={"z": SkillStats(cost_usd=0.004, calls=1)}),
        "o": ModelProfile(calls=3, skills={"x.y": SkillStats(wins=1, latency_s=2.0)})})
    back = compile_handbook(hb).to_spec().profiles
    assert back["m"].latency_s == pytest.approx(0.2)
    assert back["n"].latency_s is None
    assert back["o"].skills["x.y"].latency_s == 2.0 and back["o"].calls == 3


def test_a_cost_over_no_calls_is_no_evidence_even_when_infinite():
    """x.y 4 calls at $0.002; z an unbounded cost over 0 calls (∞·0 would be nan): z is skipped, so the root
    and z (falling back to it) cost $0.002."""
    hb = HandbookSpec(name="i", taxonomy={"x": SkillSpec(), "x.y": SkillSpec(), "z": SkillSpec()},
                      profiles={"m": ModelProfile(skills={"x.y": SkillStats(cost_usd=0.002, calls=4),
                                                          "z": SkillStats(cost_usd=float("inf"), calls=0)})})
    np.testing.assert_allclose(compile_handbook(hb).cost[0], [0.002] * 4)
