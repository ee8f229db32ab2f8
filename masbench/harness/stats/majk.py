"""Exact maj@k of one pool: the expected vote credit over *all* k-subsets, for every k ≤ n.

A pool holds n samples; sample i has an answer (or none, which never wins a vote) and the gold
answers are a set. For a k-subset S let ``c_a(S)`` count answer a, ``top`` the largest count and
T the answers at ``top``. maj@k is the mean of credit(S) over the C(n, k) subsets, where credit is
the share of the vote the gold answers win under the tie rule (:mod:`masbench.runtime.ties`).

Counting instead of enumerating: fix a gold answer g and its count v in S. Every other answer j
must have c_j ≤ v (< v if it would beat g on a tie). The number of ways is a product of
polynomials in x (x^c marks c samples taken), one per answer, and the coefficient of x^(k−v)
counts the subsets:

    ways(g, v, k) = C(n_g, v) · [x^(k−v)] (1+x)^(n_none) · Π_j f_j(x)

- ``split``: f_j(x) = Σ_{c<v} C(n_j,c) x^c + u · C(n_j,v) x^v, and the 1/t share is ∫₀¹ u^(t−1) du
  integrated exactly by Gauss–Legendre quadrature in u (the integrand is a polynomial in u).
- ``random``: answers above g in the cell's priority need c_j < v, those below c_j ≤ v (no u).
- ``first``: condition on the position p of the first gold-g sample taken; a j tied with g must
  lie wholly after p: f_j = Σ_{c<v} C(n_j,c) x^c + C(b_j,v) x^v, b_j = j-samples after p, and g
  contributes C(g-samples after p, v − 1).

maj@k = Σ_g Σ_v ways / C(n, k). Answers with n_j < v can never reach v, so they fold into the
(1+x) power; only the few large answers need explicit factors. Pure numpy, float64 (exact to
rounding for n ≤ 256).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ...runtime.ties import priority


@lru_cache(maxsize=64)
def _binom_row(n: int) -> np.ndarray:
    return np.array([float(math.comb(n, c)) for c in range(n + 1)])


@lru_cache(maxsize=256)
def _one_plus_x(n: int) -> np.ndarray:
    return _binom_row(n)


@lru_cache(maxsize=32)
def _gauss(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes/weights on [0, 1], exact for polynomials of degree ≤ 2m − 1."""
    x, w = np.polynomial.legendre.leggauss(max(1, m))
    return (x + 1) / 2, w / 2


