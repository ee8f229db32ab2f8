"""The paired randomization (sign-flip) test of a mean per-task difference.

Under H0 the design and the reference are exchangeable on each task, so each per-task
difference d_t is as likely to have come out with the opposite sign. With S = Σ d_t and
S*(ε) = Σ ε_t d_t for random signs ε_t = ±1 (one per task: a task's seeds flip together, so they
are clustered):

    p_≥ = (1 + #{b: S*_b ≥ S}) / (B + 1),   p_≤ = (1 + #{b: S*_b ≤ S}) / (B + 1)
    p   = min(1, 2 · min(p_≥, p_≤))

for B Monte-Carlo sign vectors (the ``1 +`` counts the observed signs, so p is valid at every B).
Σ d_t² does not change under a flip, so the studentized statistic t = mean/(sd/√n) is a monotone
function of S on the flip distribution: the test is the studentized one as well. When 2^n ≤ B
every sign vector is enumerated instead (no ``1 +``: the exact randomization distribution).

**Interval, by inverting the same test over μ** (H0: E[d] = μ flips the signs of d_t − μ). With
A_b = Σ ε_bt d_t and E_b = Σ ε_bt, the flipped statistic is S*_b(μ) = A_b − μ·E_b and the
observed S(μ) = S − nμ, so S*_b(μ) ≥ S(μ) exactly when μ ≥ τ_b = (S − A_b)/(n − E_b) (E_b < n;
a vector with E_b = n, all signs +, counts always). p_≥(μ) is a step function rising at the
sorted τ_b and p_≤(μ) one falling at the same points, so

    ci(1 − a) = {μ : p(μ) ≥ a} = [τ_(j), τ_(M + 1 − j')]

with j the smallest count of thresholds at which 2·p_≥ reaches a (j' likewise for p_≤): order
statistics of B numbers, no search. ``p_value`` is p(0) computed from the same thresholds, so
``p_value < a`` ⇔ 0 ∉ ``ci(1 − a)`` holds exactly (both read the same integer counts; a tolerance
of 1e-9·(1 + Σ|d_t|) on S absorbs float rounding of ties, on both sides alike, and a relative
1e-12 on a the rounding of a level written as 1 − a).

**Exact on a lattice.** When every d_t is a multiple of 1/s (0/1 outcomes averaged over s seeds:
design vs design, design vs the ``cot`` design), z_t = s·d_t are integers and the flip
distribution of Σ ε_t z_t is computed exactly: the tasks with |z_t| = v contribute v·(2X − m_v),
X ~ Binomial(m_v, ½), and the s binomials are convolved. With one seed that is exact McNemar on
the discordant tasks (p = 2·P(X ≤ min(b, c)), X ~ Bin(b + c, ½)); with several it is McNemar
clustered by task. The exact p replaces the Monte-Carlo one; the interval stays the Monte-Carlo
inversion, so on a lattice the p < a ⇔ 0 ∉ ci agreement holds up to Monte-Carlo error.

**Memory.** The sign vectors are drawn task-major in chunks (int8, chunk × B) and only A_b, E_b
(B numbers each) are kept, so memory does not grow with n (the same seed gives the same signs for
any chunk size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .base import TestResult, clip, mean_sd

_CHUNK_CELLS = 1 << 22
"""Sign matrix entries per chunk (4M: 4 MB of int8 signs, 32 MB as float in the product)."""
_MAX_ENUM = 17
"""At most 2^17 sign vectors are enumerated."""


@dataclass(frozen=True)
class SignFlipResult(TestResult):
    tau: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    """Sorted lower thresholds τ_b (vectors with E_b < n)."""
    ups: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    """Sorted upper thresholds υ_b = τ_b with the tolerance on the other side."""
    always: int = 1
    """Vectors counted at every μ: the observed one (Monte Carlo) plus those with E_b = n."""
    total: int = 1
    """The denominator: B + 1 (Monte Carlo) or 2^n (enumerated)."""
    exact_p: float | None = None
    """The lattice-exact p-value (then ``p_value``), else None."""
    resamples: int = 0
    enumerated: bool = False

    def _ok(self, count: int, a: float) -> bool:
        # a = 1 − level loses the last bits of a level written as 1 − p: forgive that rounding
        return min(1.0, 2 * (self.always + count) / self.total) >= a * (1 - 1e-12)

    def p_at(self, mu: float) -> float:
        """The two-sided Monte-Carlo (or enumerated) p-value of H0: E[d] = μ."""
        if self.n == 0:
            return 1.0
        ge = int(np.searchsorted(self.tau, mu, side="right"))  # #{τ_b ≤ μ}
        le = len(self.ups) - int(np.searchsorted(self.ups, mu, side="left"))  # #{υ_b ≥ μ}
        return float(min(1.0, 2 * (self.always + min(ge, le)) / self.total))

    @property
    def p_value(self) -> float:
        return self.exact_p if self.exact_p is not None else self.p_at(0.0)

    def ci(self, level: float = 0.95) -> tuple[float, float]:
        if self.n == 0:
            return clip(-math.inf, math.inf)
        a = 1 - level
        m = len(self.tau)
        j = _smallest_count(self, a)  # thresholds a one-sided side must pass for p(μ) ≥ a
        lo = -math.inf if j == 0 else float(self.tau[j - 1])
        hi = math.inf if j == 0 else float(self.ups[m - j])
        return clip(lo, hi)


def _smallest_count(res: SignFlipResult, a: float) -> int:
    lo, hi = 0, len(res.tau)
    while lo < hi:
        mid = (lo + hi) // 2
        if res._ok(mid, a):
            hi = mid
        else:
            lo = mid + 1
    return lo


def flip_sums(d: np.ndarray, resamples: int, seed: int, chunk: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(A_b, E_b), b = 1..B: Σ ε_bt d_t and Σ ε_bt for B random sign vectors, drawn task-major in
    chunks of ``chunk`` tasks (default: ~4M signs per chunk). The same seed gives the same
    vectors whatever the chunk size."""
    n = len(d)
    rng = np.random.default_rng(seed)
    chunk = chunk or max(1, _CHUNK_CELLS // max(resamples, 1))
    a = np.zeros(resamples)
    e = np.zeros(resamples, dtype=np.int64)
    for start in range(0, n, chunk):
        part = d[start:start + chunk]
        eps = rng.integers(0, 2, size=(len(part), resamples), dtype=np.int8)
        eps *= 2
        eps -= 1
        a += part @ eps
        e += eps.sum(axis=0, dtype=np.int64)
    return a, e


def all_sums(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A_b, E_b) over all 2^n sign vectors."""
    n = len(d)
    bits = (np.arange(1 << n)[None, :] >> np.arange(n)[:, None]) & 1
    eps = (2 * bits - 1).astype(np.int8)
    return d @ eps, eps.sum(axis=0, dtype=np.int64)


def _binom_pmf(m: int) -> np.ndarray:
    """P(X = i), i = 0..m, X ~ Binomial(m, ½) (log-gamma: no overflow at m = 10⁵)."""
    logc = np.array([math.lgamma(m + 1) - math.lgamma(i + 1) - math.lgamma(m - i + 1) for i in range(m + 1)])
    return np.exp(logc - m * math.log(2))


def _convolve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if len(x) * len(y) <= 4_000_000:
        return np.convolve(x, y)
    size = len(x) + len(y) - 1
    f = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(y, size), size)
    return np.clip(f, 0.0, None)


def lattice_p(z: np.ndarray) -> float:
    """Exact two-sided sign-flip p-value of integer differences ``z`` (formula above)."""
    z = np.asarray(z, dtype=np.int64)
    s_obs = int(z.sum())
    pmf, low = np.ones(1), 0  # the distribution of the partial sum, supported on low, low + 1, ...
    absz = np.abs(z[z != 0])
    for v, m in zip(*np.unique(absz, return_counts=True)):
        v, m = int(v), int(m)
        step = np.zeros(2 * v * m + 1)
        step[:: 2 * v] = _binom_pmf(m)
        pmf, low = _convolve(pmf, step), low - v * m
    pmf = pmf / pmf.sum()
    i = s_obs - low
    ge, le = float(pmf[i:].sum()), float(pmf[: i + 1].sum())
    return float(min(1.0, 2 * min(ge, le)))


class SignFlip:
    """The sign-flip test (module docstring)."""

    name = "sign-flip"
    method = "sign-flip"

    def run(self, diffs: np.ndarray, *, resamples: int = 2000, seed: int = 0, lattice: int | None = None,
            chunk: int | None = None) -> SignFlipResult:
        d = np.asarray(diffs, dtype=float)
        n = len(d)
        mean, sd = mean_sd(d)
        if n == 0:
            return SignFlipResult(mean, sd, 0)
        enumerated = n <= _MAX_ENUM and (1 << n) <= resamples
        a, e = all_sums(d) if enumerated else flip_sums(d, resamples, seed, chunk)
        s = float(d.sum())
        tol = 1e-9 * (1.0 + float(np.abs(d).sum()))
        free = e < n
        denom = (n - e[free]).astype(float)
        num = s - a[free]
        tau, ups = np.sort((num - tol) / denom), np.sort((num + tol) / denom)
        always = int((~free).sum()) + (0 if enumerated else 1)
        total = len(a) + (0 if enumerated else 1)
        exact = lattice_p(np.rint(d * lattice)) if lattice else None
        return SignFlipResult(mean, sd, n, tau, ups, always, total, exact, len(a), enumerated)
