"""The simulated pool study (SIMULATED: sim/ models with known per-skill competence and prices).

Must show: learned competence converges to the true values (with a bound); ours beats
SkillOrchestra-as-coded and cluster-best on AIQ and is within a fraction of the oracle; cost is
monotone along the λ sweep; routing entropy shows no collapse onto one model."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest

from masbench.routing import compile_handbook, learn_handbook, to_arrays
from masbench.routing.evaluation import evaluate, format_table
from masbench.routing.matrix import aexplore
from masbench.routing.study import SKILLS, competence_error, study_pool, study_tasks

N_TASKS = 500


@pytest.fixture(scope="module")
def matrix():
    """Every study model on every study task, through the Gateway (seeded, so deterministic)."""
    df = asyncio.run(aexplore(study_pool(), study_tasks(N_TASKS, seed=0), max_tokens=512))
    assert df["simulated"].all() and df["error"].isna().all()
    return df


@pytest.fixture(scope="module")
def result(matrix):
    return evaluate(matrix, n_train=60, seeds=3, default_lambda=0.1)


def test_learned_competence_converges_to_the_truth_within_a_bound(matrix):
    A = to_arrays(matrix)
    kappa, delta = 4.0, 0.01
    K = len(A.models) * len(SKILLS)
    errs = {}
    for n in (50, N_TASKS):
        hb = learn_handbook(A.subset(np.arange(n)), name="conv", shrinkage=kappa, do_refine=False)
        err = competence_error(hb)
        ch = compile_handbook(hb)
        n_eff = np.array([[ch.pooled(ch.wins + ch.losses)[i, ch.index[s]] for s in SKILLS] for i in range(len(ch.models))])
        # Hoeffding (δ = 1%, union bound over the model×skill pairs) + the shrinkage bias κ/(n + κ)
        bound = np.sqrt(math.log(2 * K / delta) / (2 * n_eff)) + kappa / (n_eff + kappa)
        assert (err <= bound).all(), (n, err.max(), bound.min())
        errs[n] = err
    assert errs[N_TASKS].mean() < 0.5 * errs[50].mean()
    assert errs[N_TASKS].mean() < 0.05 and errs[N_TASKS].max() < 0.15


def test_ours_beats_skillorchestra_as_coded_and_cluster_best_on_aiq(result):
    print("\n" + format_table(result, simulated=True))
    t = result.table.set_index("router")
    ours = t.loc["ours", "aiq"]
    assert ours > t.loc["skillorchestra (as coded)", "aiq"] + 0.1
    assert ours > t.loc["cluster-best", "aiq"] + 0.01
    assert ours > t.loc["single-model hull", "aiq"]
    # and per split, not only on average
    ps = result.per_seed.pivot(index="seed", columns="router", values="aiq")
    assert (ps["ours"] > ps["cluster-best"]).all() and (ps["ours"] > ps["skillorchestra (as coded)"]).all()
    frac = t.loc["ours", "frac_oracle_aiq"]
    print(f"ours reaches {frac:.1%} of the oracle's AIQ (SIMULATED)")
    assert frac >= 0.8
    assert t.loc["ours", "apgr"] > t.loc["random (cost-matched)", "apgr"]
    assert t.loc["ours", "learning_cost"] > 0 and t.loc["random", "learning_cost"] == 0


def test_cost_is_monotone_along_the_lambda_sweep(result):
    by_seed = result.sweeps_by_seed
    for _seed, g in by_seed[by_seed["router"] == "ours"].groupby("seed"):
        c = g.sort_values("lambda")["cost"].to_numpy()
        assert (np.diff(c) <= 1e-12).all(), c
    sw = result.sweeps["ours"].sort_values("lambda")
    cost = sw["cost"].to_numpy()
    assert (np.diff(cost) <= 1e-12).all(), cost
    assert cost[0] > 10 * cost[-1]  # λ actually trades cost (unlike SkillOrchestra's tie-break)
    so = result.sweeps["skillorchestra (as coded)"]["cost"].to_numpy()
    assert np.ptp(so) == 0


def test_routing_entropy_no_collapse(result):
    t = result.table.set_index("router")
    assert t.loc["ours", "entropy_norm"] > 0.35
    # at the default λ no model gets more than 80% of the calls, and none at any λ gets all
    assert t.loc["ours", "top_share"] < 0.8
    assert (result.sweeps["ours"]["top_share"] < 0.99).all()
