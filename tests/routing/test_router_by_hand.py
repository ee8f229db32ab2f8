"""A router's state after a known sequence of observations, worked by hand (masbench.routing.router and
the compiled handbook of masbench.routing.handbook).

The handbook: κ = 2, prior Beta(1, 1); top-level skills ``a`` and ``b``; model ``m`` with a: 3 wins 1 loss,
b: 0 wins 2 losses; model ``n`` with no evidence. Compiled (hierarchical shrinkage):
  m, root: Beta(1 + 3, 1 + 3) = Beta(4, 4), mean ½
  m, a:    Beta(2·½ + 3, 2·½ + 1) = Beta(4, 2),  mean 2/3
  m, b:    Beta(2·½ + 0, 2·½ + 2) = Beta(1, 3),  mean 1/4
  n, every skill: Beta(1, 1), mean ½."""

from __future__ import annotations

import math

import numpy as np
import pytest

from masbench.routing import HandbookSpec, SkillRouter, compile_handbook, credit
from masbench.spec.handbook import ModelProfile, SkillSpec, SkillStats


def _hb(**kw) -> HandbookSpec:
    return HandbookSpec(name="hand", shrinkage=2.0,
                        taxonomy={"a": SkillSpec(description="a"), "b": SkillSpec(description="b")},
                        profiles={"m": ModelProfile(skills={"a": SkillStats(wins=3, losses=1),
                                                            "b": SkillStats(wins=0, losses=2)}),
                                  "n": ModelProfile()}, **kw)


def _ab(r: SkillRouter, model: str) -> tuple[np.ndarray, np.ndarray]:
    mi = r.models.index(model)
    idx = [0, r.ch.index["a"], r.ch.index["b"]]
    return r.ch.alpha[mi, idx], r.ch.beta[mi, idx]


def test_the_compiled_posteriors():
    ch = compile_handbook(_hb())
    assert ch.skills == ["", "a", "b"] or ch.skills[1:] == ["a", "b"]
    m = ch.models.index("m")
    np.testing.assert_allclose(ch.alpha[m], [4, 4, 1])
    np.testing.assert_allclose(ch.beta[m], [4, 2, 3])
    np.testing.assert_allclose(ch.mean[m], [0.5, 2 / 3, 0.25])
    # Var Beta(4, 2) = 4·2 / (6²·7) = 8/252
    assert ch.var[m, 1] == pytest.approx(8 / 252)
    np.testing.assert_allclose(ch.mean[ch.models.index("n")], [0.5, 0.5, 0.5])


def test_responsibility_credit_over_two_observations():
    """Demand {a: 1, b: 1} → w = (½, ½) on a, b. Observation 1, correct: the win splits ∝ w·p =
    (⅓, ⅛): a gets 8/11, b 3/11, the root (ancestor of both) 1. Then p_a = (4 + 8/11)/(6 + 8/11) = 26/37,
    p_b = (1 + 3/11)/(4 + 3/11) = 14/47. Observation 2, wrong: the loss splits ∝ w·(1 − p) =
    (11/74, 33/94): a gets 1034/3476 = 517/1738, b 1221/1738, the root 1."""
    r = SkillRouter(_hb(), lambda_=0.0)
    d = r.decide({"a": 1.0, "b": 1.0})
    d.model_index = r.models.index("m")
    r.observe(d, 1.0)
    a, b = _ab(r, "m")
    np.testing.assert_allclose(a, [5, 4 + 8 / 11, 1 + 3 / 11])
    np.testing.assert_allclose(b, [4, 2, 3])
    r.observe(d, 0.0)
    a, b = _ab(r, "m")
    np.testing.assert_allclose(a, [5, 4 + 8 / 11, 1 + 3 / 11])
    np.testing.assert_allclose(b, [5, 2 + 517 / 1738, 3 + 1221 / 1738])
    mi, ia, ib = r.models.index("m"), r.ch.index["a"], r.ch.index["b"]
    # the direct evidence: a 3 + 8/11 wins, 1 + 517/1738 losses; b 3/11 and 2 + 1221/1738; n untouched
    np.testing.assert_allclose([r.ch.wins[mi, ia], r.ch.losses[mi, ia], r.ch.wins[mi, ib], r.ch.losses[mi, ib]],
                               [3 + 8 / 11, 1 + 517 / 1738, 3 / 11, 2 + 1221 / 1738])
    assert r.ch.wins[mi, 0] == 0 and r.ch.losses[mi, 0] == 0  # the root holds no direct evidence
    np.testing.assert_allclose(_ab(r, "n")[0], [1, 1, 1])
    saved = r.handbook().profiles["m"].skills
    assert saved["a"].wins == pytest.approx(3 + 8 / 11) and saved["b"].losses == pytest.approx(2 + 1221 / 1738)


