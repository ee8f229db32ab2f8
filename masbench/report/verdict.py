"""One-line verdicts: is a design worth its cost against CoT-SC? (rule in docs/metrics.md)

Where the design's token cost falls decides the reference:

- *within* the curve (an iso-cost gap exists): CoT-SC at equal tokens, with the curve's 95% band
  interpolated at that cost. Worth it if the design's Wilson interval lies entirely above the
  band, not worth it if entirely below, inconclusive if they overlap.
- *beyond* (more tokens than CoT-SC@k_max): CoT-SC@k_max, which is cheaper. Not worth it if the
  design is not more accurate (gap ≤ 0); else inconclusive (no curve point at its cost: raise k_max).
- *below* (fewer tokens than one CoT sample): the curve at k = 1, which is costlier. Worth it if
  the design is at least as accurate (gap ≥ 0); else inconclusive.
- no curve (cot_sc disabled or empty pool): "no CoT-SC curve", with the gap to CoT for information.
Baselines (``design_name`` in cot, cot-sc) get no verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

WORTH = "worth it"
NOT_WORTH = "not worth it"
INCONCLUSIVE = "inconclusive"
BASELINE = "baseline"
NO_CURVE = "no CoT-SC curve"


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


@dataclass(frozen=True)
class Verdict:
    design: str
    verdict: str
    gap_pp: float | None
    reference: str
    x_cot: float | None
    reason: str = ""

    @property
    def line(self) -> str:
        if self.verdict == BASELINE:
            return f"{self.design}: baseline"
        gap = "n/a" if self.gap_pp is None else f"{self.gap_pp:+.1f} pp".replace("-", "\u2212")
        cost = "n/a" if self.x_cot is None else f"{self.x_cot:.1f}\u00d7"
        tail = f" ({self.reason})" if self.reason else ""
        return f"{self.design}: {gap} vs {self.reference} ({cost} CoT cost) \u2014 {self.verdict}{tail}"


def verdict(row: dict[str, Any]) -> Verdict:
    """The verdict for one ``design_comparison`` row (as returned by :func:`data.comparison`)."""
    design = str(row["design"])
    x_cot = _num(row.get("x_cot_tokens"))
    if row.get("baseline"):
        return Verdict(design, BASELINE, None, "", x_cot)
    acc, lo, hi = _num(row.get("accuracy")), _num(row.get("ci_lo")), _num(row.get("ci_hi"))
    tokens = _num(row.get("tokens"))
    k_max = row.get("k_max")
    iso = _num(row.get("iso_gap_tokens"))
    if k_max is None or _num(k_max) is None or acc is None:
        cot = _num(row.get("cot_accuracy"))
        gap = None if cot is None else 100 * (acc - cot)
        return Verdict(design, NO_CURVE, gap, "CoT", x_cot, "cot_sc disabled or pool empty")
    k_max = int(float(k_max))
    if iso is not None:
        rlo, rhi = _num(row.get("curve_ci_lo_at_tokens")), _num(row.get("curve_ci_hi_at_tokens"))
        ref = "CoT-SC at equal tokens"
        if rlo is not None and lo > rhi:
            return Verdict(design, WORTH, 100 * iso, ref, x_cot)
        if rhi is not None and hi < rlo:
            return Verdict(design, NOT_WORTH, 100 * iso, ref, x_cot)
        return Verdict(design, INCONCLUSIVE, 100 * iso, ref, x_cot, "CIs overlap")
    kmax_tokens, k1_tokens = _num(row.get("kmax_tokens")), _num(row.get("k1_tokens"))
    if tokens is not None and kmax_tokens is not None and tokens > kmax_tokens:
        gap = 100 * (acc - _num(row.get("kmax_accuracy")))
        ref = f"CoT-SC@{k_max} (k_max, cheaper)"
        if gap <= 0:
            return Verdict(design, NOT_WORTH, gap, ref, x_cot)
        return Verdict(design, INCONCLUSIVE, gap, ref, x_cot, "costs more than the whole curve; raise k_max")
    if tokens is not None and k1_tokens is not None and tokens < k1_tokens:
        gap = 100 * (acc - _num(row.get("k1_accuracy")))
        ref = "CoT-SC@1 (costlier)"
        if gap >= 0:
            return Verdict(design, WORTH, gap, ref, x_cot)
        return Verdict(design, INCONCLUSIVE, gap, ref, x_cot, "cheaper than one CoT sample but less accurate")
    return Verdict(design, INCONCLUSIVE, None, "CoT-SC", x_cot, "cost not comparable")


def verdicts(df) -> list[Verdict]:
    return [verdict(r) for r in df.to_dict("records")]
