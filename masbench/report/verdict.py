"""One-line verdicts: is a design worth its cost against CoT-SC? (rule in docs/metrics.md)

The verdict is decided by the harness from the *paired* evidence and stored in ``paired_tests``
(:mod:`masbench.harness.stats.decide`): the design's per-task correctness minus the CoT-SC
curve's per-task maj@k at the design's cost (at k = 1 if it is cheaper than one sample, at k_max
if it costs more than the whole curve) on the suite's matching unit (``stats.match``, default the
budget basis), the suite's fixed-n test over tasks (sign-flip by default), Holm-corrected across
the designs of the group (per-axis groups: across every design at every value of the axis). This
module only words it:

    self-refine: −15.4 pp, 95% paired CI [−30.5, −0.6], Holm p = 0.040 (2 designs), 20 tasks
      vs CoT-SC at equal tokens (k ≈ 4.6) (4.6× CoT cost) — not worth it (significantly worse …)

Baselines (``design_name`` in cot, cot-sc) get no verdict; a run without a curve says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..harness.stats.decide import BASELINE, INCONCLUSIVE, NO_CURVE, NOT_SHOWN, NOT_WORTH, WORTH


RULE = ("verdict rule: paired per-task differences against the CoT-SC curve at equal cost (k = 1 if cheaper "
        "than one sample, k_max if costlier than the curve); the suite's test over tasks (sign-flip by default), "
        "a task's seeds together; Holm across the designs of the group, per-axis groups across every design at "
        "every value of the axis; 'worth it'/'not worth it' only if the corrected CI excludes 0 (docs/metrics.md)")
AXIS_NOTE = ("Per-axis verdicts and ▲/▼: Holm-corrected across every design at every value of the axis "
             "(m in the evidence counts them all).")
BASIS_WORDS = {"tokens": "tokens", "completion": "completion tokens", "usd": "USD"}


def unit_words(unit: str, basis: str | None) -> str:
    """How a matching unit reads: ``budget (completion tokens)`` for the budget basis, else the unit."""
    if unit == "budget":
        return f"budget ({BASIS_WORDS.get(basis or 'tokens', basis or 'tokens')})"
    return unit


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _pp(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:+.1f}".replace("-", "\u2212")


@dataclass(frozen=True)
class Verdict:
    design: str
    verdict: str
    gap_pp: float | None
    reference: str
    x_cot: float | None
    reason: str = ""
    evidence: str = ""
    """The paired CI, Holm p-value and n behind the verdict."""
    sequential: str = ""
    """A ``--until-decided`` run: the anytime-valid verdict and when it was decided ('' otherwise)."""

    @property
    def line(self) -> str:
        if self.verdict == BASELINE:
            return f"{self.design}: baseline"
        gap = "n/a" if self.gap_pp is None else f"{self.gap_pp:+.1f} pp".replace("-", "\u2212")
        ev = f", {self.evidence}" if self.evidence else ""
        cost = "n/a" if self.x_cot is None else f"{self.x_cot:.1f}\u00d7"
        if not self.reason:
            tail = ""
        elif self.reason.startswith("needs") or self.reason.startswith("no difference"):
            tail = f", {self.reason}"
        else:
            tail = f" ({self.reason})"
        seq = f"; sequential: {self.sequential}" if self.sequential else ""
        return f"{self.design}: {gap}{ev} vs {self.reference} ({cost} CoT cost) \u2014 {self.verdict}{tail}{seq}"


def _reference(row: dict[str, Any]) -> str:
    pos, unit = row.get("paired_position"), row.get("paired_unit") or "tokens"
    k_max = _num(row.get("k_max"))
    if pos == "beyond":
        return f"CoT-SC@{int(k_max or 0)} (k_max, cheaper)"
    if pos == "below":
        return "CoT-SC@1 (costlier)"
    k = _num(row.get("paired_k_match"))
    return f"CoT-SC at equal {unit_words(unit, row.get('budget_basis'))}" + (f" (k \u2248 {k:.1f})" if k is not None else "")


def evidence(row: dict[str, Any]) -> str:
    """``95% paired CI [lo, hi], Holm p = …, n tasks`` from a comparison row ('' if none)."""
    lo, hi = _num(row.get("paired_ci_lo_holm")), _num(row.get("paired_ci_hi_holm"))
    if lo is None or hi is None:
        return ""
    level = _num(row.get("paired_level")) or 0.05
    fam = int(_num(row.get("paired_family")) or 1)
    p = _num(row.get("paired_p_holm"))
    ptxt = "n/a" if p is None else (f"{p:.3f}" if p >= 0.001 else "< 0.001")
    scope = "comparisons across the axis" if row.get("paired_family_scope") == "axis" else "designs"
    holm = f"Holm p = {ptxt} ({fam} {scope})" if fam > 1 else f"p = {ptxt}"
    n = int(_num(row.get("paired_n_tasks")) or 0)
    return f"{100 * (1 - level):.4g}% paired CI [{_pp(lo)}, {_pp(hi)}], {holm}, {n} tasks"


def _true(v: Any) -> bool:
    """A boolean column's value (NULL, read back as None or NaN, is false)."""
    return v is not None and not (isinstance(v, float) and math.isnan(v)) and bool(v)