def _mul(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    return np.convolve(a, b)[: n + 1]


def _capped(nj: int, v: int, top_coef: float) -> np.ndarray:
    """Σ_{c<v} C(nj, c) x^c + top_coef · x^v."""
    row = _binom_row(nj)
    f = np.zeros(v + 1)
    f[: min(v, nj + 1)] = row[: min(v, nj + 1)]
    f[v] = top_coef
    return f


def _finish(total: np.ndarray, n: int) -> np.ndarray:
    """Per-k credit (k = 1..n) from subset counts ``total[k]``."""
    return total[1:] / _binom_row(n)[1:]


@lru_cache(maxsize=4096)
def _split(n_g: int, others: tuple[int, ...], n_none: int) -> np.ndarray:
    """Expected 1/t-share of answer g (count n_g) per k, others = counts of the other answers."""
    n = n_g + sum(others) + n_none
    total = np.zeros(n + 1)
    for v in range(1, n_g + 1):
        big = [nj for nj in others if nj >= v]
        base = _one_plus_x(n_none + sum(nj for nj in others if nj < v))
        nodes, weights = _gauss((len(big) + 2) // 2 + 1)
        acc = np.zeros(n + 1)
        for u, w in zip(nodes, weights):
            poly = base
            for nj in big:
                poly = _mul(poly, _capped(nj, v, u * math.comb(nj, v)), n)
            acc[: len(poly)] += w * poly
        ways = math.comb(n_g, v) * acc
        total[v:] += ways[: n + 1 - v]
    return _finish(total, n)


@lru_cache(maxsize=4096)
def _priority(n_g: int, above: tuple[int, ...], below: tuple[int, ...], n_none: int) -> np.ndarray:
    """Win probability of g per k when ties go to the higher priority (``above`` beat g)."""
    n = n_g + sum(above) + sum(below) + n_none
    total = np.zeros(n + 1)
    for v in range(1, n_g + 1):
        poly = _one_plus_x(n_none + sum(nj for nj in above + below if nj < v))
        for nj in above:
            if nj >= v:
                poly = _mul(poly, _capped(nj, v, 0.0)[:v], n)
        for nj in below:
            if nj >= v:
                poly = _mul(poly, _capped(nj, v, math.comb(nj, v)), n)
        ways = math.comb(n_g, v) * poly
        total[v: v + len(ways)] += ways[: n + 1 - v]
    return _finish(total, n)


def _first(ids: np.ndarray, g: int) -> np.ndarray:
    """Win probability of g per k when ties go to the answer seen first (pool order)."""
    n = len(ids)
    labels = [int(a) for a in np.unique(ids) if a >= 0 and a != g]
    gpos = np.flatnonzero(ids == g)
    n_g = len(gpos)
    n_j = {j: int((ids == j).sum()) for j in labels}
    n_none = int((ids < 0).sum())
    total = np.zeros(n + 1)
    for i, p in enumerate(gpos):
        after_g = n_g - i - 1
        after = {j: int((ids[p + 1:] == j).sum()) for j in labels}
        for v in range(1, after_g + 2):
            small = sum(n_j[j] for j in labels if n_j[j] < v)
            poly = _one_plus_x(n_none + small)
            for j in labels:
                if n_j[j] >= v:
                    poly = _mul(poly, _capped(n_j[j], v, math.comb(after[j], v)), n)
            ways = math.comb(after_g, v - 1) * poly
            total[v: v + len(ways)] += ways[: n + 1 - v]
    return _finish(total, n)


def exact_majk(answers: Sequence[str | None], correct: Sequence[bool], tie: str = "split", *,
               seed: int = 0, task_id: str = "") -> np.ndarray:
    """maj@k for k = 1..n of one pool (index k − 1). ``answers``: normalized answers in pool order
    (None or "" = no answer); ``correct``: whether each sample is correct (an answer is gold if
    any sample giving it is correct). ``seed``/``task_id`` key the ``random`` rule's priority."""
    n = len(answers)
    if n == 0:
        return np.zeros(0)
    ids: dict[str, int] = {}
    arr = np.array([ids.setdefault(a, len(ids)) if a not in (None, "") else -1 for a in answers], dtype=np.int64)
    gold = sorted({ids[a] for a, c in zip(answers, correct) if c and a not in (None, "")})
    out = np.zeros(n)
    if not gold:
        return out
    counts = np.bincount(arr[arr >= 0], minlength=len(ids))
    n_none = int((arr < 0).sum())
    names = {i: a for a, i in ids.items()}
    for g in gold:
        others = [int(counts[j]) for j in range(len(ids)) if j != g]
        if tie == "split":
            out += _split(int(counts[g]), tuple(sorted(others)), n_none)
        elif tie == "random":
            pg = priority(seed, task_id, names[g])
            above = tuple(sorted(int(counts[j]) for j in range(len(ids))
                                 if j != g and priority(seed, task_id, names[j]) > pg))
            below = tuple(sorted(int(counts[j]) for j in range(len(ids))
                                 if j != g and priority(seed, task_id, names[j]) <= pg))
            out += _priority(int(counts[g]), above, below, n_none)
        elif tie == "first":
            out += _first(arr, g)
        else:
            raise ValueError(f"unknown tie rule {tie!r}")
    return np.clip(out, 0.0, 1.0)