def test_greedy_choices_follow_the_learned_rates():
    """λ = 0, demand {a}: m (2/3) over n (½). Three wrong answers of m on a (demand credit: a whole loss
    each): Beta(4, 5), 4/9 < ½: n is chosen. Decisions m, m, n: entropy of (⅔, ⅓) = 0.9183 bits,
    normalised by log2 2 = 1."""
    r = SkillRouter(_hb(), lambda_=0.0, credit_mode="demand")
    first = r.decide({"a": 1.0}, context={"task_id": "t1"})
    assert first.chosen == "m"
    second = r.decide({"a": 1.0}, context={"task_id": "t1"})
    assert r.observe_task("t1", 0.0) == 2 and "t1" not in r.pending  # both decisions of t1 learn it
    r.observe(first, 0.0)
    a, b = _ab(r, "m")
    np.testing.assert_allclose(a, [4, 4, 1])
    np.testing.assert_allclose(b, [7, 5, 3])  # three losses on a and on its ancestor, the root
    assert r.ch.mean[r.models.index("m"), r.ch.index["a"]] == pytest.approx(4 / 9)
    third = r.decide({"a": 1.0})
    assert (second.chosen, third.chosen) == ("m", "n")
    assert r.counts == {"m": 2, "n": 1} and r.decisions == 3
    h = -(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)
    assert r.entropy() == (pytest.approx(h), pytest.approx(h))
    p_lo = {c["model"]: c["p_lo"] for c in third.candidates}
    # p_lo = max(0, mean − z·sd): m on a, Beta(4, 5): sd = √(20 / (81·10)) = 0.15713, 4/9 − 1.645·0.15713
    assert p_lo["m"] == pytest.approx(4 / 9 - 1.645 * math.sqrt(20 / 810), abs=1e-6)


def test_costs_learned_online_are_written_back():
    """Two observations of m on {a: 3, b: 1} (w = ¾, ¼) at $0.004 and 200 tokens, then $0.002 and 100:
    a's cost evidence is ¾·0.004 + ¾·0.002 over ¾ + ¾ calls: $0.003, 150 tokens; b's the same means
    over ½ call."""
    r = SkillRouter(_hb(), lambda_=0.0, credit_mode="demand")
    d = r.decide({"a": 3.0, "b": 1.0})
    d.model_index = r.models.index("m")
    r.observe(d, 1.0, cost_usd=0.004, tokens=200)
    r.observe(d, 1.0, cost_usd=0.002, tokens=100)
    saved = r.handbook().profiles["m"].skills
    assert saved["a"].cost_usd == pytest.approx(0.003) and saved["a"].tokens == pytest.approx(150)
    assert saved["a"].calls == pytest.approx(1.5) and saved["b"].calls == pytest.approx(0.5)
    assert saved["a"].wins == pytest.approx(3 + 1.5) and saved["b"].wins == pytest.approx(0.5)


