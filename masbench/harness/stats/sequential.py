"""Anytime-valid paired tests: a betting confidence sequence for a mean difference in [−1, 1].

The per-task paired differences d_1, d_2, … (design − curve, each in [−1, 1]) arrive in a seeded
random order. Map them to x = (d + 1)/2 ∈ [0, 1] and, for every candidate mean m of x (a grid over
[0, 1], μ = 2m − 1 on the difference scale), bet on x against m (Waudby-Smith & Ramdas, "Estimating
means of bounded random variables by betting", JRSS-B 2024, the *hedged capital* process):

    K⁺_t(m) = Π_{i≤t} (1 + λ⁺_i(m)·(x_i − m)),   K⁻_t(m) = Π_{i≤t} (1 − λ⁻_i(m)·(x_i − m))
    K_t(m)  = ½ K⁺_t(m) + ½ K⁻_t(m)

with bets λ±_i ∈ [0, c/m] resp. [0, c/(1 − m)] (c = ½) chosen from x_1 … x_{i−1} only
(predictable). Every factor is ≥ 1 − c = ½ > 0, so under the hypothesis "the mean of x is m"
(E[x_i | past] = m) K_t(m) is a nonnegative martingale with K_0 = 1, and by Ville's inequality
P(∃t: K_t(m) ≥ 1/α) ≤ α: the set {m: max_{s≤t} K_s(m) < 1/α} (the running intersection) is a
(1 − α) confidence sequence — it covers the true mean at every t simultaneously, hence at any
stopping time, however the stopping is chosen — and p_t = min(1, 1/max_{s≤t} K_s(½)) is an
anytime-valid p-value of "no difference" (P(∃t: p_t ≤ α) ≤ α). The interval at level 1 − α
excludes 0 when p_t ≤ α, up to the grid (it is widened by one grid step each way, so a 0 rejected
while its neighbour is not still touches the interval): the bets do not depend on the level (they
are tuned once, at ``alpha``), so one capital process gives every level.

Bets (``bet``):

- ``agrapa`` (default; WSR's approximate growth-rate adaptive bet, a plug-in Kelly bet):
  λ⁺_i(m) = (μ̂_{i−1} − m)/(σ̂²_{i−1} + (μ̂_{i−1} − m)²) clipped to [0, c/m], λ⁻ the mirror image
  (clipped to [0, c/(1 − m)]): it bets in proportion to the evidence so far, as a
  growth-optimal bettor would.
- ``prpl`` (WSR's predictable plug-in): λ_i = √(2 log(2/α) / (σ̂²_{i−1} · i · log(1 + i))) on both
  sides, truncated at c/m and c/(1 − m) — tuned for a tight interval at a horizon, not for a
  fast decision.

μ̂_i = (½ + Σ_{j≤i} x_j)/(i + 1) and σ̂²_i = (¼ + Σ_{j≤i} (x_j − μ̂_j)²)/(i + 1) (WSR's regularized
running moments); task i's bet reads them at i − 1. Why agrapa is the default (SIMULATED,
latent-difficulty per-task differences, 1,000 streams per effect, a look every 20 tasks, the
Holm-first level α/3, cap 400; ``benchmarks/sequential_calibration.py``): at +10 pp it decides
23 ± 1.3 tasks sooner on average (227 vs 250) with power at the cap 89.6% vs 82.1%; at +5 pp
7 ± 1.1 sooner (power 19.8% vs 15.6%); at +20 pp the same (81.5 both — the bet sits at its
truncation c/m there); the null interval is as wide (0.117 vs 0.121 at n = 400). Also measured
and not taken: the mixture ½·prpl + ½·agrapa (between the two), c = ¾ (9 tasks sooner at +20 pp
but 11 later at +10), online Newton step (no better than agrapa, and a sequential recursion),
a mixture of fixed bets (slower at +20 pp). agrapa's non-rejected set need not be an interval
at every t; :meth:`Sequence.interval` returns its hull (conservative).

Computed in chunks of tasks (memory: ``chunk`` × ``grid`` floats). A grid point whose running max
exceeds ``LOG_CAP`` (p < e⁻³⁰ ≈ 10⁻¹³) is rejected at every level anyone uses and is no longer
updated (its stored log-capital is then a lower bound: its p-value is reported conservatively);
m = ½ (no difference) is always updated. Long sequences therefore cost a narrow band of the grid
per task: a 100k-task sequence takes under a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .decide import INCONCLUSIVE, decide
from .paired import holm

Bet = Literal["prpl", "agrapa"]
DEFAULT_BET: Bet = "agrapa"
"""The default bet (the module docstring says why)."""
C_TRUNC = 0.5
"""Bets are truncated at c/m (c/(1 − m)): a wager never risks more than half the capital."""
GRID = 2001
"""Grid points over the mean difference's range [−1, 1] (step 0.001); 0 is a grid point."""
LOG_CAP = 30.0
"""A grid point with log max K ≥ this (p ≤ e⁻³⁰) is frozen: rejected at any level ≥ 10⁻¹³."""


