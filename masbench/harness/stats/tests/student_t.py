"""The one-sample Student t-test of the mean per-task difference (n − 1 degrees of freedom).

    t = mean / (sd/√n),  p = P(|T_{n−1}| ≥ |t|) = I_{ν/(ν+t²)}(ν/2, ½),   ci = mean ∓ q·sd/√n

with I the regularized incomplete beta function (continued fraction, below) and q the 1 − a/2
quantile of T_{n−1} (found by bisection on the same p function), so p < a ⇔ |t| > q ⇔ 0 ∉ ci up to
floating rounding at the boundary. sd = 0: p = 0 if the mean is non-zero (1 if it is 0) and the
interval is the point; n < 2: p = 1 and the interval [−1, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .base import TestResult, clip, mean_sd


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_two_sided(t: float, df: float) -> float:
    """P(|T_df| ≥ |t|)."""
    if math.isinf(t):
        return 0.0
    return float(min(1.0, betainc(df / 2, 0.5, df / (df + t * t))))


def t_quantile(a: float, df: float) -> float:
    """q with P(|T_df| ≥ q) = a (two-sided), by bisection."""
    lo, hi = 0.0, 1.0
    while t_two_sided(hi, df) > a:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_two_sided(mid, df) > a:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return hi


@dataclass(frozen=True)
class StudentResult(TestResult):
    @property
    def _se(self) -> float:
        return self.sd / math.sqrt(self.n)

    @property
    def p_value(self) -> float:
        if self.n < 2:
            return 1.0
        if self.sd == 0:
            return 0.0 if self.mean != 0 else 1.0
        return t_two_sided(self.mean / self._se, self.n - 1)

    def ci(self, level: float = 0.95) -> tuple[float, float]:
        if self.n < 2:
            return clip(-math.inf, math.inf)
        if self.sd == 0:
            return clip(self.mean, self.mean)
        q = t_quantile(1 - level, self.n - 1)
        return clip(self.mean - q * self._se, self.mean + q * self._se)


class StudentT:
    name = "student-t"
    method = "Student t"

    def run(self, diffs: np.ndarray, *, resamples: int = 2000, seed: int = 0,
            lattice: int | None = None) -> StudentResult:
        d = np.asarray(diffs, dtype=float)
        mean, sd = mean_sd(d)
        return StudentResult(mean, sd, len(d))