def test_credit_by_hand():
    """w = (¼, ¾), p = (0.8, 0.2), y = 1: responsibility ∝ (0.2, 0.15) → (4/7, 3/7); y = 0: ∝ (0.05, 0.6) →
    (1/13, 12/13); demand: w·y; whole: every demanded skill the whole outcome."""
    w, p = np.array([[0.25, 0.75]]), np.array([[0.8, 0.2]])
    win, loss = credit(w, p, 1.0)
    np.testing.assert_allclose(win, [[4 / 7, 3 / 7]])
    np.testing.assert_allclose(loss, [[0, 0]])
    win, loss = credit(w, p, 0.0)
    np.testing.assert_allclose(loss, [[1 / 13, 12 / 13]])
    win, loss = credit(w, p, 1.0, "demand")
    np.testing.assert_allclose(win, w)
    win, loss = credit(np.array([[0.0, 1.0]]), p, 0.0, "whole")
    np.testing.assert_allclose(loss, [[0, 1]])
    np.testing.assert_allclose(win, [[0, 0]])  # (two statements: `a and b` of two None-returning checks skips b)


def test_a_decision_without_its_vector_learns_from_its_demand():
    """A decision rebuilt from its logged demand (no vector): {a: 1} → w on a alone; a win with demand
    credit adds 1 to m's a and to the root: Beta(5, 2) and Beta(5, 4)."""
    from masbench.routing.router import Decision

    r = SkillRouter(_hb(), lambda_=0.0, credit_mode="demand")
    r.observe(Decision("d1", "m", {"a": 1.0}, "given", [], model_index=r.models.index("m")), 1.0)
    a, b = _ab(r, "m")
    np.testing.assert_allclose(a, [5, 5, 1])
    np.testing.assert_allclose(b, [4, 2, 3])


def test_credit_at_the_edges():
    """Whole credit of a win gives no loss, of a half-right outcome half each; rates of exactly 0 or 1 are
    clipped to (10⁻⁶, 1 − 10⁻⁶), so a win of a model rated 0 everywhere (or a loss of one rated 1) is still
    split by weight: w = (¼, ¾)."""
    w = np.array([[0.25, 0.75]])
    win, loss = credit(w, np.array([[0.5, 0.5]]), 1.0, "whole")
    np.testing.assert_allclose(win, [[1, 1]])
    np.testing.assert_allclose(loss, [[0, 0]])
    win, loss = credit(w, np.array([[0.5, 0.5]]), 0.5, "whole")
    np.testing.assert_allclose(win, [[0.5, 0.5]])
    np.testing.assert_allclose(loss, [[0.5, 0.5]])
    win, _ = credit(w, np.array([[0.0, 0.0]]), 1.0)
    np.testing.assert_allclose(win, w)
    _, loss = credit(w, np.array([[1.0, 1.0]]), 0.0)
    np.testing.assert_allclose(loss, w)


def test_a_cost_observed_without_tokens_counts_zero_tokens():
    """m on {a}: one call at $0.004 with no token count, one at $0.002 with 100 tokens: a's means are
    $0.003 and (0 + 100) / 2 = 50 tokens over 2 calls."""
    r = SkillRouter(_hb(), lambda_=0.0, credit_mode="demand")
    d = r.decide({"a": 1.0})
    d.model_index = r.models.index("m")
    r.observe(d, 1.0, cost_usd=0.004)
    r.observe(d, 1.0, cost_usd=0.002, tokens=100)
    a = r.handbook().profiles["m"].skills["a"]
    assert (a.cost_usd, a.tokens, a.calls) == (pytest.approx(0.003), pytest.approx(50), pytest.approx(2))