def _grid(points: int) -> np.ndarray:
    """Candidate means of x = (d + 1)/2, strictly inside (0, 1) (a bet against m = 0 or 1 is void)."""
    points = points if points % 2 else points + 1  # odd: m = ½ (no difference) is on the grid
    g = np.linspace(0.0, 1.0, points)
    eps = 0.5 / (points - 1)
    g[0], g[-1] = eps / 2, 1 - eps / 2
    return g


def _moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(μ̂_{t−1}, σ̂²_{t−1}) for t = 1..n along the last axis: WSR's regularized running mean and
    variance, predictable (the first task reads the priors ½ and ¼)."""
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (t + 1)
    head = np.ones(x.shape[:-1] + (1,))
    return (np.concatenate([0.5 * head, mu[..., :-1]], axis=-1),
            np.concatenate([0.25 * head, s2[..., :-1]], axis=-1))


@dataclass(frozen=True)
class Sequence:
    """The state of the test after the n differences seen so far."""

    n: int
    """Differences seen."""
    mean: float
    """Their mean (the point estimate of the mean difference; NaN before the first)."""
    mu: np.ndarray
    """The grid of candidate mean differences μ ∈ [−1, 1] (odd length, 0 in the middle)."""
    log_kmax: np.ndarray
    """log max_{s≤n} K_s at every grid point (0 before the first difference: K_0 = 1)."""
    direction: np.ndarray
    """At every grid point, +1 if the up-bet K⁺ was the larger when the running max was reached, else −1."""

    def p_value(self, mu0: float = 0.0) -> float:
        """Anytime-valid p-value of "the mean difference is ``mu0``" (default: no difference),
        at the grid point nearest ``mu0``."""
        i = int(np.argmin(np.abs(self.mu - mu0)))
        return float(min(1.0, math.exp(-self.log_kmax[i])))

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The confidence sequence at ``level`` after n differences (running intersection): the
        smallest and largest grid means not rejected, widened by one grid step each way (the
        true mean may lie between grid points)."""
        return _hull(self.log_kmax[None, :], self.mu, -math.log(max(1 - level, 1e-300)))[0]

    def side(self, mu0: float = 0.0) -> int:
        """+1 if the evidence against ``mu0`` says the mean is above it, −1 below, 0 none yet."""
        if self.n == 0:
            return 0
        return 1 if self.mean > mu0 else -1 if self.mean < mu0 else 0


def _hull(log_k: np.ndarray, mu: np.ndarray, thresh: float) -> list[tuple[float, float]]:
    """Per row of running log-capitals (rows × grid): the hull of the grid means kept at
    ``thresh`` (log of 1/level), widened by one grid step each way and clipped to [−1, 1]. A
    row that rejects every grid point (the true mean between two of them, or a miss) keeps its
    least-rejected point."""
    step = float(mu[2] - mu[1])  # the end points are pulled inside (0, 1): read the step away from them
    keep = log_k < thresh
    none = ~keep.any(axis=1)
    if none.any():
        keep = keep.copy()
        keep[none, np.argmin(log_k[none], axis=1)] = True
    first = np.argmax(keep, axis=1)
    last = keep.shape[1] - 1 - np.argmax(keep[:, ::-1], axis=1)
    lo = np.maximum(-1.0, mu[first] - step)
    hi = np.minimum(1.0, mu[last] + step)
    return list(zip(lo.tolist(), hi.tolist()))


