"""Scoring replies produced elsewhere (``{"id", "reply"}`` JSONL) with a suite's own scorers.

This is how a user checks our scorers against a paper's released outputs: every reply is scored
by its task's scorer exactly as in a run (the reply text is given whole to the benchmark scorer).
An id may have several replies (a CoT-SC pool sampled elsewhere): each gets its own verdict, told
apart by ``sample`` — the line's own ``sample`` field (an integer ≥ 0) or, without one, the reply's
index among that id's replies in file order (0, 1, …). Two replies with one (id, sample) are an error.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import TaskDataError
from .scorers import score
from .jsonl import jsonl_rows
from .types import TaskInstance


@dataclass(frozen=True)
class ReplyScore:
    """The verdict on one reply."""

    task_id: str
    sample: int
    """Which reply of the task this is: the file's ``sample`` field, else its index in file order."""
    source: str
    scorer: str
    gold: list[str]
    predicted: list[str]
    correct: bool

    def record(self) -> dict[str, Any]:
        """The verdict as one JSON-able record (a ``--format jsonl`` line, a ``csv`` row)."""
        return {"id": self.task_id, "sample": self.sample, "source": self.source, "scorer": self.scorer,
                "gold": list(self.gold), "predicted": list(self.predicted), "correct": self.correct}


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


@dataclass(frozen=True)
class Reply:
    """One line of a replies file."""

    line: int
    """Its line in the file (what an error names)."""
    id: str
    """The task id."""
    reply: str
    """The reply text, scored whole."""
    sample: int
    """The line's ``sample`` field, else the reply's index among its id's replies in file order."""


def read_replies(path: Path) -> list[Reply]:
    """Every non-blank line of a replies file, samples numbered (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise TaskDataError(path, "replies file not found")
    out: list[Reply] = []
    count: dict[str, int] = defaultdict(int)
    taken: dict[tuple[str, int], int] = {}
    for _path, line_no, obj in jsonl_rows(path):
        for key in ("id", "reply"):
            if key not in obj:
                raise TaskDataError(path, "missing", line_no, key)
        if not isinstance(obj["reply"], str):
            raise TaskDataError(path, "the reply must be a string", line_no, "reply")
        ident = str(obj["id"])
        sample = obj.get("sample", count[ident])
        if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
            raise TaskDataError(path, f"sample must be an integer ≥ 0, got {sample!r}", line_no, "sample")
        if (ident, sample) in taken:
            raise TaskDataError(path, f"id {ident!r} sample {sample} was already given on line "
                                      f"{taken[ident, sample]}", line_no, "sample")
        taken[ident, sample] = line_no
        count[ident] += 1
        out.append(Reply(line_no, ident, obj["reply"], sample))
    return out


def score_replies(tasks: list[TaskInstance], replies: list[Reply], path: Path | str = "replies") -> ReplayResult:
    """Score each reply with its task's scorer (one verdict per reply, several per id when the file
    gives several); an id that is not a task of the suite is an error naming its line."""
    by_id = {t.id: t for t in tasks}
    result = ReplayResult()
    for r in replies:
        task = by_id.get(r.id)
        if task is None:
            raise TaskDataError(path, f"id {r.id!r} is not a task of this suite", r.line, "id")
        sc = score(task, r.reply)
        result.rows.append(ReplyScore(r.id, r.sample, task.source, task.scorer, list(task.answers), sc.predicted,
                                      sc.correct))
    result.missing = len(set(by_id) - {r.id for r in replies})
    return result