# ----- the four strategies, worked by hand --------------------------------------------------------------------
def _priced() -> HandbookSpec:
    """``_hb`` with costs: m has 2 calls on a at $0.001 and 200.37 tokens (so those everywhere,
    falling back through the root); n only a model-wide $0.003 (no tokens). In USD per 1k calls: m 1, n 3.

    Rows used below, over (m, n): demand {a}: E[p] (2/3, ½), sd (√(8/252), √(1/12)) = (0.17817, 0.28868);
    {b}: (¼, ½), sd (√(3/80), √(1/12)) = (0.19365, 0.28868); {a: 1, b: 1} = (½, ½): E[p] (11/24, ½),
    sd (√((8/252 + 3/80)/4), √(2/48)) = (0.13157, 0.20412)."""
    hb = _hb()
    m = hb.profiles["m"]
    skills = {**m.skills, "a": m.skills["a"].model_copy(update={"cost_usd": 0.001, "tokens": 200.37, "calls": 2})}
    return hb.model_copy(update={"profiles": {"m": m.model_copy(update={"skills": skills}),
                                              "n": ModelProfile(cost_usd=0.003)}})


W_A, W_B, W_AB = [0, 1, 0], [0, 0, 1], [0, 0.5, 0.5]
SD_A, SD_B, SD_AB, SD_N, SD_NAB = math.sqrt(8 / 252), math.sqrt(3 / 80), math.sqrt((8 / 252 + 3 / 80) / 4), \
    math.sqrt(1 / 12), math.sqrt(2 / 48)


def test_greedy_scores_by_hand():
    """U = E[p] − λ·E[c] at λ = 0.2: {a} m 2/3 − 0.2 = 0.4667, n ½ − 0.6 = −0.1: m; {b} m 0.05, n −0.1: m;
    at λ = 0.05, {b}: m 0.2, n 0.35: n."""
    from masbench.routing import score_batch

    ch = compile_handbook(_priced())
    s = score_batch(ch, np.array([W_A, W_B, W_AB]), 0.2)
    np.testing.assert_allclose(s.p_mean, [[2 / 3, 0.5], [0.25, 0.5], [11 / 24, 0.5]])
    np.testing.assert_allclose(s.p_sd, [[SD_A, SD_N], [SD_B, SD_N], [SD_AB, SD_NAB]])
    np.testing.assert_allclose(s.cost, [[1, 3]] * 3)
    np.testing.assert_allclose(s.cost_usd, [[0.001, 0.003]] * 3)
    np.testing.assert_allclose(s.tokens, [[200.37, 0]] * 3)
    np.testing.assert_allclose(s.utility, [[2 / 3 - 0.2, -0.1], [0.05, -0.1], [11 / 24 - 0.2, -0.1]])
    assert list(s.choice) == [0, 0, 0]
    assert list(score_batch(ch, np.array([W_B]), 0.05).choice) == [1]
    assert list(score_batch(ch, np.array(W_A), 0.05).choice) == [0]  # one row given flat
    d = SkillRouter(_priced(), lambda_=0.05).decide({"a": 1.0, "b": 1.0})  # m 11/24 − 0.05, n ½ − 0.15: m
    assert [(c["model"], c["utility"], c["p_lo"]) for c in d.candidates] == [
        ("m", 0.408333, round(11 / 24 - 1.645 * SD_AB, 6)), ("n", 0.35, round(0.5 - 1.645 * SD_NAB, 6))]
    assert d.chosen == "m"
    # {b}: m's bound ¼ − 1.645·0.19365 < 0 is logged as 0
    assert [c["p_lo"] for c in SkillRouter(_priced()).decide({"b": 1.0}).candidates] == [0.0, round(0.5 - 1.645 * SD_N, 6)]
    only_n = score_batch(ch, np.array([W_A]), 0.0, allowed=np.array([False, True]))
    assert list(only_n.choice) == [1] and only_n.utility[0, 0] == -np.inf
    with pytest.raises(ValueError, match="unknown strategy 'best'; use one of"):
        score_batch(ch, np.array([W_A]), 0.0, "best")
    with pytest.raises(ValueError, match="unknown strategy 'best'; use one of"):
        SkillRouter(_priced(), strategy="best")