def _bets(m: np.ndarray, bet: Bet, alpha: float, mu_prev: np.ndarray, s2_prev: np.ndarray,
          t0: int) -> tuple[np.ndarray, np.ndarray]:
    """λ⁺, λ⁻ (chunk × grid) for tasks t0+1 … t0+len(mu_prev), from the moments before each task
    (predictable: no bet reads its own task)."""
    cap_up, cap_dn = C_TRUNC / m, C_TRUNC / (1 - m)
    if bet == "prpl":
        t = np.arange(t0 + 1, t0 + len(mu_prev) + 1, dtype=float)
        lam = np.sqrt(2 * math.log(2 / alpha) / (s2_prev * t * np.log1p(t)))[:, None]
        return np.minimum(lam, cap_up[None, :]), np.minimum(lam, cap_dn[None, :])
    # agrapa (betting_sequence refuses any other bet before the first chunk)
    gap = mu_prev[:, None] - m[None, :]
    raw = gap / (s2_prev[:, None] + gap ** 2)
    return np.clip(raw, 0.0, cap_up[None, :]), np.clip(-raw, 0.0, cap_dn[None, :])


def betting_sequence(diffs: np.ndarray, *, alpha: float = 0.05, bet: Bet = DEFAULT_BET, grid: int = GRID,
                     chunk: int = 256, paths: bool = False) -> tuple[Sequence, np.ndarray | None]:
    """The test after the differences ``diffs`` (in arrival order, each in [−1, 1]).

    ``alpha`` tunes the bets only (every level is read from the same process). With ``paths``
    also returns, per prefix t = 1..n, the (1 − alpha) interval and the anytime p-value of 0
    as an (n × 3) array [lo, hi, p] (for coverage studies at data-dependent stopping times)."""
    if bet not in ("prpl", "agrapa"):
        raise ValueError(f"unknown bet {bet!r} (prpl | agrapa)")
    d = np.clip(np.asarray(diffs, dtype=float), -1.0, 1.0)
    if np.isnan(d).any():
        raise ValueError("a paired difference is NaN (a task without a curve value?)")
    m = _grid(grid)
    mu = 2 * m - 1
    n = len(d)
    log_kmax = np.zeros(len(m))
    direction = np.zeros(len(m), dtype=np.int8)
    out = np.empty((n, 3)) if paths else None
    if n == 0:
        return Sequence(0, math.nan, mu, log_kmax, direction), out
    x = (d + 1) / 2
    mu_prev, s2_prev = _moments(x)
    log_up, log_dn = np.zeros(len(m)), np.zeros(len(m))
    i_zero = len(m) // 2
    thresh = math.log(1 / alpha)
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        act = log_kmax < LOG_CAP
        act[i_zero] = True
        cols = np.flatnonzero(act)
        lam_up, lam_dn = _bets(m[cols], bet, alpha, mu_prev[a:b], s2_prev[a:b], a)
        dev = x[a:b, None] - m[None, cols]
        up = log_up[cols] + np.cumsum(np.log1p(lam_up * dev), axis=0)
        dn = log_dn[cols] + np.cumsum(np.log1p(-lam_dn * dev), axis=0)
        log_k = np.logaddexp(up, dn) + math.log(0.5)
        run = np.maximum.accumulate(np.vstack([log_kmax[None, cols], log_k]), axis=0)[1:]
        new_max = log_k.max(axis=0) > log_kmax[cols]
        arg = np.argmax(log_k, axis=0)
        j = np.arange(len(cols))
        direction[cols] = np.where(new_max, np.where(up[arg, j] >= dn[arg, j], 1, -1), direction[cols])
        log_kmax[cols] = run[-1]
        log_up[cols], log_dn[cols] = up[-1], dn[-1]
        if out is not None:  # frozen columns are ≥ LOG_CAP > thresh: rejected, so the active ones decide
            full = np.full((b - a, len(m)), np.inf)
            full[:, cols] = run
            out[a:b, :2] = np.array(_hull(full, mu, thresh))
            out[a:b, 2] = np.minimum(1.0, np.exp(-run[:, int(np.searchsorted(cols, i_zero))]))
    return Sequence(n, float(d.mean()), mu, log_kmax, direction), out