def sequential_phrase(row: dict[str, Any], prefix: str = "") -> str:
    """``decided at n = 37 (of 400 allowed), saved 84% of its calls``, ``undecided at the cap: n =
    400`` or (a run stopped before its cap) ``undecided so far: n = 60 (of 400 allowed)``, from a
    row of ``sequential_decisions`` (its columns under ``prefix``)."""
    n, cap = int(_num(row.get(prefix + "n_tasks")) or 0), int(_num(row.get(prefix + "max_tasks")) or 0)
    if _true(row.get(prefix + "decided")):
        saved = _num(row.get(prefix + "saved_calls"))
        tail = "" if saved is None else f", saved {100 * saved:.0f}% of its calls"
        return f"decided at n = {n} (of {cap} allowed){tail}"
    if _true(row.get(prefix + "at_cap")):
        return f"undecided at the cap: n = {n}"
    return f"undecided so far: n = {n} (of {cap} allowed)"


def saving_line(row: dict[str, Any]) -> str:
    """A sequential run's calls against a fixed-n run of its cap (a row of ``sequential_run_saving``)."""
    made, fixed, saved = _num(row.get("calls")), _num(row.get("calls_fixed_n")), _num(row.get("saved_calls"))
    if made is None or fixed is None or saved is None:
        return "sequential run: no calls to compare"
    return (f"sequential run: {int(made):,} calls (designs and CoT-SC pool); a fixed-n run of all "
            f"{int(_num(row.get('max_tasks')) or 0)} tasks \u2248 {fixed:,.0f} at the same calls per task: "
            f"saved {100 * saved:.0f}%")


def _sequential(row: dict[str, Any]) -> str:
    """The sequential verdict of a comparison row's design ('' for a fixed-n run)."""
    v = row.get("seq_verdict")
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v} \u2014 {sequential_phrase(row, 'seq_')}"


def verdict(row: dict[str, Any]) -> Verdict:
    """The verdict for one row of :func:`data.comparison`."""
    design = str(row["design"])
    x_cot = _num(row.get("x_cot_tokens"))
    if row.get("baseline"):
        return Verdict(design, BASELINE, None, "", x_cot)
    if _num(row.get("k_max")) is None:
        acc, cot = _num(row.get("accuracy")), _num(row.get("cot_accuracy"))
        gap = None if cot is None or acc is None else 100 * (acc - cot)
        return Verdict(design, NO_CURVE, gap, "CoT", x_cot, "cot_sc disabled or pool empty")
    v = row.get("paired_verdict")
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return Verdict(design, INCONCLUSIVE, None, "CoT-SC", x_cot,
                       "no paired test stored for this run: `masbench stats --store FILE` recomputes it")
    gap = _num(row.get("paired_diff"))
    return Verdict(design, str(v), None if gap is None else 100 * gap, _reference(row), x_cot,
                   str(row.get("paired_reason") or ""), evidence(row), _sequential(row))


def verdicts(df) -> list[Verdict]:
    return [verdict(r) for r in df.to_dict("records")]