def test_ucb_adds_c_standard_deviations():
    """λ = 0, {a}: c = 1: m 2/3 + 0.1782 = 0.8449, n ½ + 0.2887 = 0.7887: m; c = 3: m 1.2012, n 1.3660: n
    (greedy: m). λ = 0.05, c = 1: m 0.8449 − 0.05, n 0.7887 − 0.15."""
    from masbench.routing import score_batch

    ch = compile_handbook(_priced())
    s = score_batch(ch, np.array([W_A]), 0.05, "ucb")
    np.testing.assert_allclose(s.utility, [[2 / 3 + SD_A - 0.05, 0.5 + SD_N - 0.15]])
    assert list(s.choice) == [0]
    assert list(score_batch(ch, np.array([W_A]), 0.0, "ucb", ucb_c=3.0).choice) == [1]
    assert SkillRouter(_priced(), lambda_=0.0, strategy="ucb").decide({"a": 1.0}).chosen == "m"
    assert SkillRouter(_priced(), lambda_=0.0, strategy="ucb", ucb_c=3.0).decide({"a": 1.0}).chosen == "n"


def test_floor_takes_the_cheapest_model_whose_lower_bound_reaches_tau():
    """Lower bounds E[p] − z·sd with z = 1.645: {a} m 0.3736, n 0.0251; {b} m −0.0686, n 0.0251. τ = 0.3: on {a}
    only m qualifies (reported utility 1 − E[c] = 0; n: lb − 1); on {b} none does: the highest bound, n. With
    z = 0 and τ = 0.45, on {a: 1, b: 1} both qualify (11/24 and ½) and the cheaper m is taken (greedy takes n);
    on {b} only n does. Only n allowed: n, whatever its bound."""
    from masbench.routing import score_batch

    ch = compile_handbook(_priced())
    s = score_batch(ch, np.array([W_A, W_B]), 0.0, "floor", tau=0.3)
    assert list(s.choice) == [0, 1]
    np.testing.assert_allclose(s.utility, [[0.0, 0.5 - 1.645 * SD_N - 1], [0.25 - 1.645 * SD_B - 1, 0.5 - 1.645 * SD_N - 1]])
    z0 = score_batch(ch, np.array([W_AB, W_B]), 0.0, "floor", tau=0.45, z=0.0)
    assert list(z0.choice) == [0, 1] and list(score_batch(ch, np.array([W_AB]), 0.0).choice) == [1]
    np.testing.assert_allclose(z0.utility, [[0.0, -2.0], [0.25 - 1, -2.0]])
    assert list(score_batch(ch, np.array([W_A]), 0.0, "floor", tau=0.3, allowed=np.array([False, True])).choice) == [1]
    assert list(score_batch(ch, np.array([W_A]), 0.0, "floor").choice) == [0]  # τ = 0.7: none; m's bound is higher
    # a bound exactly at τ qualifies: z = 0, {b}: m's ¼ (Beta(1, 3)) at τ = ¼, and m is the cheaper
    assert list(score_batch(ch, np.array([W_B]), 0.0, "floor", tau=0.25, z=0.0).choice) == [0]
    r = SkillRouter(_priced(), lambda_=0.0, strategy="floor", tau=0.45, z=0.0)
    d = r.decide({"a": 1.0, "b": 1.0})
    assert d.chosen == "m"
    # logged: utilities, means and bounds to 6 decimals, cost to 6 significant digits, tokens to 1 decimal
    assert d.candidates == [
        {"model": "m", "utility": 0.0, "p_mean": 0.458333, "p_lo": 0.458333, "cost": 0.001, "tokens": 200.4},
        {"model": "n", "utility": -2.0, "p_mean": 0.5, "p_lo": 0.5, "cost": 0.003, "tokens": 0.0}]
    assert d.w is not None
    np.testing.assert_allclose(d.w, [0, 0.5, 0.5])
    assert d.model_index == 0
    assert SkillRouter(_priced(), lambda_=0.0, strategy="floor", tau=0.3).decide({"b": 1.0}).chosen == "n"


