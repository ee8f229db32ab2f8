"""A sharding driver's prepare (``prepare(opts, tasks=False)``): the cells and groups of a full
prepare, from the tasks' ids and groups only, the tasks never built in the driver's process."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from masbench.bench.types import TaskInstance
from masbench.harness import RunOptions
from masbench.harness.curve import groups_of_tasks
from masbench.harness.prepare import prepare


def _suite(tmp_path: Path, n: int, generator: str = "masbench.depth") -> str:
    (tmp_path / "tasks").mkdir(exist_ok=True)
    suite = tmp_path / "tasks" / f"p{n}.yaml"
    suite.write_text(f"name: p\nmodels: {{default: sim/medium}}\ntasks:\n  - {{generator: {generator}, values: [1, 2], "
                     f"n: {n}, seed: 0}}\n  - {{generator: masbench.breadth, values: [2], n: 3, seed: 1}}\n"
                     f"designs: [cot, self-refine]\ncot_sc: {{k_max: 2, bootstrap: 10}}\nseeds: [0, 1]\n"
                     f"store: {tmp_path / 's.duckdb'}\n")
    return str(suite)


def _reachable(root: object, kind: type, limit: int = 200_000) -> int:
    """How many ``kind`` objects the object graph from ``root`` reaches (``gc.get_referents``)."""
    seen: set[int] = set()
    todo = [root]
    found = 0
    while todo and len(seen) < limit:
        o = todo.pop()
        if id(o) in seen or isinstance(o, type):
            continue
        seen.add(id(o))
        found += isinstance(o, kind)
        todo.extend(gc.get_referents(o))
    return found


def test_a_sharding_prepare_lists_the_same_cells_and_groups_and_holds_no_task(tmp_path):
    opts = RunOptions(suite=_suite(tmp_path, 7), cache=False)
    full, light = prepare(opts), prepare(opts, tasks=False)
    assert len(full.tasks) == 2 * 7 + 3 and light.tasks == [] and light.index is not None
    assert light.task_ids == [t.id for t in full.tasks]  # the same tasks, in source order
    assert light.cells() == full.cells()  # the same cells in the same order: the same shards
    assert dict(light.index.groups.items()) == groups_of_tasks(full.tasks)
    assert light.config_hash == full.config_hash and light.reads == full.reads
    assert _reachable(full, TaskInstance) == len(full.tasks)  # the walk does find tasks where they are
    assert _reachable(light, TaskInstance) == 0


def test_a_sharding_prepare_raises_the_suites_own_error(tmp_path):
    """The child fails on an unknown generator; the in-process pass raises the loader's message."""
    with pytest.raises(ValueError, match="unknown generator 'no.such'"):
        prepare(RunOptions(suite=_suite(tmp_path, 2, "no.such"), cache=False), tasks=False)


def _peak_per_task(tmp_path: Path, tasks: bool) -> float:
    """Python's traced peak over a prepare, per added task between 2·100 and 2·600 depth tasks."""
    prepare(RunOptions(suite=_suite(tmp_path, 1), cache=False), tasks=tasks)  # imports and caches: before tracing
    peaks = []
    for n in (100, 600):
        opts = RunOptions(suite=_suite(tmp_path, n), cache=False)
        gc.collect()
        tracemalloc.start()
        prep = prepare(opts, tasks=tasks)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        del prep
    return (peaks[1] - peaks[0]) / (2 * 500)


def test_a_sharding_prepare_allocates_a_few_hundred_bytes_a_task(tmp_path):
    """Bounds from docs/scale.md: a ``masbench.depth`` task is ≈ 5-6 KB in Python; what a sharding
    driver keeps of one (its id in the ids list, and its UTF-8 bytes and a group code in TaskGroups)
    is about a hundred bytes, its peak under two hundred (printed when written: 4,976 B a task for
    the full prepare, 226 B for the sharding one with a dict of groups, 171 B with TaskGroups). The
    full prepare is measured the same way, so a method blind to the tasks would fail here."""
    assert _peak_per_task(tmp_path, tasks=True) > 3000
    assert _peak_per_task(tmp_path, tasks=False) < 1000
