"""Which group each of a run's tasks is in, held compactly for the run's life.

The curve (:func:`~masbench.harness.curve.compute_curve`) draws one curve per group — (axis, axis
value) for a task with an axis, else (source, None) — and skips pool samples of tasks the suite
does not list. A run's driver keeps that mapping from listing its cells to drawing its curve. As a
dict of tuples it took ≈ 150 bytes a task beyond the id itself (a slot, a tuple per task; with the
id strings ≈ 226: 190 MB at 850,000 tasks); here it is the ids' UTF-8 bytes, sorted, in one numpy
array (each as wide as the longest id) and a 4-byte group code each: ``width + 4`` bytes a task.

Looked up a page of ids at a time (:meth:`TaskGroups.codes`, one ``searchsorted``). UTF-8 bytes
sort as the ids' code points do, DuckDB's and Python's string order. An id numpy's fixed-width
bytes cannot hold exactly (one ending in NUL, which the padding swallows) is kept in a small dict
beside the array."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..bench.types import TaskInstance

Group = tuple[str, int | None]
"""A task's group: (axis or source, axis value or None)."""


def group_of(task: TaskInstance) -> Group:
    """A task's group: its axis and axis value, else its source."""
    return (task.axis or task.source, task.axis_value)


class TaskGroups:
    """task id → :data:`Group`, as sorted UTF-8 ids and a group code each (see the module)."""

    def __init__(self, pairs: Iterable[tuple[str, Group]]) -> None:
        codes: dict[Group, int] = {}
        ids: list[bytes] = []
        code: list[int] = []
        self._odd: dict[str, int] = {}
        for task_id, group in pairs:
            raw = task_id.encode("utf-8")
            c = codes.setdefault(group, len(codes))
            if raw.endswith(b"\x00"):  # the fixed-width padding would swallow it
                self._odd[task_id] = c
            else:
                ids.append(raw)
                code.append(c)
        self.groups: list[Group] = list(codes)
        """Each group code's group, in order of first appearance."""
        width = max((len(b) for b in ids), default=1)
        arr = np.array(ids, dtype=f"S{width}")
        order = np.argsort(arr, kind="stable")
        self._ids = arr[order]
        self._code = np.array(code, dtype=np.int32)[order]
        if len(self._ids) > 1 and bool((self._ids[1:] == self._ids[:-1]).any()):
            raise ValueError("task ids repeat: each task's group must be named once")

    @classmethod
    def of(cls, groups: Mapping[str, Group]) -> TaskGroups:
        """From a dict task id → group (as :func:`~masbench.harness.curve.groups_of_results` gives)."""
        return cls(groups.items())

    @classmethod
    def of_tasks(cls, tasks: Iterable[TaskInstance]) -> TaskGroups:
        """Of loaded tasks: a task's axis and axis value, else its source."""
        return cls((t.id, group_of(t)) for t in tasks)

    def __len__(self) -> int:
        return len(self._ids) + len(self._odd)

    def codes(self, task_ids: list[str]) -> np.ndarray:
        """Each id's group code (an index into :attr:`groups`), -1 for an id not held."""
        out = np.full(len(task_ids), -1, dtype=np.int32)
        if not task_ids:
            return out
        width = self._ids.dtype.itemsize
        raw = [t.encode("utf-8") for t in task_ids]
        fits = np.array([len(b) <= width and not b.endswith(b"\x00") for b in raw], dtype=bool)
        if len(self._ids) and fits.any():
            want = np.array([b for b, ok in zip(raw, fits) if ok], dtype=f"S{width}")
            pos = np.minimum(np.searchsorted(self._ids, want), len(self._ids) - 1)
            hit = self._ids[pos] == want
            out[np.flatnonzero(fits)] = np.where(hit, self._code[pos], -1)
        for i in np.flatnonzero(~fits):  # too long to be held, or NUL-ended (kept apart)
            out[i] = self._odd.get(task_ids[i], -1)
        return out

    def get(self, task_id: str) -> Group | None:
        """One id's group (None: not held)."""
        code = int(self.codes([task_id])[0])
        return None if code < 0 else self.groups[code]

    def items(self) -> Iterator[tuple[str, Group]]:
        """(id, group) pairs, ids in code point order, then any NUL-ended ones."""
        for raw, code in zip(self._ids.tolist(), self._code.tolist()):
            yield raw.decode("utf-8"), self.groups[code]
        for task_id, code in self._odd.items():
            yield task_id, self.groups[code]

    def nbytes(self) -> int:
        """The arrays' bytes (the NUL-ended ids' dict apart)."""
        return int(self._ids.nbytes + self._code.nbytes)


__all__ = ["Group", "TaskGroups", "group_of"]