def test_thompson_picks_each_model_as_often_as_it_is_the_best():
    """λ = 0, {a}: m's draw ~ Beta(4, 2), n's ~ Beta(1, 1), so P(m) = P(U < X) = E[X] = 2/3; on {b}, Beta(1, 3):
    ¼. Over 3000 rows the share is within ±0.03 (about 3.5 standard errors). Seeded routers repeat."""
    from masbench.routing import score_batch

    ch = compile_handbook(_priced())
    rows = np.array([W_A] * 3000 + [W_B] * 3000)
    s = score_batch(ch, rows, 0.0, "thompson", rng=np.random.default_rng(11))
    assert abs(np.mean(s.choice[:3000] == 0) - 2 / 3) < 0.03 and abs(np.mean(s.choice[3000:] == 0) - 0.25) < 0.03
    np.testing.assert_allclose(s.p_mean[0], [2 / 3, 0.5])  # the reported means stay the posterior means
    assert set(score_batch(ch, rows[:50], 0.0, "thompson").choice) == {0, 1}  # no rng given: a fresh one

    def seq(**kw) -> list[str]:
        r = SkillRouter(_priced(), lambda_=0.0, strategy="thompson", **kw)
        return [r.decide({"a": 1.0}).chosen for _ in range(40)]

    five = seq(seed=5)
    assert five == seq(seed=5) and set(five) == {"m", "n"}
    assert seq() == seq(seed=0) != five  # the default seed is 0


def test_floor_defaults_tau_0_7_and_z_1_645():
    """κ = 2. cheap ($0.001): a 17/3, root Beta(18, 4) (9/11), a Beta(2·9/11 + 17, 2·2/11 + 3) = Beta(18.636, 3.364),
    mean 0.8471, sd 0.0750; dear ($0.003): a 19/0, root Beta(20, 1), a Beta(20.905, 0.0952), mean 0.9955, sd 0.0143.
    Bounds at z = 1.645: 0.7236 and 0.9720, both ≥ 0.7: the cheaper is taken. At z = 2.645 cheap's bound is 0.6486
    (only dear qualifies); at τ = 1.7 neither does (the higher bound, dear)."""
    from masbench.routing import score_batch

    hb = HandbookSpec(name="floor", shrinkage=2.0, taxonomy={"a": SkillSpec(description="a")},
                      profiles={"cheap": ModelProfile(cost_usd=0.001, skills={"a": SkillStats(wins=17, losses=3)}),
                                "dear": ModelProfile(cost_usd=0.003, skills={"a": SkillStats(wins=19)})})
    ch = compile_handbook(hb)
    s = score_batch(ch, np.array([[0.0, 1.0]]), 0.0, "floor")
    np.testing.assert_allclose(s.p_mean[0], [(18 / 11 + 17) / 22, (40 / 21 + 19) / 21])
    assert list(s.choice) == [0]
    assert list(score_batch(ch, np.array([[0.0, 1.0]]), 0.0, "floor", z=2.645).choice) == [1]
    assert list(score_batch(ch, np.array([[0.0, 1.0]]), 0.0, "floor", tau=1.7).choice) == [1]


def test_equal_models_at_equal_cost_go_to_the_first_in_the_handbook():
    """17 models without evidence (all Beta(1, 1)), priced $0.001 or free: at λ = 0 every utility is ½, so the
    tie goes to the cheaper models and among those to the first, m02 (the sort by cost must be stable)."""
    from masbench.routing import score_batch

    pattern = [1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1]
    hb = HandbookSpec(name="ties", taxonomy={"a": SkillSpec(description="a")},
                      profiles={f"m{i:02d}": ModelProfile(cost_usd=0.001 * c) for i, c in enumerate(pattern)})
    assert list(score_batch(compile_handbook(hb), np.array([[0.0, 1.0]]), 0.0).choice) == [2]
