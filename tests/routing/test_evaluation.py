"""``masbench route eval`` (masbench/routing/evaluation.py) on hand-built matrices, every expected
number worked by hand from the protocol and the metric definitions (RouterBench AIQ, RouteLLM
PGR/APGR/CPT, SkillOrchestra as coded; docs/routing.md "Evaluation: masbench route eval")."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from masbench.routing import evaluation
from masbench.routing.evaluation import (
    ClusterBest,
    _demands,
    SkillOrchestraAsCoded,
    evaluate,
    format_sweep,
    format_table,
    kmeans,
    plot_pareto,
    tfidf,
)
from masbench.routing.learn import learn_handbook
from masbench.routing.matrix import Arrays

# ----- TF-IDF and k-means ------------------------------------------------------------------------------


def test_tfidf_by_hand():
    # df: apple 3, banana 2, cherry 1 → vocabulary (df ≥ 2) [apple, banana];
    # idf = ln((1 + 3)/(1 + df)) + 1: apple 1, banana ln(4/3) + 1 = 1.287682
    # "apple banana": log1p(1)·idf = ln2·[1, 1.287682], normalised → [1, 1.287682] / 1.630347 = [0.613366, 0.789807]
    # ("the", "and" are stop words)
    Xtr, Xte = tfidf(["apple banana", "apple cherry", "the banana and apple"],
                     ["apple durian", "durian", "banana banana"])
    b = math.log(4 / 3) + 1.0
    ab = [1 / math.hypot(1.0, b), b / math.hypot(1.0, b)]
    assert Xtr == pytest.approx(np.array([ab, [1.0, 0.0], ab]), abs=1e-12)
    # unknown words are ignored; a text with none known stays a zero vector; counts enter as log1p
    assert Xte == pytest.approx(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]))
    # no word in two questions: the vocabulary falls back to every word seen (alpha, beta)
    Xtr, Xte = tfidf(["alpha", "beta"], ["alpha gamma"])
    assert Xtr == pytest.approx(np.eye(2)) and Xte == pytest.approx(np.array([[1.0, 0.0]]))
    # min_df = 1 keeps cherry: "apple cherry" = [1·ln2, 0, (ln(4/2) + 1)·ln2] normalised
    Xtr, _ = tfidf(["apple banana", "apple cherry", "banana apple"], ["apple"], min_df=1)
    c = math.log(2) + 1.0
    assert Xtr[1] == pytest.approx(np.array([1.0, 0.0, c]) / math.hypot(1.0, c))


def test_kmeans_finds_two_clear_groups():
    X = np.array([[0.0, 0.0], [0.0, 0.2], [10.0, 10.0], [10.0, 10.2], [0.2, 0.0]])
    cent, lab = kmeans(X, 2, seed=3)
    assert lab[0] == lab[1] == lab[4] != lab[2] == lab[3]
    assert cent[lab[0]] == pytest.approx([0.2 / 3, 0.2 / 3]) and cent[lab[2]] == pytest.approx([10.0, 10.1])
    # k is capped at the number of points; k = 1 is the mean
    cent, lab = kmeans(X[:2], 5)
    assert len(cent) == 2 and sorted(lab.tolist()) == [0, 1]
    cent, lab = kmeans(X, 1)
    assert cent == pytest.approx(X.mean(0, keepdims=True)) and lab.tolist() == [0] * 5


def test_kmeans_keeps_the_restart_with_the_least_inertia():
    # four corners of a 1 × 4 rectangle: the best 2-split is left pair / right pair (inertia 4 × 0.25 = 1),
    # a top/bottom split costs 4 × 4 = 16; with 8 restarts one finds the best
    X = np.array([[0.0, 0.0], [0.0, 1.0], [4.0, 0.0], [4.0, 1.0]])
    cent, lab = kmeans(X, 2, seed=0, restarts=8)
    assert float(((X - cent[lab]) ** 2).sum()) == pytest.approx(1.0)


# ----- the routers ---------------------------------------------------------------------------------------
def arrays(Y, C, skills, questions) -> Arrays:
    Y, C = np.asarray(Y, float), np.asarray(C, float)
    n, M = Y.shape
    return Arrays([f"t{i:02d}" for i in range(n)], [f"m{j}" for j in range(M)], Y, C, np.full((n, M), 100.0),
                  [list(s) for s in skills], list(questions))


def test_cluster_best_trades_accuracy_for_relative_cost():
    # cluster 1 (fruit): m0 (cost 1) right on half, m1 (cost 1) never, m2 (cost 10) always;
    # cluster 2 (animals): m1 always, m0 never, m2 always.
    # scale = max mean cost = 10; u = acc − λ·cost/10. Fruit: u(m0) = 0.5 − 0.1λ, u(m2) = 1 − λ
    # → m2 while λ < 0.5/0.9 = 0.556, m0 after. Animals: u(m1) = 1 − 0.1λ beats m2 (1 − λ) and ties
    # it at λ = 0, where the cheaper (m1) wins.
    fruit = ["apple banana cherry", "banana cherry apple", "cherry apple banana", "apple cherry banana"]
    animals = ["dog elephant fox", "fox dog elephant", "elephant fox dog", "dog fox elephant"]
    Y = [[1, 0, 1], [0, 0, 1], [1, 0, 1], [0, 0, 1]] + [[0, 1, 1]] * 4
    C = [[1, 1, 10]] * 8
    tr = arrays(Y, C, [["x"]] * 8, fruit + animals)
    te = arrays([[0, 0, 0]] * 2, [[1, 1, 10]] * 2, [["x"]] * 2, ["cherry banana", "fox elephant"])
    out = ClusterBest(k=2, seed=0).fit(tr).route(te, [0.0, 0.5, 0.6, 5.0])
    assert {lam: c.tolist() for lam, c in out.items()} == {0.0: [2, 1], 0.5: [2, 1], 0.6: [0, 1], 5.0: [0, 1]}


def test_skillorchestra_as_coded_raw_rates_and_cheapest_of_the_tied_best():
    # x tasks: m0 (cost 1) 4/4, m1 (cost 2) 2/4, m2 (cost 4) 3/4; y tasks: m0 0/4, m1 4/4, m2 3/4
    Y = [[1, 1, 1], [1, 0, 1], [1, 1, 1], [1, 0, 0], [0, 1, 1], [0, 1, 1], [0, 1, 1], [0, 1, 0]]
    C = [[1, 2, 4]] * 8
    tr = arrays(Y, C, [["x"]] * 4 + [["y"]] * 4, ["add"] * 4 + ["mul"] * 4)
    hb = learn_handbook(tr, name="so", cost_unit="relative")
    so = SkillOrchestraAsCoded().fit(tr, hb)
    # rate x = (1, .5, .75), y = (0, 1, .75); no skill matched → overall (.5, .75, .75).
    # {x}: m0. {y}: m1. half/half: (.5, .75, .75) → m1 and m2 tie, m1 is cheaper. unknown skill or no
    # demand → the overall rate → m1 (tied with m2, cheaper).
    demands = [{"x": 1.0}, {"y": 1.0}, {"x": 0.5, "y": 0.5}, {"nosuch": 1.0}, {}]
    assert so.route(demands).tolist() == [0, 1, 1, 1, 1]
    assert so.cost.tolist() == [1.0, 2.0, 4.0]


# ----- the evaluation on a matrix with known answers --------------------------------------------------------
N = 20
COST = (0.001, 0.002, 0.01)


def specialists() -> Arrays:
    """Even tasks (skill x, fruit words): only a and c right; odd tasks (skill y, animals): only b and c.
    a costs $0.001, b $0.002, c $0.01 per task."""
    qs = [("apple banana cherry" if i % 2 == 0 else "dog elephant fox") + f" item {i}" for i in range(N)]
    Y = [[1, 0, 1] if i % 2 == 0 else [0, 1, 1] for i in range(N)]
    A = arrays(Y, [COST] * N, [["x"] if i % 2 == 0 else ["y"] for i in range(N)], qs)
    A.models = ["a", "b", "c"]
    return A


def test_evaluate_rows_by_hand():
    res = evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2)
    # protocol: the test part is default_rng(0).permutation(20)[8:] = [10 8 0 12 7 5 18 17 14 9 1 15]:
    # 6 even (x) and 6 odd (y) tasks. Train: 8 tasks; a, b, c cost 8 × (0.001 + 0.002 + 0.01) = 0.104.
    perm = np.random.default_rng(0).permutation(N)
    assert sum(int(i) % 2 == 0 for i in perm[8:]) == 6
    ps = res.per_seed.set_index("router")
    # weak = the cheapest (a), strong = the most accurate (c): on test a = (0.001, 0.5), c = (0.01, 1); c_max 0.01
    row = ps.loc["strongest"]
    assert (row["quality"], row["cost"], row["pgr"]) == pytest.approx((1.0, 0.01, 1.0))
    # hull (0,0)→(0.01,1): AIQ = 0.5; APGR on the weak→strong line = 0.5, CPT50 = 0.5, CPT80 = 0.8
    assert (row["aiq"], row["apgr"], row["cpt50"], row["cpt80"]) == pytest.approx((0.5, 0.5, 0.5, 0.8))
    assert (row["entropy"], row["entropy_norm"], row["top_share"]) == pytest.approx((0.0, 0.0, 1.0))
    assert row["learning_cost"] == pytest.approx(0.104)
    row = ps.loc["cheapest"]
    # (0.001, 0.5): AIQ = (0.001·0.25 + 0.009·0.5)/0.01 = 0.475; PGR 0, APGR 0, CPT never
    assert (row["quality"], row["cost"], row["aiq"], row["apgr"], row["pgr"]) == \
        pytest.approx((0.5, 0.001, 0.475, 0, 0))
    assert math.isnan(row["cpt50"]) and math.isnan(row["cpt80"])
    row = ps.loc["random"]
    # uniform over 3: q = (0.5 + 0.5 + 1)/3 = 2/3, c = 0.013/3; AIQ = (c/3 + (0.01 − c)·2/3)/0.01 = 0.522222;
    # x = (c − 0.001)/0.009 = 0.370370, PGR = (2/3 − 0.5)/0.5 = 1/3: APGR = x/6 + (1 − x)/3 = 0.271605
    assert (row["quality"], row["cost"], row["aiq"], row["apgr"]) == \
        pytest.approx((2 / 3, 0.013 / 3, 0.522222, 0.271605), abs=1e-6)
    assert (row["entropy"], row["entropy_norm"], row["top_share"], row["learning_cost"]) == \
        pytest.approx((math.log2(3), 1.0, 1 / 3, 0.0))
    row = ps.loc["oracle"]
    # a on the 6 x tasks, b on the 6 y: q 1, c 0.0015; AIQ = (0.0015·0.5 + 0.0085)/0.01 = 0.925;
    # x = 0.0005/0.009 = 1/18: APGR = 1 − 1/36 = 0.972222; PGR = 18x reaches 0.5 at 1/36 (grid: 0.028)
    # and 0.8 at 0.8/18 = 0.04444 (grid: 0.0445); half a, half b: 1 bit, / log2(3)
    assert (row["quality"], row["cost"], row["aiq"], row["apgr"]) == pytest.approx((1.0, 0.0015, 0.925, 35 / 36))
    assert (row["cpt50"], row["cpt80"]) == pytest.approx((0.028, 0.0445), abs=1e-9)
    assert (row["entropy"], row["entropy_norm"], row["top_share"]) == pytest.approx((1.0, 1 / math.log2(3), 0.5))
    assert math.isnan(row["learning_cost"])
    # gap to the oracle and the fractions, per router: q_or = 1, AIQ_or = 0.925
    for name in ("strongest", "cheapest", "random"):
        r = ps.loc[name]
        assert r["oracle_gap"] == pytest.approx(1 - r["quality"]) and r["frac_oracle_q"] == pytest.approx(r["quality"])
        assert r["frac_oracle_aiq"] == pytest.approx(r["aiq"] / 0.925)
    # skillorchestra and cluster-best (k = 2: fruit / animals) both send x to a and y to b: the oracle's point
    for name in ("skillorchestra (as coded)", "cluster-best"):
        assert (ps.loc[name, "quality"], ps.loc[name, "cost"], ps.loc[name, "aiq"]) == \
            pytest.approx((1.0, 0.0015, 0.925))
    # single models: a (0.001, .5), b (0.002, .5) under the a→c segment, c (0.01, 1):
    # hull (0,0)→(0.001,0.5)→(0.01,1): AIQ = (0.001·0.25 + 0.009·0.75)/0.01 = 0.7,
    # APGR 0.5 (the weak→strong line)
    hull = ps.loc["single-model hull"]
    c_ours = ps.loc["ours", "cost"]
    assert hull["cost"] == c_ours and (hull["aiq"], hull["apgr"]) == pytest.approx((0.7, 0.5))
    q_at = 0.5 + 0.5 * (c_ours - 0.001) / 0.009 if c_ours < 0.01 else 1.0
    assert hull["quality"] == pytest.approx(q_at) and hull["pgr"] == pytest.approx((q_at - 0.5) / 0.5)
    assert math.isnan(hull["entropy"]) and hull["learning_cost"] == pytest.approx(0.104)
    # cost-matched random: the a/c mixture with ours' cost: share π = (c_ours − 0.001)/0.009 of c
    pi = min(max((c_ours - 0.001) / 0.009, 0.0), 1.0)
    cm = ps.loc["random (cost-matched)"]
    assert (cm["cost"], cm["quality"]) == pytest.approx((0.001 + 0.009 * pi, 0.5 + 0.5 * pi))
    assert cm["learning_cost"] == 0.0 and cm["apgr"] == pytest.approx(0.5)
    # ours at the default λ is its sweep's point there
    sw = res.sweeps["ours"].set_index("lambda")
    assert (ps.loc["ours", "cost"], ps.loc["ours", "quality"]) == pytest.approx(
        (sw.loc[0.1, "cost"], sw.loc[0.1, "quality"]))
    assert ps.loc["ours", "learning_cost"] == pytest.approx(0.104)


def test_evaluate_cost_matched_mixture_between_weak_and_strong():
    # at λ = 0.5 the handbook router sends x to a and y to b (cost 0.0015): π = 0.0005/0.009 = 1/18,
    # the mixture costs 0.0015 and scores 0.5 + 0.5/18 = 0.527778
    res = evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2, default_lambda=0.5,
                   lambdas=(0.0, 0.5), online=False)
    ps = res.per_seed.set_index("router")
    assert ps.loc["ours", "cost"] == pytest.approx(0.0015)
    assert (ps.loc["random (cost-matched)", "cost"], ps.loc["random (cost-matched)", "quality"]) == \
        pytest.approx((0.0015, 0.5 + 0.5 / 18))
    # single-model hull at c = 0.0015: on (0.001, .5)→(0.01, 1): 0.5 + 0.5·(0.0005/0.009) = 0.527778
    assert ps.loc["single-model hull", "quality"] == pytest.approx(0.5 + 0.5 / 18)
    assert "ours (thompson, online)" not in ps.index
    assert res.info["lambdas"] == [0.0, 0.5] and res.info["default_lambda"] == 0.5
    # the sweep rows of the cost-matched router are keyed by the strong share
    assert sorted(res.sweeps["random (cost-matched)"]["lambda"]) == pytest.approx([0.0, 1 / 18, 1.0])


def test_evaluate_table_is_the_mean_over_seeds_in_the_fixed_order():
    res = evaluate(specialists(), n_train=0.4, seeds=2, demand="tags", k_clusters=2, lambdas=(0.0, 1.0))
    assert res.info["n_train"] == 8 and res.info["n_test"] == 12 and res.info["seeds"] == [0, 1]
    assert res.info["tasks"] == 20 and res.info["models"] == ["a", "b", "c"] and res.info["k_clusters"] == 2
    assert res.info["demand"] == "tags" and res.info["lambdas"] == [0.0, 0.1, 1.0]  # the default λ is added
    t = res.table.set_index("router")
    ps = res.per_seed
    for name in t.index:
        g = ps[ps["router"] == name]
        assert len(g) == 2
        assert t.loc[name, "aiq"] == pytest.approx(g["aiq"].mean())
        assert t.loc[name, "aiq_sd"] == pytest.approx(g["aiq"].std(), nan_ok=True)
        assert t.loc[name, "quality"] == pytest.approx(g["quality"].mean())
    assert list(t.index) == ["oracle", "ours", "ours (thompson, online)", "skillorchestra (as coded)", "cluster-best",
                             "single-model hull", "strongest", "cheapest", "random", "random (cost-matched)"]
    # strongest is c on every split: quality 1, AIQ 0.5 (see above) on each seed
    assert t.loc["strongest", "aiq"] == pytest.approx(0.5) and t.loc["strongest", "aiq_sd"] == pytest.approx(0.0)
    s = res.singles.set_index("model")
    assert s.loc["c", "quality"] == 1.0 and s.loc["a", "cost"] == pytest.approx(0.001) and "seed" not in res.singles
    sw = res.sweeps["ours"]
    assert sorted(sw["lambda"]) == [0.0, 0.1, 1.0] and "seed" not in sw
    by = res.sweeps_by_seed
    assert set(by["seed"]) == {0, 1} and {"cost", "quality", "entropy_norm", "top_share"} <= set(by.columns)
    assert np.allclose(by[by["router"] == "random"]["top_share"], 1 / 3)


def test_evaluate_max_test_ablations_and_errors():
    res = evaluate(specialists(), n_train=8, seeds=[4], demand="tags", k_clusters=2, max_test=5, ablations=True,
                   lambdas=(0.0,), online=False)
    assert res.info["n_test"] == 5 and res.info["seeds"] == [4]
    ps = res.per_seed.set_index("router")
    for name in ("ours − shrinkage (κ=0)", "ours − responsibility (whole credit)", "ours − per-skill cost"):
        assert name in ps.index and 0.0 <= ps.loc[name, "quality"] <= 1.0
    # 5 test tasks: the oracle's quality is 1 and its cost the mean of a's and b's over those 5
    perm = np.random.default_rng(4).permutation(N)[8:13]
    even = sum(int(i) % 2 == 0 for i in perm)
    assert ps.loc["oracle", "cost"] == pytest.approx((0.001 * even + 0.002 * (5 - even)) / 5)
    one = specialists()
    one = Arrays(one.task_ids, ["a"], one.Y[:, :1], one.C[:, :1], one.T[:, :1], one.skills, one.questions)
    with pytest.raises(ValueError, match="at least two models"):
        evaluate(one)
    for bad in (1, 20, 0.05):
        with pytest.raises(ValueError, match="training and"):
            evaluate(specialists(), n_train=bad)


def test_evaluate_indicator_demand_from_the_question_text():
    # indicators learned on the training part ("apple"… → x, "dog"… → y) route like the tags
    res = evaluate(specialists(), n_train=10, seeds=[0], k_clusters=2, lambdas=(0.0,), online=False)
    ps = res.per_seed.set_index("router")
    assert res.info["demand"] == "indicators"
    even = sum(int(i) % 2 == 0 for i in np.random.default_rng(0).permutation(N)[10:])  # x tasks in the test part
    assert (ps.loc["skillorchestra (as coded)", "quality"], ps.loc["skillorchestra (as coded)", "cost"]) == \
        pytest.approx((1.0, (0.001 * even + 0.002 * (10 - even)) / 10))


def test_format_table_and_sweep_print_the_numbers(tmp_path):
    res = evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2, lambdas=(0.0, 5.0), online=False)
    text = format_table(res, simulated=True)
    lines = text.splitlines()
    assert lines[0].startswith("SIMULATED") and lines[1].split()[:4] == ["router", "quality", "cost/task", "$"]
    assert set(lines[2]) == {"-"} and len(lines[2]) == len(lines[1])
    assert lines[0] == "SIMULATED — sim/ models with known competence; not measurements of real models"
    assert lines[1].split() == ["router", "quality", "cost/task", "$", "AIQ", "APGR", "CPT50", "CPT80", "PGR", "gap",
                                "q/orc", "AIQ/orc", "H", "bits", "H", "norm", "learn", "$"]
    # the oracle (a on x, b on y): AIQ 0.925, APGR 35/36, CPT50 0.028, CPT80 0.0445, PGR 1, H 1 bit / log2(3)
    [row] = [x for x in lines if x.startswith("oracle")]
    assert row.split()[1:] == ["1.000", "0.001500", "0.9250", "0.972", "0.03", "0.04", "1.00", "0.000", "1.000",
                               "1.000", "1.00", "0.63", "—"]
    [row] = [x for x in lines if x.startswith("cheapest")]
    # quality .3f, cost .6f, AIQ .4f, APGR .3f, CPT50/80 "—" (never), PGR .2f, gap, q/orc, AIQ/orc, H, H norm, learn $
    assert row.split()[1:] == ["0.500", "0.001000", "0.4750", "0.000", "—", "—", "0.00", "0.500", "0.500", "0.514",
                               "0.00", "0.00", "0.1040"]
    [row] = [x for x in lines if x.startswith("oracle")]
    assert row.split()[-1] == "—" and row.split()[1:3] == ["1.000", "0.001500"]
    assert lines[-1] == ("tasks 20 (train 8, test 12) × models 3; seeds [0]; demand from tags; default λ = 0.1 "
                         "(relative cost); cluster-best k = 2")
    assert not format_table(res).startswith("SIMULATED")
    sweep = format_sweep(res).splitlines()
    assert sweep[0] == "λ sweep (ours; cost relative to the priciest model):"
    assert sweep[1].split() == ["lambda", "cost/task", "$", "quality", "H", "norm"]
    assert [x.split()[0] for x in sweep[2:]] == ["0", "0.1", "5"]
    assert "-0.00" not in "\n".join(sweep)  # a one-model λ point has entropy 0.00, not -0.00
    assert format_sweep(res, "cheapest").splitlines()[2].split()[1:3] == ["0.001000", "0.500"]


# ----- the parts the tests above did not reach (issue 29: mutation survivors) ----------------------------------
class FakeEmbedder:
    """Fruit questions → (1, 0), the rest → (0, 1): the nearest training tasks are exactly the same-kind ones."""

    def __init__(self, name: str) -> None:
        self.name = name

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([[1.0, 0.0] if "apple" in t else [0.0, 1.0] for t in texts])


@pytest.mark.parametrize("name", ["gguf", "minilm"])
def test_evaluate_with_embeddings_adds_knn_cluster_best_and_embedding_demand(name):
    # λ = 0.5: every embedding router sends fruit (x) to a and animals (y) to b, the oracle's point
    # (quality 1, cost (6·0.001 + 6·0.002)/12 = 0.0015 on seed 0's test part, see test_evaluate_rows_by_hand):
    # k-NN: the same-kind neighbours carry all the weight; u(a) = 1 − 0.5·0.1 > u(c) = 1 − 0.5·1.
    # cluster-best: the two clusters are fruit / animals. ours: the demand is the neighbours' tag (x or y).
    res = evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2, default_lambda=0.5,
                   lambdas=(0.0, 0.5), online=False, embed=FakeEmbedder(name))
    ps = res.per_seed.set_index("router")
    names = [f"ours ({name} embedding demand)", f"cluster-best ({name} embeddings)", f"knn ({name} embeddings)"]
    for r in names:
        assert (ps.loc[r, "quality"], ps.loc[r, "cost"], ps.loc[r, "learning_cost"]) == \
            pytest.approx((1.0, 0.0015, 0.104))
        assert sorted(res.sweeps[r]["lambda"]) == [0.0, 0.5]
    # the fixed order puts them after skillorchestra / cluster-best and before the single-model hull
    assert list(res.table["router"]) == ["oracle", "ours", names[0], "skillorchestra (as coded)", "cluster-best",
                                         names[1], names[2], "single-model hull", "strongest", "cheapest", "random",
                                         "random (cost-matched)"]


def test_evaluate_ablations_keep_the_fixed_order():
    res = evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2, lambdas=(0.5,),
                   default_lambda=0.5, online=True, ablations=True)
    assert list(res.table["router"])[:6] == ["oracle", "ours", "ours (thompson, online)", "ours − shrinkage (κ=0)",
                                             "ours − responsibility (whole credit)", "ours − per-skill cost"]
    # at λ = 0.5 the handbook sends x to a and y to b (see the cost-matched test); with no shrinkage and whole
    # credit it has the same one-skill tasks to learn from, so the same choice
    ps = res.per_seed.set_index("router")
    for r in ("ours − shrinkage (κ=0)", "ours − responsibility (whole credit)"):
        assert (ps.loc[r, "quality"], ps.loc[r, "cost"], ps.loc[r, "learning_cost"]) == \
            pytest.approx((1.0, 0.0015, 0.104))
    # every learning router paid for running the three models on the 8 training tasks
    for r in ("ours (thompson, online)", "ours − per-skill cost", "skillorchestra (as coded)", "cluster-best"):
        assert ps.loc[r, "learning_cost"] == pytest.approx(0.104)
    assert sorted(res.sweeps["ours − per-skill cost"]["lambda"]) == [0.5]


def test_evaluate_single_model_hull_row_and_seed_column():
    res = evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2, default_lambda=0.5,
                   lambdas=(0.0, 0.5), online=False)
    ps = res.per_seed.set_index("router")
    # PGR hull of the singles in cost fraction: a (0, 0), b (1/9, 0), c (1, 1): the line y = x →
    # CPT50 0.5, CPT80 0.8; at ours' cost 0.0015: q = 0.5 + 0.5/18; q_or 1, AIQ_or 0.925, hull AIQ 0.7
    h = ps.loc["single-model hull"]
    q_at = 0.5 + 0.5 / 18
    assert (h["cpt50"], h["cpt80"], h["oracle_gap"], h["frac_oracle_q"], h["frac_oracle_aiq"]) == \
        pytest.approx((0.5, 0.8, 1 - q_at, q_at, 0.7 / 0.925))
    assert np.isnan(h[["entropy_norm", "top_share"]].to_numpy(float)).all()
    assert res.per_seed["seed"].tolist() == [0] * len(res.per_seed)
    assert list(res.per_seed.columns) == ["seed", "router", "quality", "cost", "aiq", "apgr", "cpt50", "cpt80", "pgr",
                                          "oracle_gap", "frac_oracle_q", "frac_oracle_aiq", "entropy", "entropy_norm",
                                          "top_share", "learning_cost"]
    # one λ key per single-point router
    for r in ("strongest", "cheapest", "random", "oracle"):
        assert res.sweeps[r]["lambda"].tolist() == [0.0]
    # the sweeps keep the order the routers were added in
    assert list(res.sweeps) == ["strongest", "cheapest", "random", "ours", "skillorchestra (as coded)",
                                "cluster-best", "oracle", "random (cost-matched)"]
    # sweep entropy/top share of the λ = 0.5 point: half a, half b → 1 bit / log2(3), top share 0.5
    by = res.sweeps_by_seed
    assert by is not None
    row = by[(by["router"] == "ours") & (by["lambda"] == 0.5)].iloc[0]
    assert (row["entropy_norm"], row["top_share"]) == pytest.approx((1 / math.log2(3), 0.5))


def by_split(n: int, ntr: int, seed: int, train_rows, test_rows):
    """Rows placed so the training part of `seed`'s split gets train_rows and the test part test_rows."""
    perm = np.random.default_rng(seed).permutation(n)
    rows: list = [None] * n
    for i, r in zip(perm[:ntr], train_rows, strict=True):
        rows[int(i)] = r
    for i, r in zip(perm[ntr:], test_rows, strict=True):
        rows[int(i)] = r
    return rows


