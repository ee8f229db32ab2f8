"""What loading a suite's tasks read: one :class:`SourceRead` per group of rows (a file set, a
MASBench config, an ``hf`` config) or per generator, printed when a suite's tasks load
(``masbench run``, ``masbench tasks show``) so a cap that cuts a published split is never silent."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceRead:
    """The rows one group of a data source read (or the tasks a generator made)."""

    label: str
    """The group's task label (``masbench``, ``smfr``, the source's ``name``, …)."""
    what: str
    """What was read: ``depth/test`` for a dataset config, the path for files; for a generator its
    registered name."""
    tasks: int
    """Tasks the group gave."""
    rows: int | None = None
    """Rows read (None for a generator)."""
    total: int | None = None
    """Rows the files or split hold (None: unknown, or a generator)."""
    cap: int | None = None
    """The source's ``n`` when it is a cap on rows (None: every row was asked for)."""
    repeated: int = 0
    """Tasks of a generator whose question an earlier task of the same source already asks."""

    @property
    def cut(self) -> bool:
        """True when the cap left rows of the split or files unread."""
        return self.rows is not None and self.total is not None and self.total > self.rows

    def line(self) -> str:
        """One line for the terminal or a log: the count, and why rows were left out if they were."""
        if self.rows is None:
            made = f"{self.label}: {self.tasks:,} tasks made by generator {self.what}"
            if self.repeated:
                return (f"warning: {made}, {self.repeated:,} of them repeating an earlier question "
                        "(distinct: true draws distinct ones)")
            return made
        if self.cut:
            assert self.total is not None
            return (f"warning: {self.label}: read {self.rows:,} of {self.total:,} rows of {self.what}: "
                    f"capped by n: {self.cap}")
        return f"{self.label}: read {self.rows:,} rows of {self.what} ({self.tasks:,} tasks)"


def read_lines(reads: list[SourceRead]) -> list[str]:
    """:meth:`SourceRead.line` of each read, in load order."""
    return [r.line() for r in reads]
