"""The contract every fixed-n paired test meets, and the lookup by name.

A test is given the per-task differences d_t (one value per task: the mean over its seeds of
design − reference, so seeds are clustered by construction), a resample count and a seed, and
returns a :class:`TestResult`. Intervals are intersected with [−1, 1] (a difference of
correctness, or of a correctness and a maj@k value, lies there); that never changes whether 0 is
inside, so the contract ``p_value < a ⇔ 0 ∉ ci(1 − a)`` survives the clipping.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ....registry import PAIRED_TESTS

BOUNDS = (-1.0, 1.0)
"""The range of a per-task difference: every interval is intersected with it."""


@dataclass(frozen=True)
class TestResult(ABC):
    """One test of H0: E[d] = 0 on n per-task differences."""

    mean: float
    """The observed mean of the per-task differences (what the row reports)."""
    sd: float
    """Their SD (ddof = 1; NaN below 2 tasks)."""
    n: int

    @property
    @abstractmethod
    def p_value(self) -> float:
        """Two-sided p-value of E[d] = 0."""

    @abstractmethod
    def ci(self, level: float = 0.95) -> tuple[float, float]:
        """Two-sided interval at ``level``; excludes 0 exactly when p_value < 1 − level."""

    @property
    def t(self) -> float:
        """|mean| / se (se = sd/√n): the Holm tie-break (larger first); 0 when undefined, ∞ at sd = 0."""
        if self.n < 2 or not math.isfinite(self.sd) or not math.isfinite(self.mean):
            return 0.0
        if self.sd == 0:
            return math.inf if self.mean != 0 else 0.0
        return abs(self.mean) / (self.sd / math.sqrt(self.n))


class PairedTest(Protocol):
    """A registered fixed-n test (:data:`masbench.registry.PAIRED_TESTS`)."""

    name: str
    """Its registered name (``stats.test``)."""
    method: str
    """What ``paired_tests.method`` says for its rows."""

    def run(self, diffs: np.ndarray, *, resamples: int = 2000, seed: int = 0,
            lattice: int | None = None) -> TestResult:
        """Test the mean of ``diffs`` (one value per task). ``resamples``: Monte-Carlo draws for
        tests that resample; ``lattice``: s if every d_t is a multiple of 1/s (a test may then be
        exact)."""
        ...


def mean_sd(d: np.ndarray) -> tuple[float, float]:
    n = len(d)
    return (float(d.mean()) if n else math.nan), (float(d.std(ddof=1)) if n > 1 else math.nan)


def clip(lo: float, hi: float) -> tuple[float, float]:
    return max(BOUNDS[0], lo), min(BOUNDS[1], hi)


def get_test(name: str) -> PairedTest:
    """The registered test called ``name`` (a clear error naming the known ones otherwise)."""
    return PAIRED_TESTS[name]()


def lattice_of(diffs: np.ndarray, seeds: np.ndarray | None, max_scale: int = 64) -> int | None:
    """s such that every d_t is a multiple of 1/s (s = the lcm of the tasks' seed counts, ≤
    ``max_scale``), or None. 0/1 outcomes averaged over s_t seeds are multiples of 1/s_t."""
    d = np.asarray(diffs, dtype=float)
    if not len(d):
        return None
    s = 1
    for v in {int(x) for x in np.asarray(seeds if seeds is not None else [1])}:
        s = s * v // math.gcd(s, v)
        if s > max_scale:
            return None
    z = d * s
    return s if np.all(np.abs(z - np.rint(z)) < 1e-9) else None
