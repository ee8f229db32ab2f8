"""The verdict rule: decided by the paired, Holm-corrected evidence against the CoT-SC curve.

Per non-baseline design, against the curve at the design's cost (``position`` within), at k = 1
(below: the design is cheaper than one CoT sample) or at k_max (beyond: it costs more than the
whole curve). "Significant" means the Holm-adjusted p-value is below α *and* the Holm-level
interval excludes 0 on that side.

| position | significantly better | significantly worse | neither |
|---|---|---|---|
| within | worth it | not worth it | inconclusive, needs n ≈ N |
| below | worth it (cheaper and better) | inconclusive (cheaper but less accurate: a trade-off) | inconclusive, needs n ≈ N |
| beyond | inconclusive (better than CoT-SC@k_max but costs more: raise k_max) | not worth it | not shown worth it (costs more than CoT-SC@k_max) |

N is the number of tasks that would detect the observed difference at the planned power and the
Holm level of this comparison (:func:`masbench.harness.stats.power.n_needed`).
"""

from __future__ import annotations

WORTH = "worth it"
NOT_WORTH = "not worth it"
INCONCLUSIVE = "inconclusive"
NOT_SHOWN = "not shown worth it"


def decide(position: str, mean: float, ci_holm: tuple[float, float], p_holm: float, alpha: float,
           n_needed: int | None, n_tasks: int, k_max: int) -> tuple[str, str]:
    """(verdict, reason) for one design against the curve."""
    better = p_holm < alpha and ci_holm[0] > 0
    worse = p_holm < alpha and ci_holm[1] < 0
    need = (f"needs n \u2248 {n_needed} tasks (has {n_tasks})" if n_needed
            else f"no difference observed at n = {n_tasks}")
    if position == "beyond":
        if worse:
            return NOT_WORTH, f"significantly worse than CoT-SC@{k_max}, which is cheaper"
        if better:
            return INCONCLUSIVE, f"better than CoT-SC@{k_max} but costs more: raise k_max"
        return NOT_SHOWN, f"costs more than CoT-SC@{k_max}"
    if position == "below":
        if better:
            return WORTH, "cheaper than one CoT sample and significantly better"
        if worse:
            return INCONCLUSIVE, "cheaper than one CoT sample but significantly less accurate: a trade-off"
        return INCONCLUSIVE, need
    if better:
        return WORTH, "significantly better than CoT-SC at equal cost"
    if worse:
        return NOT_WORTH, "significantly worse than CoT-SC at equal cost"
    return INCONCLUSIVE, need