def test_evaluate_strongest_and_cheapest_break_ties_by_cost_and_accuracy():
    # training part: m0 (cost 1) 2/4, m1 (cost 1) 3/4, m2 (cost 5) 4/4, m3 (cost 3) 4/4.
    # strongest = the cheapest of the most accurate (m3, not m2); cheapest = the most accurate of the
    # cheapest (m1, not m0). Test part: m0 0/4, m1 2/4, m2 and m3 4/4.
    tr_y = [[1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1], [0, 0, 1, 1]]
    te_y = [[0, 1, 1, 1], [0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]
    Y = by_split(8, 4, 0, tr_y, te_y)
    A = arrays(Y, [[1, 1, 5, 3]] * 8, [["x"]] * 8, ["q"] * 8)
    res = evaluate(A, n_train=4, seeds=[0], demand="tags", k_clusters=2, lambdas=(0.0,), online=False)
    ps = res.per_seed.set_index("router")
    assert (ps.loc["strongest", "cost"], ps.loc["strongest", "quality"]) == (3.0, 1.0)
    assert (ps.loc["cheapest", "cost"], ps.loc["cheapest", "quality"]) == (1.0, 0.5)


def test_evaluate_two_models_one_both_best_and_cheapest():
    # m0 (cost 1) always right, m1 (cost 2) never: weak = strong = m0, the weak→strong span is 0 and the
    # cost-matched mixture is m0 alone, keyed 0 (no share to match); n_train = 2, the smallest allowed
    A = arrays([[1, 0]] * 6, [[1, 2]] * 6, [["x"]] * 6, ["q"] * 6)
    res = evaluate(A, n_train=2, seeds=[0], demand="tags", k_clusters=1, lambdas=(0.0,), online=False)
    ps = res.per_seed.set_index("router")
    assert (ps.loc["random (cost-matched)", "cost"], ps.loc["random (cost-matched)", "quality"]) == (1.0, 1.0)
    by = res.sweeps_by_seed
    assert by is not None and sorted(by.query("router == 'random (cost-matched)'")["lambda"]) == [0.0, 1.0]
    assert res.info["n_train"] == 2 and res.info["n_test"] == 4


def test_evaluate_no_model_right_gives_no_oracle_fractions():
    # every test answer wrong: the oracle's quality and AIQ are 0, so the fractions of it are undefined
    Y = by_split(6, 3, 0, [[1, 0], [0, 1], [1, 1]], [[0, 0]] * 3)
    res = evaluate(arrays(Y, [[1, 2]] * 6, [["x"]] * 6, ["q"] * 6), n_train=3, seeds=[0], demand="tags",
                   k_clusters=1, lambdas=(0.0,), online=False)
    ps = res.per_seed
    assert ps["frac_oracle_q"].isna().all() and ps["frac_oracle_aiq"].isna().all()


def test_evaluate_defaults_and_messages():
    res = evaluate(specialists(), demand="tags", online=False, lambdas=(0.0,))
    # n_train 0.3 of 20 = 6; seeds 3 = [0, 1, 2]; k = 8 clusters; the default λ 0.1 joins the sweep
    assert (res.info["n_train"], res.info["seeds"], res.info["k_clusters"], res.info["lambdas"]) == \
        (6, [0, 1, 2], 8, [0.0, 0.1])
    # max_test larger than the test part: all of it
    assert evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2, lambdas=(0.0,), online=False,
                    max_test=50).info["n_test"] == 12
    with pytest.raises(ValueError, match=r"^n_train=1\.0 leaves 1 training and 19 test tasks of 20$"):
        evaluate(specialists(), n_train=1.0)
    one = specialists()
    one = Arrays(one.task_ids, ["a"], one.Y[:, :1], one.C[:, :1], one.T[:, :1], one.skills, one.questions)
    with pytest.raises(ValueError, match="^routing needs at least two models in the matrix$"):
        evaluate(one)


