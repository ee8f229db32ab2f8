"""Power planning: how many tasks (and seeds) detect a Δ-point paired difference.

For a two-sided test at level α with power 1 − β on the mean of n independent per-task
differences with standard deviation σ (normal approximation):

    n = ⌈ ((z_{1−α/2} + z_{1−β}) · σ / Δ)² ⌉

σ comes from a pilot (the SD of its per-task differences) or from a formula. With s seeds per
task the per-task difference is a mean of s cells: σ² = σ_b² + σ_w²/s, σ_b² the between-task and
σ_w² the within-task (seed) variance. Without a pilot, for a design of accuracy p₁ = p + Δ
against a reference of accuracy p scored on the same tasks with correlation ρ between their
per-cell outcomes:

    σ_cell² = p₁(1 − p₁) + p(1 − p) − 2ρ·√(p₁(1 − p₁) p(1 − p))

ρ = 0 is the unpaired worst case; a pilot measures it. All seeds of a cell-level formula are taken
as within-task noise (σ_b² = 0, σ_w² = σ_cell²) unless ``between`` (the share of σ_cell² that is
between tasks) is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

_N = NormalDist()


def z(q: float) -> float:
    return _N.inv_cdf(q)


_NO_GAP = 1e-9
_MAX_N = 10**9


def n_needed(delta: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Tasks needed to detect a mean difference ``delta`` (None if delta is 0 — float noise of the
    curve's interpolation counts as 0 — or sd unknown, or if no realistic suite could: > 10⁹ tasks)."""
    if delta is None or sd is None or not math.isfinite(sd) or not math.isfinite(delta) or abs(delta) < _NO_GAP:
        return None
    if sd == 0:
        return 2
    n = math.ceil(((z(1 - alpha / 2) + z(power)) * sd / abs(delta)) ** 2)
    return max(2, n) if n <= _MAX_N else None


def n_range(interval: tuple[float, float], sd: float, alpha: float = 0.05,
            power: float = 0.8) -> tuple[int | None, int | None] | None:
    """"needs n" from the effect's interval [l, u] (the test's central 50% interval): None if it
    holds 0 (the data are consistent with no effect: no n is claimed); else (n at the endpoint
    farther from 0 — the smallest n —, n at the nearer one — the largest; None when it exceeds
    10⁹ tasks: unbounded)."""
    lo, hi = interval
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0 <= hi:
        return None
    far, near = (hi, lo) if lo > 0 else (lo, hi)
    return n_needed(far, sd, alpha, power), n_needed(near, sd, alpha, power)


def power_at(n: int, delta: float, sd: float, alpha: float = 0.05) -> float:
    """Approximate power of the two-sided test with n tasks."""
    if sd <= 0:
        return 1.0 if delta else alpha
    se = sd / math.sqrt(n)
    zc = z(1 - alpha / 2)
    return float(_N.cdf(abs(delta) / se - zc) + _N.cdf(-abs(delta) / se - zc))


def cell_sd(accuracy: float, delta: float, rho: float = 0.0) -> float:
    """SD of a per-cell paired difference (formula above)."""
    p, p1 = accuracy, min(1.0, max(0.0, accuracy + delta))
    v = p1 * (1 - p1) + p * (1 - p) - 2 * rho * math.sqrt(p1 * (1 - p1) * p * (1 - p))
    return math.sqrt(max(v, 0.0))


@dataclass(frozen=True)
class Components:
    """Variance components of per-cell differences from a pilot (one-way random effects)."""

    between: float
    """σ_b²: variance of the true per-task mean difference."""
    within: float
    """σ_w²: variance of a cell around its task's mean (seed noise)."""
    seeds: float
    """Mean seeds per task in the pilot."""
    n_tasks: int

    def sd(self, seeds: int) -> float:
        return math.sqrt(max(self.between, 0.0) + self.within / max(seeds, 1))


def components(task_ids: np.ndarray, diffs: np.ndarray, pseudo: bool = True) -> Components:
    """σ_b², σ_w² by the ANOVA method from per-cell differences grouped by task. With ``pseudo``
    the task means get the bootstrap's two ±1 pseudo-tasks (so a degenerate pilot — every task
    the same difference — does not promise a tiny n)."""
    tasks, inv = np.unique(np.asarray(task_ids), return_inverse=True)
    d = np.asarray(diffs, dtype=float)
    t = len(tasks)
    counts = np.bincount(inv, minlength=t).astype(float)
    means = np.bincount(inv, weights=d, minlength=t) / counts
    if len(d) > t:
        within = float(((d - means[inv]) ** 2).sum() / (len(d) - t))
    else:
        within = 0.0
    s_bar = float(counts.mean())
    pool = np.concatenate([means, [1.0, -1.0]]) if pseudo else means
    var_means = float(pool.var(ddof=1)) if len(pool) > 1 else 0.0
    between = max(0.0, var_means - within / s_bar) if len(d) > t else var_means
    return Components(between, within, s_bar, t)
