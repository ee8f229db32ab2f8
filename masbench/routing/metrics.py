"""Router metrics. A router is judged by its (cost, quality) point(s) on a test set:
quality = mean correctness of the chosen models, cost = mean USD per task of the chosen models.

* **Hull** — a set of (cost, quality) points can be mixed at random per call, so every router is
  credited with the *non-decreasing upper convex hull* of its points plus the origin (0, 0)
  ("answer nothing": no cost, no quality), extended flat to the right of its best point.
* **AIQ** (RouterBench) = (1/c_max)·∫₀^{c_max} hull(c) dc, with c_max the mean cost of the
  priciest single model on the same tasks (one c_max for all routers compared).
* **PGR** (RouteLLM) = (q − q_weak)/(q_strong − q_weak), with *weak* = the cheapest single model
  and *strong* = the most accurate single model (chosen on training data, measured on test).
* **APGR** = ∫₀¹ PGR_hull(x) dx, where x = (c − c_weak)/(c_strong − c_weak) is the cost fraction
  (for a two-model pool this is the share of calls to the strong model) and PGR_hull is the
  non-decreasing upper hull of the router's (x, PGR) points plus the all-weak point (0, 0).
* **CPT(p)** = the smallest cost fraction x at which PGR_hull reaches p (p = 0.5, 0.8); NaN if never.
* **Oracle** = per task, the cheapest model that is correct (the cheapest model if none is):
  quality = share of tasks some model solves. **Gap to the oracle** = q_oracle − q (points), and
  the fraction q / q_oracle; likewise AIQ / AIQ_oracle.
* **Routing entropy** = −Σ_m π_m log₂ π_m over the share π_m of calls sent to each model (bits),
  and normalised by log₂(#models): 0 = collapse onto one model, 1 = uniform.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np


def upper_hull(points: Iterable[Sequence[float]], origin: tuple[float, float] | None = (0.0, 0.0)) -> np.ndarray:
    """Vertices (sorted by x) of the non-decreasing upper convex hull of the points (+ origin)."""
    pts = [(float(x), float(y)) for x, y in points if np.isfinite(x) and np.isfinite(y)]
    if origin is not None:
        pts.append(origin)
    if not pts:
        return np.zeros((0, 2))
    pts = sorted(set(pts))
    hull: list[tuple[float, float]] = []
    for p in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            # pop hull[-1] if it is on or below the segment hull[-2] → p
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) >= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    # keep it non-decreasing: cut after the highest vertex
    ys = [h[1] for h in hull]
    top = int(np.argmax(ys))
    return np.array(hull[:top + 1])


def hull_at(hull: np.ndarray, x: np.ndarray | float) -> np.ndarray:
    """The hull as a function: linear between vertices, flat after the last, and −inf before the first."""
    x = np.asarray(x, dtype=float)
    if len(hull) == 0:
        return np.full_like(x, np.nan)
    y = np.interp(x, hull[:, 0], hull[:, 1], left=-np.inf, right=hull[-1, 1])
    return y


_trapezoid = getattr(np, "trapezoid", None) or getattr(np, "trapz")
"""The trapezoid rule: ``np.trapezoid`` (NumPy 2), ``np.trapz`` before it."""


def area_under(hull: np.ndarray, x0: float, x1: float, n: int = 4001) -> float:
    """∫_{x0}^{x1} hull(x) dx / (x1 − x0), exact for piecewise-linear (breakpoints included)."""
    if x1 <= x0 or len(hull) == 0:
        return float("nan")
    xs = np.unique(np.concatenate([np.linspace(x0, x1, n), hull[:, 0][(hull[:, 0] > x0) & (hull[:, 0] < x1)]]))
    ys = hull_at(hull, xs)
    ys = np.where(np.isfinite(ys), ys, 0.0)
    return float(_trapezoid(ys, xs) / (x1 - x0))


def aiq(points: Iterable[Sequence[float]], c_max: float) -> float:
    """AIQ: area under the non-decreasing convex hull of (cost, quality) points ∪ {(0,0)} on [0, c_max], / c_max."""
    return area_under(upper_hull(points), 0.0, c_max)


def pgr(q: float | np.ndarray, q_weak: float, q_strong: float) -> float | np.ndarray:
    """Performance gap recovered."""
    d = q_strong - q_weak
    return (np.asarray(q) - q_weak) / d if abs(d) > 1e-12 else np.asarray(q) * np.nan


def pgr_hull(points: Iterable[Sequence[float]], weak: tuple[float, float], strong: tuple[float, float]) -> np.ndarray:
    """Hull in (cost fraction, PGR) coordinates, with the all-weak point (0, 0)."""
    (cw, qw), (cs, qs) = weak, strong
    span = cs - cw if abs(cs - cw) > 1e-15 else 1.0
    pts = [((c - cw) / span, float(pgr(q, qw, qs))) for c, q in points]
    return upper_hull(pts, origin=(0.0, 0.0))


def apgr(points, weak, strong) -> float:
    """Area under the PGR hull over cost fraction 0..1."""
    return area_under(pgr_hull(points, weak, strong), 0.0, 1.0)


def cpt(points, weak, strong, target: float) -> float:
    """Smallest cost fraction in [0, 1] where the PGR hull reaches ``target`` (NaN if never)."""
    h = pgr_hull(points, weak, strong)
    xs = np.linspace(0.0, 1.0, 2001)
    ys = hull_at(h, xs)
    ok = np.nonzero(ys >= target - 1e-12)[0]
    return float(xs[ok[0]]) if len(ok) else float("nan")


def routing_entropy(choices: np.ndarray | Sequence[int], n_models: int) -> tuple[float, float]:
    """(entropy in bits, normalised by log2(n_models)) of the chosen-model distribution."""
    c = np.asarray(choices)
    if c.size == 0 or n_models <= 1:
        return 0.0, 0.0
    _, counts = np.unique(c, return_counts=True)
    p = counts / counts.sum()
    h = 0.0 - float((p * np.log2(p)).sum())  # 0.0 − x: a collapse is 0.0 bits, not −0.0 (printed "-0.00")
    return h, h / math.log2(n_models)


def entropy_of(probs: np.ndarray) -> tuple[float, float]:
    """Entropy of a probability vector over models (bits, normalised)."""
    p = np.asarray(probs, dtype=float)
    p = p[p > 0] / p.sum()
    h = 0.0 - float((p * np.log2(p)).sum())  # 0.0 − x: a collapse is 0.0 bits, not −0.0 (printed "-0.00")
    n = len(np.asarray(probs))
    return h, (h / math.log2(n) if n > 1 else 0.0)


def oracle_choice(Y: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Per task, the cheapest correct model (the cheapest model if none is correct)."""
    Cc = np.where(Y > 0.5, C, np.inf)
    pick = np.argmin(Cc, axis=1)
    none = ~np.isfinite(Cc.min(axis=1))
    return np.where(none, np.argmin(C, axis=1), pick)