def test_demands_from_tags_split_evenly():
    A = arrays([[1, 0]] * 3, [[1, 2]] * 3, [["x", "y"], [], ["x"]], ["q"] * 3)
    hb = learn_handbook(A, name="d", cost_unit="relative")
    assert _demands(hb, A, "tags") == [{"x": 0.5, "y": 0.5}, {}, {"x": 1.0}]


def test_plot_pareto_draws_the_singles_the_sweeps_and_the_labels(tmp_path, monkeypatch):
    import matplotlib  # function-level: only this test needs matplotlib (a heavy import)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # function-level: after choosing the backend
    from matplotlib.colors import to_hex  # function-level: as above
    from matplotlib.markers import MarkerStyle  # function-level: as above

    res = evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2, lambdas=(0.0, 5.0))
    closed: list = []
    real_close = plt.close
    monkeypatch.setattr(plt, "close", closed.append)
    with matplotlib.rc_context({"font.size": 5.0}):  # so a size left to the default shows
        out = plot_pareto(res, tmp_path / "p.png")
    assert out == tmp_path / "p.png"
    png = out.read_bytes()
    # 7.5 × 5 in at 120 dpi
    assert int.from_bytes(png[16:20], "big") == 900 and int.from_bytes(png[20:24], "big") == 600
    [fig] = closed
    ax = fig.axes[0]
    assert tuple(fig.get_size_inches()) == (7.5, 5.0)
    [sc] = ax.collections
    s = res.singles
    assert sc.get_offsets().tolist() == np.column_stack([s["cost"], s["quality"]]).tolist()
    assert sc.get_label() == "single models" and sc.get_zorder() == 3
    assert to_hex(sc.get_facecolor()[0]) == to_hex("grey")
    sq = MarkerStyle("s")
    assert np.asarray(sc.get_paths()[0].vertices).tolist() == \
        np.asarray(sq.get_path().transformed(sq.get_transform()).vertices).tolist()
    texts = [(t.get_text(), tuple(t.xy), t.get_fontsize(), tuple(t.xyann), t.anncoords) for t in ax.texts]
    assert texts == [(m, (c, q), 7.0, (3.0, 3.0), "offset points")
                     for m, c, q in zip(s["model"], s["cost"], s["quality"], strict=True)]
    lines = {ln.get_label(): ln for ln in ax.lines}
    assert list(lines) == ["ours", "cluster-best", "skillorchestra (as coded)", "random (cost-matched)", "oracle",
                           "ours (thompson, online)"]
    want = {"ours": ("C0", "o", "-", 6), "cluster-best": ("C1", "^", "-", 6),
            "skillorchestra (as coded)": ("C3", "D", "None", 6),
            "random (cost-matched)": ("C7", "None", ":", 6), "oracle": ("k", "*", "None", 12),
            "ours (thompson, online)": ("C2", "P", "None", 6)}
    for name, (col, marker, ls, ms) in want.items():
        ln = lines[name]
        assert (ln.get_color(), ln.get_marker(), ln.get_linestyle(), ln.get_markersize()) == (col, marker, ls, ms)
        sw = res.sweeps[name].sort_values("cost")
        assert ln.get_xdata().tolist() == sw["cost"].tolist() and ln.get_ydata().tolist() == sw["quality"].tolist()
    assert ax.get_xscale() == "symlog" and ax.xaxis.get_transform().linthresh == pytest.approx(0.001)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("mean cost per task (USD)", "accuracy")
    assert ax.get_title() == "Routers: cost vs quality" and ax.title.get_fontsize() == 10
    grid = ax.xaxis.get_gridlines()[0]
    assert grid.get_visible() and grid.get_alpha() == 0.3
    leg = ax.get_legend()
    assert leg._loc == 4 and {t.get_fontsize() for t in leg.get_texts()} == {7.0}  # 4: "lower right"
    assert [t.get_text() for t in leg.get_texts()] == ["single models"] + list(lines)
    real_close("all")
    del res.sweeps["cluster-best"]  # a styled router that is missing is skipped, the later ones still drawn
    plot_pareto(res, tmp_path / "q.png", title="T", simulated=True)
    ax = closed[1].axes[0]
    assert ax.get_title() == "SIMULATED — T"
    assert [ln.get_label() for ln in ax.lines] == [x for x in lines if x != "cluster-best"]
    real_close("all")


