"""The matched cost's uncertainty: the delta-method (influence) adjustment of per-task differences.

A design is compared with the curve at k̂ = c̄/s̄ samples (c̄ its mean cost per task, s̄ the
pool's mean cost per sample); both are estimated from the same tasks. Linearizing the curve at
k̂ with slope h = dcurve/dk on the matched segment, task t moves k̂ by

    IF_t = (c_t − c̄)/s̄ − (c̄/s̄²)·(s_t − s̄)

and the curve's value by h·IF_t, so the per-task difference whose mean has the right variance is

    d'_t = d_t − h·IF_t

with c̄ and s̄ the means over the same tasks, so mean(d') = mean(d) exactly. h = 0 (below or
beyond the curve: compared at a fixed k) or a cost that never varies leaves d unchanged.
"""

from __future__ import annotations

import numpy as np


def cost_adjusted(diffs: np.ndarray, cost: np.ndarray, sample_cost: np.ndarray, slope: float) -> np.ndarray:
    """d'_t (formula above); ``diffs`` unchanged when the slope is 0 or a cost is unknown."""
    d = np.asarray(diffs, dtype=float)
    c, s = np.asarray(cost, dtype=float), np.asarray(sample_cost, dtype=float)
    if not slope or not np.isfinite(slope) or len(d) == 0 or not (np.isfinite(c).all() and np.isfinite(s).all()):
        return d
    c_bar, s_bar = float(c.mean()), float(s.mean())
    if s_bar <= 0:
        return d
    influence = (c - c_bar) / s_bar - (c_bar / s_bar**2) * (s - s_bar)
    return d - slope * influence
