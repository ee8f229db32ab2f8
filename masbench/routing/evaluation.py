"""``masbench route eval``: routers compared on an outcome matrix (every model on every task).

Protocol: tasks are split at random into a training part (what a router may learn from: its
*learning cost* is what running every model on those tasks cost) and a test part; each router
chooses one model per test task; quality and cost are the chosen models' correctness and USD on
that task. Repeated over ``seeds`` splits and averaged. Metrics: see :mod:`.metrics`.

Routers (the baselines learn in :mod:`.baselines`; this module splits, routes and scores):

* ``strongest`` / ``cheapest`` — always the most accurate / cheapest model on the training part.
* ``random`` — uniform over the pool; ``random (cost-matched)`` — the weak/strong mixture with the
  same mean cost as ours at the default λ.
* ``single-model hull`` — random mixtures of single models (the hull of their points).
* ``cluster-best`` (Avengers) — k-means on TF-IDF vectors of the question (numpy, no embeddings);
  per cluster the model maximising accuracy − λ·relative cost.
* ``skillorchestra`` (as its code does it) — raw empirical rate per (model, skill) (0 for an
  unseen skill), each demanded skill credited with the whole outcome, cost per model only and used
  only to break ties (so λ changes nothing).
* ``ours`` — the handbook: Beta posteriors with hierarchical shrinkage, responsibility-weighted
  fractional credit, per-skill cost, split/merge, U = Σ w·E[p] − λ·E[c]; greedy over a λ sweep;
  ``ours (thompson, online)`` also learns from each test outcome as it goes.
* ``oracle`` — the cheapest correct model per task.

Skill demand of a test task is inferred from its question text with the indicators learned on the
training part (``demand="indicators"``, the realistic setting) or taken from its metadata tags
(``demand="tags"``). SkillOrchestra and ours get the same demand. In a one-call-per-task matrix
SkillOrchestra's "demand only on the first turn" cannot show; it does in multi-call designs.
Costs in utilities are *relative*: divided by the priciest model's mean cost per call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..spec.handbook import HandbookSpec
from .demand import IndicatorMatcher
from .embed import Embedder, EmbeddingDemand
from .handbook import compile_handbook
from .learn import learn_handbook
from .matrix import Arrays, to_arrays
from .metrics import aiq, apgr, cpt, entropy_of, hull_at, oracle_choice, pgr, upper_hull
from .router import SkillRouter, score_batch

LAMBDAS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
"""Default λ sweep (relative cost units)."""


from .baselines import (ClusterBest, KNNRouter, SkillOrchestraAsCoded, best_by_value,  # noqa: F401
                        embedding_vectors, kmeans, tfidf)


def _onehot(choice: np.ndarray, M: int) -> np.ndarray:
    P = np.zeros((len(choice), M))
    P[np.arange(len(choice)), choice] = 1.0
    return P


def _point(P: np.ndarray, te: Arrays) -> tuple[float, float]:
    return float((P * te.C).sum(1).mean()), float((P * te.Y).sum(1).mean())


@dataclass
class EvalResult:
    """Averaged metrics per router, the λ sweeps, and per-seed details."""

    table: pd.DataFrame
    sweeps: dict[str, pd.DataFrame]
    singles: pd.DataFrame
    per_seed: pd.DataFrame
    info: dict[str, Any] = field(default_factory=dict)
    sweeps_by_seed: pd.DataFrame | None = None
    """Every (seed, router, λ) point."""


def _demands(hb: HandbookSpec, te: Arrays, how: str) -> list[dict[str, float]]:
    if how == "tags":
        return [({s: 1 / len(t) for s in t} if t else {}) for t in te.skills]
    mt = IndicatorMatcher(hb.taxonomy)
    return [mt.demand(q) for q in te.questions]


def evaluate(matrix: pd.DataFrame | Arrays, *, n_train: int | float = 0.3, seeds: int | list[int] = 3,
             lambdas: tuple[float, ...] = LAMBDAS, default_lambda: float = 0.1, demand: str = "indicators",
             k_clusters: int = 8, shrinkage: float = 4.0, online: bool = True, max_test: int | None = None,
             ablations: bool = False, embed: Embedder | None = None, k_nn: int = 10) -> EvalResult:
    """Compare the routers; see the module docstring. With ``embed`` (an :mod:`.embed` backend)
    also: k-NN and cluster-best on embeddings, and ours with the demand from the embeddings'
    nearest training tasks (``ours (embedding demand)``)."""
    A = matrix if isinstance(matrix, Arrays) else to_arrays(matrix)
    n, M = A.Y.shape
    if M < 2:
        raise ValueError("routing needs at least two models in the matrix")
    ntr = int(round(n_train * n)) if isinstance(n_train, float) and n_train < 1 else int(n_train)
    if not 2 <= ntr < n:
        raise ValueError(f"n_train={n_train} leaves {ntr} training and {n - ntr} test tasks of {n}")
    lams = sorted(set(float(x) for x in lambdas) | {float(default_lambda)})
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    rows: list[dict[str, Any]] = []
    sweep_rows: list[dict[str, Any]] = []
    single_rows: list[dict[str, Any]] = []
    for seed in seed_list:
        perm = np.random.default_rng(seed).permutation(n)
        tr, te = A.subset(perm[:ntr]), A.subset(perm[ntr:] if max_test is None else perm[ntr:ntr + max_test])
        learn_cost = float(tr.C.sum())
        acc_tr, cost_tr = tr.Y.mean(0), tr.C.mean(0)
        i_strong = int(np.lexsort((cost_tr, -acc_tr))[0])
        i_weak = int(np.lexsort((-acc_tr, cost_tr))[0])
        qs, cs = te.Y.mean(0), te.C.mean(0)
        c_max = float(cs.max())
        weak, strong = (float(cs[i_weak]), float(qs[i_weak])), (float(cs[i_strong]), float(qs[i_strong]))
        for j, m in enumerate(A.models):
            single_rows.append({"seed": seed, "model": m, "quality": qs[j], "cost": cs[j]})
        res: dict[str, dict[str, Any]] = {}

        def add(name: str, Ps: dict[float, np.ndarray], default: float | None, lcost: float | None) -> None:
            pts = {lam: _point(P, te) for lam, P in Ps.items()}
            d = default if default in Ps else next(iter(Ps))
            res[name] = {"points": pts, "P": Ps[d], "lcost": lcost}
            for lam, (c, q) in pts.items():
                sweep_rows.append({"seed": seed, "router": name, "lambda": lam, "cost": c, "quality": q,
                                   "entropy_norm": entropy_of(Ps[lam].mean(0))[1],
                                   "top_share": float(Ps[lam].mean(0).max())})

        add("strongest", {0.0: _onehot(np.full(len(te.Y), i_strong), M)}, 0.0, learn_cost)
        add("cheapest", {0.0: _onehot(np.full(len(te.Y), i_weak), M)}, 0.0, learn_cost)
        add("random", {0.0: np.full((len(te.Y), M), 1.0 / M)}, 0.0, 0.0)
        # ours
        hb = learn_handbook(tr, name="eval", shrinkage=shrinkage, cost_unit="relative")
        ch = compile_handbook(hb, tr.models)
        dem = _demands(hb, te, demand)
        Wte = np.stack([ch.demand_vector(d) for d in dem])
        ours = {lam: _onehot(score_batch(ch, Wte, lam, "greedy").choice, M) for lam in lams}
        add("ours", ours, default_lambda, learn_cost)
        if online:
            # Thompson sampling that also learns from each test outcome as it arrives
            r = SkillRouter(compile_handbook(hb, tr.models), lambda_=default_lambda, strategy="thompson", seed=seed)
            choice = np.zeros(len(te.Y), dtype=int)
            for i in range(len(te.Y)):
                dec = r.decide(dem[i])
                choice[i] = dec.model_index
                r.observe(dec, te.Y[i, dec.model_index], te.C[i, dec.model_index])
            add("ours (thompson, online)", {default_lambda: _onehot(choice, M)}, default_lambda, learn_cost)
        if ablations:
            variants = {
                "ours − shrinkage (κ=0)": learn_handbook(tr, name="eval", shrinkage=0.0, cost_unit="relative"),
                "ours − responsibility (whole credit)": learn_handbook(tr, name="eval", shrinkage=shrinkage,
                                                                        cost_unit="relative", credit_mode="whole"),
                "ours − per-skill cost": hb,
            }
            for vname, vhb in variants.items():
                vch = compile_handbook(vhb, tr.models)
                if vname.endswith("per-skill cost"):
                    vch.cost = np.repeat(vch.cost[:, :1], vch.cost.shape[1], axis=1)
                vW = np.stack([vch.demand_vector(d) for d in _demands(vhb, te, demand)])
                add(vname, {lam: _onehot(score_batch(vch, vW, lam, "greedy").choice, M) for lam in lams},
                    default_lambda, learn_cost)
        so = SkillOrchestraAsCoded().fit(tr, hb)
        so_choice = so.route(dem)
        add("skillorchestra (as coded)", {lam: _onehot(so_choice, M) for lam in lams}, default_lambda, learn_cost)
        cb = ClusterBest(k=k_clusters, seed=seed).fit(tr).route(te, lams)
        add("cluster-best", {lam: _onehot(c, M) for lam, c in cb.items()}, default_lambda, learn_cost)
        if embed is not None:
            vec = embedding_vectors(embed)
            kn = KNNRouter(vec, k=k_nn).fit(tr).route(te, lams)
            add(f"knn ({embed.name} embeddings)", {lam: _onehot(c, M) for lam, c in kn.items()}, default_lambda,
                learn_cost)
            cbe = ClusterBest(k=k_clusters, seed=seed, vectors=vec).fit(tr).route(te, lams)
            add(f"cluster-best ({embed.name} embeddings)", {lam: _onehot(c, M) for lam, c in cbe.items()},
                default_lambda, learn_cost)
            edem = EmbeddingDemand(embed).fit(tr.questions, tr.skills).demands(te.questions)
            We = np.stack([ch.demand_vector(d) for d in edem])
            add(f"ours ({embed.name} embedding demand)",
                {lam: _onehot(score_batch(ch, We, lam, "greedy").choice, M) for lam in lams}, default_lambda,
                learn_cost)
        oc = oracle_choice(te.Y, te.C)
        add("oracle", {0.0: _onehot(oc, M)}, 0.0, None)
        # cost-matched random: weak/strong mixture at ours' default cost
        c_ours = res["ours"]["points"][default_lambda][0]
        span = strong[0] - weak[0]
        pi = float(np.clip((c_ours - weak[0]) / span, 0, 1)) if abs(span) > 1e-15 else 0.0
        def mix_p(x: float) -> np.ndarray:
            P = np.zeros((len(te.Y), M))
            P[:, i_weak] += 1 - x
            P[:, i_strong] += x
            return P

        # keys are the strong share here (not λ): the weak→strong line, matched at ours' cost
        add("random (cost-matched)", {0.0: mix_p(0.0), 1.0: mix_p(1.0), pi: mix_p(pi)}, pi, 0.0)
        single_pts = [(float(cs[j]), float(qs[j])) for j in range(M)]
        q_or = res["oracle"]["points"][0.0][1]
        aiq_or = aiq(list(res["oracle"]["points"].values()), c_max)
        for name, r_ in res.items():
            pts = list(r_["points"].values())
            c0, q0 = _point(r_["P"], te)
            h, hn = entropy_of(r_["P"].mean(0))
            a = aiq(pts, c_max)
            rows.append({"seed": seed, "router": name, "quality": q0, "cost": c0, "aiq": a,
                         "apgr": apgr(pts, weak, strong), "cpt50": cpt(pts, weak, strong, 0.5),
                         "cpt80": cpt(pts, weak, strong, 0.8), "pgr": float(pgr(q0, weak[1], strong[1])),
                         "oracle_gap": q_or - q0, "frac_oracle_q": q0 / q_or if q_or > 0 else np.nan,
                         "frac_oracle_aiq": a / aiq_or if aiq_or > 0 else np.nan,
                         "entropy": h, "entropy_norm": hn, "top_share": float(r_["P"].mean(0).max()),
                         "learning_cost": r_["lcost"]})
        # the hull of single models
        hull = upper_hull(single_pts)
        a = aiq(single_pts, c_max)
        q_at = float(hull_at(hull, c_ours))
        rows.append({"seed": seed, "router": "single-model hull", "quality": q_at, "cost": c_ours, "aiq": a,
                     "apgr": apgr(single_pts, weak, strong), "cpt50": cpt(single_pts, weak, strong, 0.5),
                     "cpt80": cpt(single_pts, weak, strong, 0.8), "pgr": float(pgr(q_at, weak[1], strong[1])),
                     "oracle_gap": q_or - q_at, "frac_oracle_q": q_at / q_or if q_or > 0 else np.nan,
                     "frac_oracle_aiq": a / aiq_or if aiq_or > 0 else np.nan, "entropy": np.nan,
                     "entropy_norm": np.nan, "top_share": np.nan, "learning_cost": learn_cost})
    per_seed = pd.DataFrame(rows)
    order = ["oracle", "ours", "ours (thompson, online)", "ours − shrinkage (κ=0)", "ours − responsibility (whole credit)",
             "ours − per-skill cost", "ours (gguf embedding demand)", "ours (minilm embedding demand)",
             "skillorchestra (as coded)", "cluster-best", "cluster-best (gguf embeddings)",
             "cluster-best (minilm embeddings)", "knn (gguf embeddings)", "knn (minilm embeddings)",
             "single-model hull", "strongest", "cheapest", "random", "random (cost-matched)"]
    table = per_seed.drop(columns="seed").groupby("router", sort=False).mean(numeric_only=True)
    table["aiq_sd"] = per_seed.groupby("router", sort=False)["aiq"].std()
    table = table.reindex([o for o in order if o in table.index] + [r for r in table.index if r not in order]).reset_index()
    sw = pd.DataFrame(sweep_rows)
    sweeps = {str(r): g.groupby("lambda").mean(numeric_only=True).drop(columns="seed").reset_index()
              for r, g in sw.groupby("router", sort=False)}
    singles = pd.DataFrame(single_rows).groupby("model").mean(numeric_only=True).drop(columns="seed").reset_index()
    info = {"tasks": n, "models": list(A.models), "n_train": ntr, "n_test": n - ntr if max_test is None else
            min(max_test, n - ntr), "seeds": seed_list, "demand": demand, "default_lambda": default_lambda,
            "k_clusters": k_clusters, "lambdas": lams}
    return EvalResult(table, sweeps, singles, per_seed, info, sw)


def format_table(res: EvalResult, simulated: bool = False) -> str:
    """A plain-text metrics table."""
    t = res.table
    head = (f"{'router':<37}{'quality':>8}{'cost/task $':>13}{'AIQ':>8}{'APGR':>7}{'CPT50':>7}{'CPT80':>7}"
            f"{'PGR':>7}{'gap':>7}{'q/orc':>7}{'AIQ/orc':>8}{'H bits':>7}{'H norm':>7}{'learn $':>10}")
    lines = []
    if simulated:
        lines.append("SIMULATED — sim/ models with known competence; not measurements of real models")
    lines.append(head)
    lines.append("-" * len(head))

    def f(x, fmt):
        return "—" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, fmt)

    for _, r in t.iterrows():
        lines.append(f"{r['router']:<37}{f(r['quality'], '.3f'):>8}{f(r['cost'], '.6f'):>13}{f(r['aiq'], '.4f'):>8}"
                     f"{f(r['apgr'], '.3f'):>7}{f(r['cpt50'], '.2f'):>7}{f(r['cpt80'], '.2f'):>7}{f(r['pgr'], '.2f'):>7}"
                     f"{f(r['oracle_gap'], '.3f'):>7}{f(r['frac_oracle_q'], '.3f'):>7}{f(r['frac_oracle_aiq'], '.3f'):>8}"
                     f"{f(r['entropy'], '.2f'):>7}{f(r['entropy_norm'], '.2f'):>7}{f(r['learning_cost'], '.4f'):>10}")
    i = res.info
    lines.append(f"tasks {i['tasks']} (train {i['n_train']}, test {i['n_test']}) × models {len(i['models'])}; "
                 f"seeds {i['seeds']}; demand from {i['demand']}; default λ = {i['default_lambda']} (relative cost); "
                 f"cluster-best k = {i['k_clusters']}")
    return "\n".join(lines)


def format_sweep(res: EvalResult, router: str = "ours") -> str:
    sw = res.sweeps[router]
    lines = [f"λ sweep ({router}; cost relative to the priciest model):", f"{'lambda':>8}{'cost/task $':>14}{'quality':>9}{'H norm':>8}"]
    for _, r in sw.iterrows():
        lines.append(f"{r['lambda']:>8.3g}{r['cost']:>14.6f}{r['quality']:>9.3f}{r['entropy_norm']:>8.2f}")
    return "\n".join(lines)


def plot_pareto(res: EvalResult, path, title: str = "Routers: cost vs quality", simulated: bool = False):
    """Pareto plot: the λ sweeps, single models, and the point routers. Returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5))
    s = res.singles
    ax.scatter(s["cost"], s["quality"], marker="s", color="grey", label="single models", zorder=3)
    for _, r in s.iterrows():
        ax.annotate(r["model"], (r["cost"], r["quality"]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    styles = {"ours": ("C0", "o-"), "cluster-best": ("C1", "^-"), "skillorchestra (as coded)": ("C3", "D"),
              "random (cost-matched)": ("C7", ":"), "oracle": ("k", "*"), "ours (thompson, online)": ("C2", "P")}
    for name, (col, st) in styles.items():
        if name not in res.sweeps:
            continue
        sw = res.sweeps[name]
        sw = sw.sort_values("cost")
        ax.plot(sw["cost"], sw["quality"], st, color=col, label=name, ms=6 if st != "*" else 12)
    ax.set_xscale("symlog", linthresh=max(float(s["cost"].min()), 1e-9))
    ax.set_xlabel("mean cost per task (USD)")
    ax.set_ylabel("accuracy")
    ax.set_title(("SIMULATED — " if simulated else "") + title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
