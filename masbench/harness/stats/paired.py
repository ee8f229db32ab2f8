"""Paired comparisons on the same tasks: bootstrap over tasks, exact McNemar, Holm.

Inputs are *per-task* differences: for each task, the mean over its seeds of (design − reference)
correctness. Resampling tasks with replacement and keeping each task's seeds together is the
cluster bootstrap (seeds of one task are not independent evidence).

- :func:`paired_bootstrap`: mean difference, bootstrap-t CI at any level (tasks resampled with
  two ±1 pseudo-tasks, a small-sample adjustment), and the two-sided p-value
  p = min(1, 2 · (min(#{t* ≥ t}, #{t* ≤ t}) + 1) / (B + 1)), t = m/se, which is the smallest α
  whose (1 − α) interval touches 0.
- :func:`mcnemar_exact`: two designs scored right/wrong on the same cells; p = P(X ≤ min(b, c))·2
  for X ~ Binomial(b + c, ½), capped at 1.
- :func:`holm`: Holm's step-down adjusted p-values and the level each step tests at; ties in p
  ranked by a stated rule (:func:`holm_tiebreak`).

The verdicts' tests are :mod:`masbench.harness.stats.tests` (sign-flip by default);
:func:`paired_bootstrap` is the earlier rule, kept behind ``stats.test: bootstrap-t``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Boot:
    """A paired bootstrap of the mean of per-task differences."""

    mean: float
    """The observed mean of the per-task differences."""
    sd: float
    n: int
    means: np.ndarray
    """The B resampled means."""
    sd_adj: float = math.nan
    """SD of the resampled values (with the pseudo-tasks): what power planning should assume."""
    center: float = math.nan
    """Mean of the resampled values (with the pseudo-tasks)."""
    se: float = math.nan
    """Standard error of ``center``."""
    tstats: np.ndarray | None = None
    """Studentized resamples t* = (m* − center) / se*; None: percentile intervals."""

    def _studentized(self) -> np.ndarray | None:
        """The studentized resamples, if they can be used (a finite positive ``se``); else None."""
        return self.tstats if self.tstats is not None and self.se > 0 and math.isfinite(self.se) else None

    def ci(self, level: float = 0.95) -> tuple[float, float]:
        if self.n < 2:
            return (self.mean, self.mean) if self.sd == 0 or math.isnan(self.sd) else (-math.inf, math.inf)
        a = (1 - level) / 2
        tstats = self._studentized()
        if tstats is not None:  # a difference of correctness lies in [−1, 1]: so does its interval
            qlo, qhi = np.quantile(tstats, [a, 1 - a])
            return float(max(-1.0, self.center - qhi * self.se)), float(min(1.0, self.center - qlo * self.se))
        lo, hi = np.quantile(self.means, [a, 1 - a])
        return float(lo), float(hi)

    @property
    def p_value(self) -> float:
        if self.n < 2:
            return 1.0
        tstats = self._studentized()
        if tstats is not None:
            t_obs = self.center / self.se
            ge, le = int((tstats >= t_obs).sum()), int((tstats <= t_obs).sum())
            return float(min(1.0, 2 * (min(ge, le) + 1) / (len(tstats) + 1)))
        b = len(self.means)
        below, above = int((self.means <= 0).sum()), int((self.means >= 0).sum())
        return float(min(1.0, 2 * (min(below, above) + 1) / (b + 1)))


_SE_EPS = 1e-9
"""Below this a resample's standard error is numerical noise (differences lie in [−1, 1])."""
PSEUDO = np.array([1.0, -1.0])
"""Two pseudo-tasks resampled with the real ones: one the design wins outright, one it loses."""


def paired_bootstrap(diffs: np.ndarray, bootstrap: int = 2000, seed: int = 0, pseudo: bool = True,
                     studentized: bool = True) -> Boot:
    """Bootstrap the mean of per-task differences ``diffs`` (one value per task).

    With ``pseudo`` the n tasks are resampled together with two pseudo-tasks of difference +1
    and −1 (an Agresti–Caffo-style adjustment: it adds one discordant pair to each side). On
    small suites it stops a degenerate sample — e.g. a design wrong on all of 6 tasks — from
    producing a zero-width interval; at n = 300 it widens the CI by a few percent at most.
    With ``studentized`` (default) intervals and p-values come from the bootstrap-t
    distribution of (m* − m)/se*, which keeps the t-like tails the plain percentile interval
    lacks (it rejects ~10% too often at Holm's small levels). ``mean`` is always the observed
    (unadjusted) mean."""
    d = np.asarray(diffs, dtype=float)
    n = len(d)
    mean = float(d.mean()) if n else math.nan
    sd = float(d.std(ddof=1)) if n > 1 else math.nan
    if n < 2 or bootstrap <= 0:
        return Boot(mean, sd, n, np.full(max(bootstrap, 1), mean))
    rng = np.random.default_rng(seed)
    x = np.concatenate([d, PSEUDO]) if pseudo else d
    m = len(x)
    idx = rng.integers(0, m, size=(bootstrap, m))
    res = x[idx]
    means = res.mean(axis=1)
    center, sd_x = float(x.mean()), float(x.std(ddof=1))
    se = sd_x / math.sqrt(m)
    tstats = None
    if studentized and se > 0:
        se_star = res.std(axis=1, ddof=1) / math.sqrt(m)
        with np.errstate(divide="ignore", invalid="ignore"):
            # A resample of identical values (se* = 0, or ~1e-17 of float noise from the curve's
            # interpolation) has no t* of its own: it is studentized by the observed se instead.
            # (Taking t* = ±∞ there blew a near-constant sample's interval up to [−1, +1]: 20 of 20
            # tasks lost outright read "inconclusive".)
            tstats = np.where(se_star > _SE_EPS, (means - center) / se_star, (means - center) / se)
    return Boot(mean, sd, n, means, sd_x, center, se, tstats)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b (A right, B wrong) and c."""
    m = b + c
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(b, c) + 1)) / 2 ** m
    return float(min(1.0, 2 * tail))


def holm(pvalues: list[float], alpha: float = 0.05, *, ties: list | None = None) -> tuple[list[float], list[float]]:
    """Holm step-down: (adjusted p-values, the level α/(m − i) each comparison is tested at,
    i = its rank among the m p-values from the smallest, 0-based). Equal p-values are ranked by
    ``ties`` (sort keys, smaller first; :func:`holm_tiebreak` gives the stated rule: the larger
    |t| = |mean|/se first, then the label), else by position."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: (pvalues[i], ties[i] if ties is not None else i))
    adj, levels = [1.0] * m, [alpha] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adj[i] = running
        levels[i] = alpha / (m - rank)
    return adj, levels


def holm_tiebreak(t: float, label: str) -> tuple[float, str]:
    """The sort key that ranks tied p-values: the larger |t| = |mean|/se first, then the label."""
    return (-t if t == t else 0.0, label)


def unpaired_halfwidth(acc_design: float, n_design: int, ci_curve: tuple[float, float]) -> float:
    """Half-width of today's unpaired test: the design's Wilson half-width plus the curve band's
    (the overlap test declares a difference only beyond their sum)."""
    z = 1.959963984540054
    p, n = acc_design, max(n_design, 1)
    wilson = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return wilson + (ci_curve[1] - ci_curve[0]) / 2
