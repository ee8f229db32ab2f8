"""``masbench.arith``: bare arithmetic ("What is 4 plus 3?"), the quickstart's easiest level.

The same problems as ``masbench.depth`` with ``style: bare`` (value d = d chained operations on
small integers), but outside the five MASBench axes: ``axis`` is None, so reports group these
tasks by their source and a suite can hold bare arithmetic and one-step word problems
(``masbench.depth`` at 1) as two separate levels. Ids are ``arith-<d>-<split>-s<seed>-<i>``.
"""

from __future__ import annotations

from .axes import depth_tasks
from .registry import generator
from .types import TaskInstance


@generator("masbench.arith")
def arith_tasks(values: list[int] | None, n: int, seed: int, split: str) -> list[TaskInstance]:
    """Bare arithmetic with d chained operations per value d (default [1]: one operation)."""
    out = []
    for t in depth_tasks(values if values is not None else [1], n, seed, split, style="bare"):
        d = t.axis_value
        out.append(t.model_copy(update={
            "id": t.id.replace("depth-", "arith-", 1),
            "source": "masbench.arith",
            "axis": None,
            "axis_value": None,
            "skills": ["masbench.arith", *t.skills[1:]],
            "meta": {**t.meta, "operations": d},
        }))
    return out