def test_evaluate_cost_matched_is_the_weak_model_when_weak_and_strong_cost_the_same_on_test():
    # training: m0 (cost 1) 1/3, m1 (cost 2) 3/3 → weak m0, strong m1; on the test part both cost 1.5, so
    # no strong share can be matched: the mixture is the weak model alone (quality 0 there, m1 has 1)
    Y = by_split(6, 3, 0, [[1, 1], [0, 1], [0, 1]], [[0, 1]] * 3)
    C = by_split(6, 3, 0, [[1, 2]] * 3, [[1.5, 1.5]] * 3)
    res = evaluate(arrays(Y, C, [["x"]] * 6, ["q"] * 6), n_train=3, seeds=[0], demand="tags", k_clusters=1,
                   lambdas=(0.0,), online=False)
    ps = res.per_seed.set_index("router")
    assert (ps.loc["random (cost-matched)", "cost"], ps.loc["random (cost-matched)", "quality"]) == (1.5, 0.0)


def test_evaluate_routers_missing_from_the_fixed_order_follow_it_as_added():
    # an embedder whose name is not in the order list: its three routers come last, in the order they were added
    res = evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2, lambdas=(0.5,),
                   default_lambda=0.5, online=False, embed=FakeEmbedder("zz"))
    assert list(res.table["router"])[-3:] == ["knn (zz embeddings)", "cluster-best (zz embeddings)",
                                              "ours (zz embedding demand)"]


