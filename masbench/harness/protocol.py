"""A paper's CoT-SC protocol as one point on the run's curve: k fixed or cost-matched.

The suite's ``cot_sc`` block says how the paper ran CoT-SC (sampling temperature, raw or normalized
vote, k). The pool and curve already use the temperature and the vote; this module picks the
protocol's k — fixed, or cost-matched to a design's mean model calls per task as the Illusion paper
does — and reads maj@k at that k from the run's ``cot_sc_curve`` rows (SQL over the store).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..spec import SuiteSpec
from ..store import Store


@dataclass(frozen=True)
class ProtocolPoint:
    """The protocol's CoT-SC point on one run's curve (all tasks)."""

    k: int
    how: str
    temperature: float | None
    vote: str
    accuracy: float | None
    ci_lo: float | None
    ci_hi: float | None

    def line(self) -> str:
        """One line for the terminal."""
        temp = "agent's" if self.temperature is None else f"{self.temperature:g}"
        ci = "" if self.ci_lo is None or self.ci_hi is None else \
            f" [95% CI {100 * self.ci_lo:.1f}, {100 * self.ci_hi:.1f}]"
        acc = "n/a" if self.accuracy is None else f"{100 * self.accuracy:.1f}%{ci}"
        return f"CoT-SC protocol: k={self.k} ({self.how}), T={temp}, {self.vote} vote: maj@{self.k} = {acc}"


def protocol_k(store: Store, run_id: str, suite: SuiteSpec) -> tuple[int, str]:
    """(k, how it was chosen): the fixed k, or round(mean calls per task of ``match``) in [1, k_max]."""
    cs = suite.cot_sc
    if cs.k is None:
        return min(5, cs.k_max), "default"
    if cs.k != "cost-matched":
        return int(cs.k), "fixed"
    rows = store.sql("SELECT avg(calls), count(*) FROM results WHERE run_id = ? AND design = ?", [run_id, cs.match])
    mean, n = rows[0] if rows else (None, 0)
    if not n or mean is None:
        return min(5, cs.k_max), f"cost-matched to {cs.match}, which has no results: k=5"
    k = max(1, min(cs.k_max, round(float(mean))))
    clamp = " (clamped to k_max)" if round(float(mean)) > cs.k_max else ""
    return k, f"cost-matched to {cs.match}: {float(mean):.2f} calls per task{clamp}"


def protocol_point(store: Store, run_id: str, suite: SuiteSpec) -> ProtocolPoint | None:
    """The protocol point of a run (None when the suite draws no CoT-SC pool)."""
    if not suite.cot_sc.enabled:
        return None
    k, how = protocol_k(store, run_id, suite)
    rows = store.sql("SELECT accuracy, ci_lo, ci_hi FROM cot_sc_curve WHERE run_id = ? AND axis = 'all' AND k = ?",
                     [run_id, k])
    acc, lo, hi = rows[0] if rows else (None, None, None)
    return ProtocolPoint(k, how, suite.cot_sc.temperature, suite.cot_sc.vote, acc, lo, hi)
