"""Scoring replies produced elsewhere (``{"id", "reply"}`` JSONL) with a suite's own scorers.

This is how a user checks our scorers against a paper's released outputs: every reply is scored
by its task's scorer exactly as in a run (the reply text is given whole to the benchmark scorer).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .errors import TaskDataError
from .scorers import score
from .jsonl import jsonl_rows
from .types import TaskInstance


@dataclass(frozen=True)
class ReplyScore:
    """The verdict on one reply."""

    task_id: str
    source: str
    scorer: str
    gold: list[str]
    predicted: list[str]
    correct: bool


@dataclass
class ReplayResult:
    """All verdicts, plus the suite tasks that got no reply."""

    rows: list[ReplyScore] = field(default_factory=list)
    missing: int = 0

    @property
    def scored(self) -> int:
        return len(self.rows)

    @property
    def correct(self) -> int:
        return sum(r.correct for r in self.rows)

    @property
    def accuracy(self) -> float:
        return self.correct / self.scored if self.rows else 0.0

    def by_source(self) -> dict[str, tuple[int, int]]:
        """(correct, scored) per task source."""
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in self.rows:
            out[r.source][0] += r.correct
            out[r.source][1] += 1
        return {k: (v[0], v[1]) for k, v in out.items()}


def read_replies(path: Path) -> list[tuple[int, str, str]]:
    """``(line, id, reply)`` for every non-blank line of a replies file."""
    path = Path(path)
    if not path.is_file():
        raise TaskDataError(path, "replies file not found")
    out = []
    for _path, line_no, obj in jsonl_rows(path):
        for key in ("id", "reply"):
            if key not in obj:
                raise TaskDataError(path, "missing", line_no, key)
        if not isinstance(obj["reply"], str):
            raise TaskDataError(path, "the reply must be a string", line_no, "reply")
        out.append((line_no, str(obj["id"]), obj["reply"]))
    return out


def score_replies(tasks: list[TaskInstance], replies: list[tuple[int, str, str]],
                  path: Path | str = "replies") -> ReplayResult:
    """Score each reply with its task's scorer; an id that is not a task of the suite is an error."""
    by_id = {t.id: t for t in tasks}
    result = ReplayResult()
    seen: dict[str, int] = {}
    for line_no, ident, reply in replies:
        task = by_id.get(ident)
        if task is None:
            raise TaskDataError(path, f"id {ident!r} is not a task of this suite", line_no, "id")
        if ident in seen:
            raise TaskDataError(path, f"id {ident!r} was already scored on line {seen[ident]}", line_no, "id")
        seen[ident] = line_no
        sc = score(task, reply)
        result.rows.append(ReplyScore(ident, task.source, task.scorer, list(task.answers), sc.predicted, sc.correct))
    result.missing = len(set(by_id) - set(seen))
    return result