# ----- recording stand-ins: the arguments evaluate passes to the routers it builds (issue 29) -------------------
def _test_part(seed: int, n: int, ntr: int) -> list[int]:
    """The protocol's test tasks of `seed`, in order: default_rng(seed).permutation(n)[ntr:]."""
    return [int(i) for i in np.random.default_rng(seed).permutation(n)[ntr:]]


def test_thompson_router_gets_the_default_lambda_the_seed_and_every_test_outcome(monkeypatch):
    made: list = []

    class Recording(evaluation.SkillRouter):
        def __init__(self, handbook, **kw):
            made.append(self)
            self.given, self.kw, self.decided, self.observed = handbook, kw, [], []
            super().__init__(handbook, **kw)

        def decide(self, demand, *a, **k):
            self.decided.append(dict(demand))
            return super().decide(demand, *a, **k)

        def observe(self, decision, *args, **kw):
            self.observed.append((decision.model_index, args, kw))
            super().observe(decision, *args, **kw)

    monkeypatch.setattr(evaluation, "SkillRouter", Recording)
    A = specialists()
    res = evaluate(A, n_train=8, seeds=[3, 5], demand="tags", k_clusters=2, lambdas=(0.0,), default_lambda=0.25)
    assert len(made) == 2
    ps = res.per_seed
    for seed, r in zip([3, 5], made, strict=True):
        # the documented setting: λ = the default λ, Thompson sampling, seeded by the split's seed
        assert r.kw == {"lambda_": 0.25, "strategy": "thompson", "seed": seed}
        assert r.given.models == ["a", "b", "c"]
        test = _test_part(seed, N, 8)
        # one decision per test task, in the test part's order, on the task's tag (x even, y odd)
        assert r.decided == [{"x": 1.0} if i % 2 == 0 else {"y": 1.0} for i in test]
        # each decision's outcome is fed back: that task's correctness and USD for the chosen model
        assert [(args, kw) for _, args, kw in r.observed] == \
            [((A.Y[i, m], A.C[i, m]), {}) for i, (m, _, _) in zip(test, r.observed, strict=True)]
        chosen = [m for m, _, _ in r.observed]
        row = ps[(ps["seed"] == seed) & (ps["router"] == "ours (thompson, online)")].iloc[0]
        assert (row["quality"], row["cost"]) == pytest.approx(
            (np.mean([A.Y[i, m] for i, m in zip(test, chosen, strict=True)]),
             np.mean([A.C[i, m] for i, m in zip(test, chosen, strict=True)])))


