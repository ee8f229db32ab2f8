"""McNemar clustered by task, and the resampling seed of one comparison: shared by the within-run
design-against-design tests (:mod:`masbench.harness.paired_tests`) and runs against runs
(:mod:`masbench.harness.run_compare`), so two designs of one run split into two runs get the
identical test.

The clustered McNemar test is the exact sign-flip test of the 0/1 pairs averaged per task: a
task's seeds flip together (their mean is on the lattice of that task's seed count), so a task
counts once however many seeds it has.
"""

from __future__ import annotations

import zlib
from typing import Any, TypedDict

import numpy as np

from .tests import TestResult
from .tests.base import lattice_of
from .tests.sign_flip import SignFlip

CLUSTERED_MCNEMAR = "exact McNemar (clustered by task)"
"""``paired_tests.method`` of the clustered McNemar test."""
SEED_STRIDE = 1_000_003
"""The suite's seed is multiplied by this before the comparison's key is added."""


class McNemarCounts(TypedDict):
    """The columns the clustered McNemar test fills besides the test's own."""

    method: str
    n_discordant_plus: int
    """Tasks where the first side did better (per-task mean difference > 0)."""
    n_discordant_minus: int
    """Tasks where it did worse."""


def comparison_seed(base: int, *parts: Any) -> int:
    """The resampling seed of one comparison: ``base`` (the suite's ``stats.seed``) and the
    comparison's key (its group, value, unit, designs), joined by ``|`` and CRC-32'd."""
    return base * SEED_STRIDE + zlib.crc32("|".join(map(str, parts)).encode())


def clustered_mcnemar(d: np.ndarray, seeds: np.ndarray, resamples: int, seed: int) -> tuple[TestResult, McNemarCounts]:
    """The exact sign-flip test of per-task mean differences ``d`` of 0/1 pairs (``seeds``: each
    task's seed count, its lattice) and the discordant task counts."""
    res = SignFlip().run(d, resamples=resamples, seed=seed, lattice=lattice_of(d, seeds))
    return res, McNemarCounts(method=CLUSTERED_MCNEMAR, n_discordant_plus=int((d > 0).sum()),
                              n_discordant_minus=int((d < 0).sum()))


__all__ = ["CLUSTERED_MCNEMAR", "McNemarCounts", "SEED_STRIDE", "clustered_mcnemar", "comparison_seed"]