def p_paths(diffs: np.ndarray, *, alpha: float = 0.05, bet: Bet = DEFAULT_BET) -> np.ndarray:
    """The anytime-valid p-value of "no difference" after every prefix, for many streams at once
    (rows of ``diffs``, streams × n): exactly :func:`betting_sequence`'s ``paths`` column ``p``
    (the grid point m = ½), without the rest of the grid — for planning by simulation."""
    d = np.clip(np.atleast_2d(np.asarray(diffs, dtype=float)), -1.0, 1.0)
    if d.shape[1] == 0:
        return np.ones(d.shape)
    x = (d + 1) / 2
    mu_prev, s2_prev = _moments(x)
    dev = x - 0.5
    cap = C_TRUNC / 0.5
    if bet == "prpl":
        t = np.arange(1, x.shape[1] + 1, dtype=float)
        lam_up = lam_dn = np.minimum(np.sqrt(2 * math.log(2 / alpha) / (s2_prev * t * np.log1p(t))), cap)
    elif bet == "agrapa":
        raw = (mu_prev - 0.5) / (s2_prev + (mu_prev - 0.5) ** 2)
        lam_up, lam_dn = np.clip(raw, 0.0, cap), np.clip(-raw, 0.0, cap)
    else:
        raise ValueError(f"unknown bet {bet!r} (prpl | agrapa)")
    log_k = np.logaddexp(np.cumsum(np.log1p(lam_up * dev), axis=1), np.cumsum(np.log1p(-lam_dn * dev), axis=1))
    return np.minimum(1.0, np.exp(-np.maximum.accumulate(np.maximum(log_k + math.log(0.5), 0.0), axis=1)))


__all__ = ["Bet", "DEFAULT_BET", "Sequence", "betting_sequence", "p_paths"]


# --- one look of a sequential run: Holm over the designs' anytime-valid p-values -------------------

@dataclass(frozen=True)
class LookInput:
    """One design at a look: its differences so far, in arrival order."""

    design: str
    diffs: np.ndarray
    """Per-task differences against the curve, in the order the tasks were drawn."""
    position: str
    """Where its cost falls on the curve: within | below | beyond (as the fixed-n test)."""
    k_max: int
    frozen: "LookResult | None" = None
    """Its result at the look where it was decided (it received no tasks since), else None."""


@dataclass(frozen=True)
class LookResult:
    """What the sequential test says of one design after a look."""

    design: str
    n: int
    mean: float
    cs_lo: float
    """The confidence sequence at level 1 − ``level_holm`` (running intersection)."""
    cs_hi: float
    p_anytime: float
    family_size: int
    p_holm: float
    level_holm: float
    decided: bool
    """Significant either way: the design stops receiving tasks (its numbers are frozen)."""
    verdict: str
    reason: str


def look(inputs: list[LookInput], alpha: float = 0.05, bet: Bet = DEFAULT_BET, *, grid: int = GRID) -> list[LookResult]:
    """The sequential verdicts of one family (the non-baseline designs of a run) after a look.

    Holm's step-down over the anytime-valid p-values controls the family-wise error under
    optional stopping: a true null is rejected at some look only if its p-value ever falls to
    α/m₀ (Holm's first true null is tested at a level ≤ α/m₀), and for each true null
    P(∃t: p_t ≤ α/m₀) ≤ α/m₀ — a union bound over the m₀ true nulls gives ≤ α over all looks,
    whatever the stopping rule. The p-values only fall over time (a running max of the capital),
    and a decided design's p is frozen, so a decision once made stays made."""

    seqs = {i.design: betting_sequence(i.diffs, alpha=alpha, bet=bet, grid=grid)[0] for i in inputs if i.frozen is None}
    p = [i.frozen.p_anytime if i.frozen is not None else seqs[i.design].p_value() for i in inputs]
    adj, levels = holm(p, alpha)
    out: list[LookResult] = []
    for i, pi, pa, lv in zip(inputs, p, adj, levels):
        if i.frozen is not None:
            out.append(LookResult(**{**i.frozen.__dict__, "family_size": len(inputs)}))
            continue
        s = seqs[i.design]
        lo, hi = s.interval(1 - lv)
        significant = pa < alpha and (lo > 0 or hi < 0)
        if significant:
            verdict, reason = decide(i.position, s.mean, (lo, hi), pa, alpha, None, s.n, i.k_max)
        else:
            verdict, reason = INCONCLUSIVE, f"undecided after {s.n} tasks"
        out.append(LookResult(i.design, s.n, s.mean, lo, hi, pi, len(inputs), pa, lv, significant, verdict, reason))
    return out


__all__ += ["LookInput", "LookResult", "look"]