def _recording_learn(monkeypatch) -> list[dict]:
    """Replace evaluation.learn_handbook by the real one that also records its keyword arguments
    (the handbook's name left out: it only labels the handbook)."""
    calls: list[dict] = []

    def learn(tr, **kw):
        calls.append({"tasks": list(tr.task_ids), **{k: v for k, v in kw.items() if k != "name"}})
        return learn_handbook(tr, **kw)

    monkeypatch.setattr(evaluation, "learn_handbook", learn)
    return calls


def test_the_handbook_and_the_ablations_are_learned_with_the_documented_settings(monkeypatch):
    calls = _recording_learn(monkeypatch)
    evaluate(specialists(), n_train=8, seeds=[3], demand="tags", k_clusters=2, lambdas=(0.0,), online=False,
             shrinkage=2.5, ablations=True)
    train = [f"t{i:02d}" for i in np.random.default_rng(3).permutation(N)[:8]]
    # ours with the κ given; the ablations: κ = 0, and whole credit (κ as given); per-skill cost reuses ours'
    assert calls == [
        {"tasks": train, "shrinkage": 2.5, "cost_unit": "relative"},
        {"tasks": train, "shrinkage": 0.0, "cost_unit": "relative"},
        {"tasks": train, "shrinkage": 2.5, "cost_unit": "relative", "credit_mode": "whole"},
    ]
    calls.clear()
    # the default κ is 4 (the handbook's documented shrinkage)
    evaluate(specialists(), n_train=8, seeds=[3], demand="tags", k_clusters=2, lambdas=(0.0,), online=False)
    assert calls == [{"tasks": train, "shrinkage": 4.0, "cost_unit": "relative"}]


def test_every_handbook_router_gets_the_demand_asked_for(monkeypatch):
    seen: list[str] = []
    real = evaluation._demands

    def demands(hb, te, how):
        seen.append(how)
        return real(hb, te, how)

    monkeypatch.setattr(evaluation, "_demands", demands)
    evaluate(specialists(), n_train=8, seeds=[0], demand="tags", k_clusters=2, lambdas=(0.0,), online=False,
             ablations=True)
    assert seen == ["tags"] * 4  # ours and its three ablations


def test_ablations_route_on_tags_when_the_questions_carry_no_indicator():
    # every question is the same text, so the indicators learned from it infer no skill: only the tags
    # tell x tasks (a right) from y tasks (b right). At λ = 0.5 (see the cost-matched test) each ablation
    # on the tags sends x to a and y to b: quality 1, cost 0.0015 on seed 0's test part (6 x, 6 y).
    A = specialists()
    A.questions = ["what is it"] * N
    res = evaluate(A, n_train=8, seeds=[0], demand="tags", k_clusters=1, lambdas=(0.5,), default_lambda=0.5,
                   online=False, ablations=True)
    ps = res.per_seed.set_index("router")
    for r in ("ours", "ours − shrinkage (κ=0)", "ours − responsibility (whole credit)"):
        assert (ps.loc[r, "quality"], ps.loc[r, "cost"]) == pytest.approx((1.0, 0.0015))


