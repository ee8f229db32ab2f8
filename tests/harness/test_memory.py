"""What a sharding driver keeps once it drops its tasks (masbench.harness.memory)."""

from __future__ import annotations

from masbench.bench.types import TaskInstance
from masbench.harness.cells import Cell
from masbench.harness.memory import detached


def test_detached_cells_and_groups_share_no_string_with_the_tasks():
    tasks = [TaskInstance(id=f"depth-{i}", source="depth", question="q", answers=["1"], axis="depth" if i else None,
                          axis_value=i or None) for i in range(3)]
    cells = [Cell("pool", "depth-1", 0), Cell("design", "depth-2", 1, "cot")]
    out, groups = detached(cells, tasks)
    assert out == cells  # the same cells (keys, shards)...
    assert all(o.task_id is not t.id for o in out for t in tasks)  # ...on ids of their own
    assert groups == {"depth-0": ("depth", None), "depth-1": ("depth", 1), "depth-2": ("depth", 2)}
    assert all(k is not t.id for k in groups for t in tasks)
