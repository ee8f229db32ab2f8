"""The verdict rule: decided by the paired, Holm-corrected evidence against the CoT-SC curve; and
the verdict words, defined here only (every other module imports them).

Per non-baseline design, against the curve at the design's cost (``position`` within), at k = 1
(below: the design is cheaper than one CoT sample) or at k_max (beyond: it costs more than the
whole curve). "Significant" means the Holm-adjusted p-value is below α *and* the Holm-level
interval excludes 0 on that side.

| position | significantly better | significantly worse | neither |
|---|---|---|---|
| within | worth it | not worth it | inconclusive, needs n ≈ lo–hi |
| below | worth it (cheaper and better) | inconclusive (cheaper but less accurate: a trade-off) | inconclusive, needs n ≈ lo–hi |
| beyond | inconclusive (better than CoT-SC@k_max but costs more: raise k_max) | not worth it | not shown worth it (costs more than CoT-SC@k_max) |

"needs n ≈ lo–hi" is a range from the effect's central 50% interval
(:func:`masbench.harness.stats.power.n_range`): the tasks that would detect its farther endpoint
(lo) to its nearer one (hi) at the planned power and this comparison's Holm level; "n ≥ lo" when
the nearer one needs more than 10⁹. No n when that interval holds 0: "no difference shown at n".
"""

from __future__ import annotations

WORTH = "worth it"
NOT_WORTH = "not worth it"
INCONCLUSIVE = "inconclusive"
NOT_SHOWN = "not shown worth it"
BASELINE = "baseline"
"""What the report shows for a baseline (cot, cot-sc): it gets no verdict."""
NO_CURVE = "no CoT-SC curve"
"""What the report shows for a design of a run without a CoT-SC curve."""
VERDICTS = (WORTH, NOT_WORTH, INCONCLUSIVE, NOT_SHOWN)
"""The words a test decides (:func:`decide`, the sequential looks, runs against runs)."""
SHOWN = (*VERDICTS, BASELINE, NO_CURVE)
"""Every word a verdict column or line can read: the decided ones and the two the report adds."""


def need_text(n_needed: int | None, n_tasks: int, n_needed_hi: int | None = None, unbounded: bool = False) -> str:
    """"needs n ≈ 97–781 tasks (has 40)", "needs n ≥ 97 tasks (has 40)" (``unbounded``: the upper end
    exceeds 10⁹), "needs n ≈ 97 tasks" (no upper end given), or "no difference shown at n = 40"
    (no n: the effect's interval holds 0)."""
    if not n_needed:
        return f"no difference shown at n = {n_tasks}"
    if unbounded:
        return f"needs n \u2265 {n_needed} tasks (has {n_tasks})"
    if n_needed_hi is None or n_needed_hi == n_needed:
        return f"needs n \u2248 {n_needed} tasks (has {n_tasks})"
    return f"needs n \u2248 {n_needed}\u2013{n_needed_hi} tasks (has {n_tasks})"


def decide(position: str, mean: float, ci_holm: tuple[float, float], p_holm: float, alpha: float,
           n_needed: int | None, n_tasks: int, k_max: int, *, n_needed_hi: int | None = None,
           unbounded: bool = False) -> tuple[str, str]:
    """(verdict, reason) for one design against the curve; ``n_needed``..``n_needed_hi``: the
    "needs n" range (:func:`need_text`; ``unbounded``: no finite upper end)."""
    better = p_holm < alpha and ci_holm[0] > 0
    worse = p_holm < alpha and ci_holm[1] < 0
    need = need_text(n_needed, n_tasks, n_needed_hi, unbounded)
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