def test_the_per_skill_cost_ablation_prices_every_skill_at_the_models_mean():
    # both models always right; m0 costs 1 on x tasks and 9 on y tasks (mean 5), m1 costs 4 on both.
    # With per-skill cost: x → m0 (1 < 4), y → m1 (4 < 9): cost (1 + 4)/2 on a half-x test part.
    # Priced at the model's mean: m1 (4 < 5) everywhere: cost 4.
    n = 16
    tags = [["x"] if i % 2 == 0 else ["y"] for i in range(n)]
    C = [[1.0, 4.0] if i % 2 == 0 else [9.0, 4.0] for i in range(n)]
    A = arrays([[1, 1]] * n, C, tags, ["q"] * n)
    test = _test_part(0, n, 8)
    x_share = sum(i % 2 == 0 for i in test) / len(test)
    res = evaluate(A, n_train=8, seeds=[0], demand="tags", k_clusters=1, lambdas=(1.0,), default_lambda=1.0,
                   online=False, ablations=True)
    ps = res.per_seed.set_index("router")
    assert ps.loc["ours", "cost"] == pytest.approx(x_share * 1 + (1 - x_share) * 4)
    assert ps.loc["ours − per-skill cost", "cost"] == pytest.approx(4.0)
    assert ps.loc["ours − shrinkage (κ=0)", "cost"] == pytest.approx(x_share * 1 + (1 - x_share) * 4)


def test_cluster_best_and_knn_get_k_the_seed_and_the_embedders_vectors(monkeypatch):
    made: list = []

    class RecCB(ClusterBest):
        def __init__(self, *a, **kw):
            made.append(("cb", a, kw))
            super().__init__(*a, **kw)

    class RecKNN(evaluation.KNNRouter):
        def __init__(self, *a, **kw):
            made.append(("knn", a, kw))
            super().__init__(*a, **kw)

    monkeypatch.setattr(evaluation, "ClusterBest", RecCB)
    monkeypatch.setattr(evaluation, "KNNRouter", RecKNN)
    evaluate(specialists(), n_train=8, seeds=[3, 5], demand="tags", k_clusters=2, lambdas=(0.0,), online=False)
    assert made == [("cb", (), {"k": 2, "seed": 3}), ("cb", (), {"k": 2, "seed": 5})]
    made.clear()
    evaluate(specialists(), n_train=8, seeds=[3], demand="tags", k_clusters=3, lambdas=(0.0,), online=False,
             embed=FakeEmbedder("gguf"), k_nn=4)
    (_, a0, kw0), (_, a1, kw1), (_, a2, kw2) = made
    assert [m[0] for m in made] == ["cb", "knn", "cb"]
    assert a0 == () and kw0 == {"k": 3, "seed": 3}
    # k-NN with the k given; the embedding cluster-best with k, the seed and the same vectors
    [vec] = a1
    assert kw1 == {"k": 4} and a2 == () and kw2 == {"k": 3, "seed": 3, "vectors": vec}
    Xtr, Xte = vec(["apple pie", "dog"], ["fox"])
    assert Xtr.tolist() == [[1.0, 0.0], [0.0, 1.0]] and Xte.tolist() == [[0.0, 1.0]]
    made.clear()
    # the default k-NN size is 10
    evaluate(specialists(), n_train=8, seeds=[3], demand="tags", k_clusters=3, lambdas=(0.0,), online=False,
             embed=FakeEmbedder("gguf"))
    assert made[1][2] == {"k": 10}


def test_evaluate_takes_an_outcome_frame():
    # the long form (one row per task × model) of the specialists matrix: the same protocol, so seed 0's
    # test part has 6 x and 6 y tasks; the oracle sends x to a and y to b: quality 1, cost 0.0015
    rows = [{"task_id": f"t{i:02d}", "model": m, "correct": float(m == "c" or (m == "a") == (i % 2 == 0)),
             "cost_usd": c, "skills": ["x"] if i % 2 == 0 else ["y"], "question": f"q {i}"}
            for i in range(N) for m, c in zip("abc", COST, strict=True)]
    res = evaluate(pd.DataFrame(rows), n_train=8, seeds=[0], demand="tags", k_clusters=2, lambdas=(0.0,),
                   online=False)
    assert res.info["models"] == ["a", "b", "c"] and res.info["tasks"] == N
    ps = res.per_seed.set_index("router")
    assert (ps.loc["oracle", "quality"], ps.loc["oracle", "cost"]) == pytest.approx((1.0, 0.0015))
    assert (ps.loc["strongest", "quality"], ps.loc["strongest", "cost"]) == pytest.approx((1.0, 0.01))


def _weak_strong_matrix(test_cost: list[float]) -> Arrays:
    """Training part (8 tasks; costs m0 1, m1 2, m2 3): on x tasks m0 never right, m1 on half, m2 always; on y
    tasks m0 and m2 never, m1 always. So weak = m0 (the cheapest), strong = m1 (0.75 against m2's 0.5), and at
    λ = 0 the handbook sends x to m2 and y to m1. Test part (4 tasks, 2 x then 2 y): m1 always right, m2 on
    x only, m0 never; each model's cost is `test_cost`."""
    tr_y = [[0, 1, 1], [0, 0, 1], [0, 1, 1], [0, 0, 1]] + [[0, 1, 0]] * 4
    te_y = [[0, 1, 1], [0, 1, 1], [0, 1, 0], [0, 1, 0]]
    Y = by_split(12, 8, 0, tr_y, te_y)
    C = by_split(12, 8, 0, [[1.0, 2.0, 3.0]] * 8, [test_cost] * 4)
    tags = by_split(12, 8, 0, [["x"]] * 4 + [["y"]] * 4, [["x"]] * 2 + [["y"]] * 2)
    return arrays(Y, C, tags, ["q"] * 12)


def _cost_matched(A: Arrays) -> tuple:
    res = evaluate(A, n_train=8, seeds=[0], demand="tags", k_clusters=1, lambdas=(0.0,), default_lambda=0.0,
                   online=False)
    ps = res.per_seed.set_index("router")
    by = res.sweeps_by_seed
    assert by is not None
    sw = by[by["router"] == "random (cost-matched)"].sort_values("lambda")
    # the sweep points as [share, cost, quality, share, cost, quality, ...] in share order
    return ps, sw[["lambda", "cost", "quality"]].to_numpy(float).ravel().tolist()


