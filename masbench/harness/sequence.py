"""The plan of a sequential run (``masbench run --until-decided``): which tasks, in which order,
in which batches — reproducible from the run's stored configuration alone.

The order is a seeded random permutation of the suite's tasks (``stats.seed``; the tasks in the
order the suite's sources produce them, after ``--limit``), cut to the first ``max_tasks``; batch
j holds positions [j·B, (j+1)·B). A random order makes the per-task differences exchangeable, so a
suite listed by difficulty (all easy tasks first) does not bias the early looks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..spec import SuiteSpec

DEFAULT_BATCH = 20
"""Tasks per batch when ``--batch`` is not given: a look every 20 tasks."""
BASELINES = ("cot", "cot-sc")
"""Design names (not labels) of the single-agent baselines: no verdict, they follow the pool."""


class SequentialError(ValueError):
    """``--until-decided`` cannot run this suite with these options (the message says why)."""


def task_order(task_ids: Sequence[str], seed: int) -> list[str]:
    """The tasks in the order a sequential run draws them: ``numpy.random.default_rng(seed)``'s
    permutation of their positions."""
    import numpy as np  # deferred: start-up (only a sequential run draws an order; ~0.1 s of imports)

    perm = np.random.default_rng(seed).permutation(len(task_ids))
    return [task_ids[int(i)] for i in perm]


@dataclass(frozen=True)
class SequencePlan:
    """Which tasks a sequential run may draw, in order, and how many per look."""

    order: tuple[str, ...]
    """Task ids in draw order, ``max_tasks`` of them."""
    batch: int
    """Tasks per batch (one look after each)."""
    match: str
    """The matching unit of the per-task differences (``stats.match``)."""

    @property
    def max_tasks(self) -> int:
        return len(self.order)

    @property
    def n_batches(self) -> int:
        return -(-len(self.order) // self.batch)

    def batch_tasks(self, j: int) -> tuple[str, ...]:
        """The tasks of batch ``j`` (0-based)."""
        return self.order[j * self.batch:(j + 1) * self.batch]

    def drawn(self, looks: int) -> tuple[str, ...]:
        """The tasks of the first ``looks`` batches."""
        return self.order[:looks * self.batch]

    def identity(self) -> dict[str, Any]:
        """What makes a sequential run this run (hashed into its configuration; recorded in its config)."""
        return {"max_tasks": self.max_tasks, "batch": self.batch, "match": self.match}


def plan_sequence(suite: SuiteSpec, task_ids: Sequence[str], design_names: Sequence[str], max_tasks: int | None,
                  batch: int | None) -> SequencePlan:
    """The plan, after checking the suite can run ``--until-decided``."""
    if not (suite.cot_sc.enabled and suite.cot_sc.k_max):
        raise SequentialError(f"suite {suite.name!r}: --until-decided compares designs with the CoT-SC curve; "
                              "enable cot_sc (k_max >= 1)")
    if all(n in BASELINES for n in design_names):
        raise SequentialError(f"suite {suite.name!r}: --until-decided needs a design other than the baselines "
                              f"({', '.join(BASELINES)}) to decide")
    n = len(task_ids)
    cap = n if max_tasks is None else max_tasks
    if cap < 1 or cap > n:
        raise SequentialError(f"--max-tasks {max_tasks}: the suite has {n} tasks (use 1..{n})")
    b = DEFAULT_BATCH if batch is None else batch
    if b < 1:
        raise SequentialError(f"--batch {batch}: a batch holds at least one task")
    return SequencePlan(tuple(task_order(list(task_ids), suite.stats.seed)[:cap]), min(b, cap), suite.stats.match)


__all__ = ["BASELINES", "DEFAULT_BATCH", "SequencePlan", "SequentialError", "plan_sequence", "task_order"]
