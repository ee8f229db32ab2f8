"""The earlier rule, kept for comparison: the studentized (bootstrap-t) paired bootstrap with two
±1 pseudo-tasks (:func:`masbench.harness.stats.paired.paired_bootstrap`); ``bootstrap-t-plain``
is the same without the pseudo-tasks. p < a and 0 ∉ ci(1 − a) agree up to one resample (the p is
the smallest a whose interval touches 0 on the resamples' grid). Memory grows with n (a B × n
resample matrix): the sign-flip test is the bounded one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..paired import Boot, paired_bootstrap
from .base import TestResult


@dataclass(frozen=True)
class BootResult(TestResult):
    boot: Boot | None = field(default=None, repr=False)

    @property
    def p_value(self) -> float:
        assert self.boot is not None
        return self.boot.p_value

    def ci(self, level: float = 0.95) -> tuple[float, float]:
        assert self.boot is not None
        return self.boot.ci(level)


class BootstrapT:
    name = "bootstrap-t"
    method = "paired bootstrap"
    pseudo = True

    def run(self, diffs: np.ndarray, *, resamples: int = 2000, seed: int = 0,
            lattice: int | None = None) -> BootResult:
        b = paired_bootstrap(np.asarray(diffs, dtype=float), resamples, seed, pseudo=self.pseudo)
        return BootResult(b.mean, b.sd, b.n, b)


class BootstrapTPlain(BootstrapT):
    name = "bootstrap-t-plain"
    method = "paired bootstrap (no pseudo-tasks)"
    pseudo = False