def test_cost_matched_share_is_clipped_to_the_strong_model_and_its_line_ends_at_weak_and_strong():
    # on the test part m2 costs 100: ours (x → m2, y → m1) costs (2·100 + 2·2)/4 = 51, beyond the strong
    # model (m1, cost 2, quality 1); the weak model is (1, 0). The strong share (51 − 1)/(2 − 1) = 50 is
    # clipped to 1: the mixture is the strong model, not an extrapolation past it.
    ps, pts = _cost_matched(_weak_strong_matrix([1.0, 2.0, 100.0]))
    assert (ps.loc["ours", "cost"], ps.loc["ours", "quality"]) == pytest.approx((51.0, 1.0))
    assert (ps.loc["random (cost-matched)", "cost"], ps.loc["random (cost-matched)", "quality"]) == \
        pytest.approx((2.0, 1.0))
    # the line's sweep points: share 0 is the weak model, share 1 the strong one
    assert pts == pytest.approx([0.0, 1.0, 0.0, 1.0, 2.0, 1.0])


def test_cost_matched_share_is_clipped_to_the_weak_model():
    # on the test part m0 costs 5, m1 6, m2 0.1: ours costs (2·0.1 + 2·6)/4 = 3.05, below the weak model
    # (m0, cost 5, quality 0); the share (3.05 − 5)/(6 − 5) = −1.95 is clipped to 0: the weak model alone
    ps, pts = _cost_matched(_weak_strong_matrix([5.0, 6.0, 0.1]))
    assert ps.loc["ours", "cost"] == pytest.approx(3.05)
    assert (ps.loc["random (cost-matched)", "cost"], ps.loc["random (cost-matched)", "quality"]) == \
        pytest.approx((5.0, 0.0))
    assert pts == pytest.approx([0.0, 5.0, 0.0, 1.0, 6.0, 1.0])


def test_fractions_of_an_oracle_below_one():
    # training: m0 (cost 1) 1/3, m1 (cost 2) 3/3 → weak m0, strong m1 (ours picks m1 too). Test part: m0 right
    # on 1 of 4, m1 on 2, and on two tasks no model is right, so the oracle's quality is 1/2 (not 1, where a
    # fraction of it and the quality itself coincide): cheapest 0.25 → 0.5 of the oracle, gap 0.25;
    # strongest 0.5 → 1.0, gap 0; the single-model hull at ours' cost (m1's, 2) is m1's point, 0.5 → 1.0
    Y = by_split(7, 3, 0, [[1, 1], [0, 1], [0, 1]], [[1, 1], [0, 1], [0, 0], [0, 0]])
    res = evaluate(arrays(Y, [[1, 2]] * 7, [["x"]] * 7, ["q"] * 7), n_train=3, seeds=[0], demand="tags",
                   k_clusters=1, lambdas=(0.0,), online=False)
    ps = res.per_seed.set_index("router")
    assert ps.loc["oracle", "quality"] == 0.5 and ps.loc["ours", "cost"] == 2.0
    for r, q in (("cheapest", 0.25), ("strongest", 0.5), ("single-model hull", 0.5)):
        assert (ps.loc[r, "quality"], ps.loc[r, "frac_oracle_q"], ps.loc[r, "oracle_gap"]) == \
            pytest.approx((q, q / 0.5, 0.5 - q))


def test_every_swept_router_reports_its_point_at_the_default_lambda():
    # seed 0's training part (8 tasks): a right on 2 of its 4 x tasks, b on 2 of its 4 y tasks, c (10× a's cost)
    # on all; the test part (12): the same, 3 of 6 each. Utility acc − λ·cost/cost(c): at λ = 0 c wins everywhere
    # (1 against 0.5); at the default λ = 2, on x a (0.5 − 2·0.1 = 0.3) beats c (1 − 2 = −1), on y b
    # (0.5 − 2·0.2 = 0.1) beats a (0 − 0.2) and c. Each λ-swept router must report the λ = 2 point: x → a,
    # y → b: cost (6·0.001 + 6·0.002)/12 = 0.0015, quality 6/12; the sweep's only other point, λ = 0, is c's.
    x = "apple banana cherry"
    y = "dog elephant fox"
    half = [[1, 0, 1], [0, 0, 1]]
    tr = [(r, ["x"], x) for r in half * 2] + [([r[1], r[0], 1], ["y"], y) for r in half * 2]
    te = [(r, ["x"], x) for r in sorted(half * 3)] + [([r[1], r[0], 1], ["y"], y) for r in sorted(half * 3)]
    rows = by_split(N, 8, 0, tr, te)
    A = arrays([r[0] for r in rows], [COST] * N, [r[1] for r in rows], [f"{r[2]} item {i}" for i, r in enumerate(rows)])
    res = evaluate(A, n_train=8, seeds=[0], demand="tags", k_clusters=2, lambdas=(0.0,), default_lambda=2.0,
                   online=False, ablations=True, embed=FakeEmbedder("gguf"))
    ps = res.per_seed.set_index("router")
    by = res.sweeps_by_seed
    assert by is not None
    swept = ["ours", "ours − shrinkage (κ=0)", "ours − responsibility (whole credit)", "ours − per-skill cost",
             "cluster-best", "knn (gguf embeddings)", "cluster-best (gguf embeddings)", "ours (gguf embedding demand)"]
    for r in swept:
        assert (ps.loc[r, "cost"], ps.loc[r, "quality"]) == pytest.approx((0.0015, 0.5))
        at0 = by[(by["router"] == r) & (by["lambda"] == 0.0)].iloc[0]
        assert (at0["cost"], at0["quality"]) == pytest.approx((0.01, 1.0))


def test_ablations_with_demand_inferred_from_the_question_text():
    # demand="indicators": each ablation infers its test tasks' demand with its own handbook's indicators
    # (fruit words → x, animal words → y, learned on the training part), so at λ = 0.5 they route like the
    # tags (see the cost-matched test): x → a, y → b, quality 1, cost 0.0015 on seed 0's test part
    res = evaluate(specialists(), n_train=8, seeds=[0], k_clusters=2, lambdas=(0.5,), default_lambda=0.5,
                   online=False, ablations=True)
    ps = res.per_seed.set_index("router")
    for r in ("ours", "ours − shrinkage (κ=0)", "ours − responsibility (whole credit)", "ours − per-skill cost"):
        assert (ps.loc[r, "quality"], ps.loc[r, "cost"]) == pytest.approx((1.0, 0.0015))


def test_a_weak_to_strong_span_of_1e_15_usd_counts_as_none():
    # training: m0 (cost 1) 1/3, m1 (cost 2) 3/3 → weak m0, strong m1, and ours picks m1. On the test part m0
    # costs $0 and m1 $1e-15: a span at the 1e-15 guard is float noise, not a line to match a share on, so
    # the mixture is the weak model alone (cost 0, quality 0), not the strong share 1 that 1e-15/1e-15 gives
    Y = by_split(6, 3, 0, [[0, 1], [1, 1], [0, 1]], [[0, 1]] * 3)
    C = by_split(6, 3, 0, [[1.0, 2.0]] * 3, [[0.0, 1e-15]] * 3)
    res = evaluate(arrays(Y, C, [["x"]] * 6, ["q"] * 6), n_train=3, seeds=[0], demand="tags", k_clusters=1,
                   lambdas=(0.0,), online=False)
    ps = res.per_seed.set_index("router")
    assert (ps.loc["ours", "cost"], ps.loc["ours", "quality"]) == (1e-15, 1.0)
    assert (ps.loc["random (cost-matched)", "cost"], ps.loc["random (cost-matched)", "quality"]) == (0.0, 0.0)
