"""The baseline routers ``masbench route eval`` compares ours against (see :mod:`.evaluation`):
cluster-best (Avengers) on TF-IDF or embedding vectors, k-NN on embeddings, and SkillOrchestra as
its code does it. Each learns from a training part of an outcome matrix and picks one model per
test task."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..spec.handbook import HandbookSpec
from .demand import STOPWORDS, tokens
from .embed import Embedder
from .handbook import compile_handbook
from .learn import tag_matrix
from .matrix import Arrays


# ----- cluster-best (Avengers) ---------------------------------------------------------------------
def tfidf(train: list[str], test: list[str], min_df: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """L2-normalised TF-IDF vectors (vocabulary and idf from ``train``)."""
    toks_tr = [[t for t in tokens(q) if t not in STOPWORDS] for q in train]
    toks_te = [[t for t in tokens(q) if t not in STOPWORDS] for q in test]
    df: dict[str, int] = {}
    for ts in toks_tr:
        for t in set(ts):
            df[t] = df.get(t, 0) + 1
    vocab = {t: i for i, t in enumerate(sorted(t for t, c in df.items() if c >= min_df))}
    if not vocab:
        vocab = {t: i for i, t in enumerate(sorted(df))}
    n = max(len(train), 1)
    idf = np.zeros(len(vocab))
    for t, i in vocab.items():
        idf[i] = math.log((1 + n) / (1 + df[t])) + 1.0

    def vec(tok_lists: list[list[str]]) -> np.ndarray:
        X = np.zeros((len(tok_lists), len(vocab)))
        for r, ts in enumerate(tok_lists):
            for t in ts:
                j = vocab.get(t)
                if j is not None:
                    X[r, j] += 1.0
        X = np.log1p(X) * idf
        nrm = np.linalg.norm(X, axis=1, keepdims=True)
        return X / np.where(nrm > 0, nrm, 1.0)

    return vec(toks_tr), vec(toks_te)


def kmeans(X: np.ndarray, k: int, seed: int = 0, iters: int = 50, restarts: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """k-means++ with a few restarts (best inertia). Returns (centroids, labels)."""
    rng = np.random.default_rng(seed)
    n = len(X)
    k = max(1, min(k, n))
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(restarts):
        cent = [X[rng.integers(n)]]
        for _j in range(1, k):
            d2 = np.min(((X[:, None, :] - np.array(cent)[None]) ** 2).sum(-1), axis=1)
            p = d2 / d2.sum() if d2.sum() > 0 else np.full(n, 1 / n)
            cent.append(X[rng.choice(n, p=p)])
        Cm = np.array(cent)
        lab = np.zeros(n, dtype=np.intp)  # every point in cluster 0 until the first assignment
        for _it in range(iters):
            d = ((X[:, None, :] - Cm[None]) ** 2).sum(-1)
            lab = d.argmin(1)
            new = np.array([X[lab == j].mean(0) if (lab == j).any() else Cm[j] for j in range(k)])
            if np.allclose(new, Cm):
                break
            Cm = new
        inertia = float(((X - Cm[lab]) ** 2).sum())
        if best is None or inertia < best[0]:
            best = (inertia, Cm, lab)
    assert best is not None  # at least one restart ran
    return best[1], best[2]


@dataclass
class ClusterBest:
    """Avengers-style router: TF-IDF k-means clusters as skills; best model per cluster."""

    k: int = 8
    seed: int = 0

    def fit(self, tr: Arrays) -> "ClusterBest":
        self.tr = tr
        return self

    vectors: Callable[[list[str], list[str]], tuple[np.ndarray, np.ndarray]] = tfidf
    """Question vectors (train, test): TF-IDF by default, or embeddings (:func:`embedding_vectors`)."""

    def route(self, te: Arrays, lams: list[float]) -> dict[float, np.ndarray]:
        Xtr, Xte = self.vectors(self.tr.questions, te.questions)
        cent, lab = kmeans(Xtr, self.k, self.seed)
        assign = ((Xte[:, None, :] - cent[None]) ** 2).sum(-1).argmin(1)
        K = len(cent)
        acc = np.zeros((K, self.tr.Y.shape[1]))
        cost = np.zeros_like(acc)
        for j in range(K):
            m = lab == j
            acc[j] = self.tr.Y[m].mean(0) if m.any() else self.tr.Y.mean(0)
            cost[j] = self.tr.C[m].mean(0) if m.any() else self.tr.C.mean(0)
        return {lam: c[assign] for lam, c in best_by_value(acc, cost, self.tr.C, lams).items()}


def best_by_value(acc: np.ndarray, cost: np.ndarray, C_train: np.ndarray, lams: list[float]) -> dict[float, np.ndarray]:
    """Per row (a cluster, or a test task's neighbourhood), the model maximising accuracy − λ·relative
    cost; ties go to the cheaper model. Cost is relative to the priciest model's training mean."""
    scale = max(float(C_train.mean(0).max()), 1e-12)
    out = {}
    order = np.argsort(cost, axis=1, kind="stable")
    for lam in lams:
        u = acc - lam * cost / scale
        out[lam] = np.take_along_axis(order, np.argmax(np.take_along_axis(u, order, 1), 1)[:, None], 1)[:, 0]
    return out


def embedding_vectors(emb: Embedder) -> Callable[[list[str], list[str]], tuple[np.ndarray, np.ndarray]]:
    """``vectors`` for :class:`ClusterBest` / :class:`KNNRouter` from an embedder."""
    return lambda tr, te: (emb.embed(tr), emb.embed(te))


@dataclass
class KNNRouter:
    """k-NN routing: a test task gets the model with the best accuracy − λ·cost over its k nearest
    training tasks (cosine similarity of the question vectors, similarity-weighted)."""

    vectors: Callable[[list[str], list[str]], tuple[np.ndarray, np.ndarray]]
    k: int = 10

    def fit(self, tr: Arrays) -> "KNNRouter":
        self.tr = tr
        return self

    def route(self, te: Arrays, lams: list[float]) -> dict[float, np.ndarray]:
        Xtr, Xte = self.vectors(self.tr.questions, te.questions)
        S = Xte @ Xtr.T
        k = min(self.k, S.shape[1])
        nn = np.argsort(-S, axis=1, kind="stable")[:, :k]
        w = np.maximum(np.take_along_axis(S, nn, 1), 1e-6)
        w = w / w.sum(1, keepdims=True)
        acc = np.einsum("nk,nkm->nm", w, self.tr.Y[nn])
        cost = np.einsum("nk,nkm->nm", w, self.tr.C[nn])
        return best_by_value(acc, cost, self.tr.C, lams)


# ----- SkillOrchestra as coded ----------------------------------------------------------------------
@dataclass
class SkillOrchestraAsCoded:
    """Raw empirical rates (0 when unseen), whole outcome to each skill, cost per agent, cost only
    breaks ties."""

    def fit(self, tr: Arrays, hb: HandbookSpec) -> "SkillOrchestraAsCoded":
        self.ch = compile_handbook(hb.model_copy(update={"taxonomy": {k: v.model_copy(update={"active": True})
                                                                        for k, v in hb.taxonomy.items()}}), tr.models)
        W = tag_matrix(self.ch, tr.skills)
        act = (W > 0).astype(float)
        wins = act.T @ tr.Y          # (S, M)
        n = act.sum(0)[:, None]
        self.rate = np.where(n > 0, wins / np.maximum(n, 1e-12), 0.0).T  # (M, S)
        self.rate[:, 0] = tr.Y.mean(0)  # the "no skill matched" case: overall rate
        self.cost = tr.C.mean(0)
        return self

    def route(self, demands: list[dict[str, float]]) -> np.ndarray:
        W = tag_matrix(self.ch, [list(d) for d in demands], demands)
        score = W @ self.rate.T
        order = np.argsort(self.cost, kind="stable")
        s = score[:, order]
        best = np.argmax(s >= s.max(1, keepdims=True) - 1e-12, axis=1)  # first (cheapest) of the tied best
        return order[best]


# ----- the evaluation -------------------------------------------------------------------------------
