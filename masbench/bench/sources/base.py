"""The two seams of a data source: a reader (``path`` → groups of rows) and a format (rows → tasks).

A suite's data source in its general form is ``{path: P, reader: R, format: F}``; the short keys
(``gsm8k: FILE``, ``masbench: DIR``, …) are sugar for a (reader, format) pair
(:data:`masbench.spec.suite.SUGAR`). Readers and formats are looked up by name in :data:`READERS`
and :data:`FORMATS`; the built-ins are lazy entries below, so nothing depends on import order, and
code registers its own the same way::

    from masbench.bench import FORMATS, RowGroup

    @FORMATS.register("my-format")
    def my_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]: ...

(After inspect_ai's dataset readers, which take a record-to-sample function.)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ...registry import Registry
from ...spec.suite import TaskSource
from ..types import TaskInstance

Row = tuple[Path | str, int, dict[str, Any]]
"""``(where, row_no, row)``: the file (or ``hf:NAME[CONFIG:SPLIT]``) a row came from, its 1-based
number there (what an error names) and the row itself."""


@dataclass(frozen=True)
class RowGroup:
    """Rows a reader read together (one file set, one dataset config): one call of a format."""

    rows: list[Row]
    """The rows, in order (every row, or at most the source's ``n`` when it sets one)."""
    where: str
    """What names this group in an error: the path read, or ``hf:NAME[CONFIG:SPLIT]``."""
    split: str
    """The split the rows belong to (the source's ``split``)."""
    config: str | None = None
    """The dataset config the rows came from (MASBench directory, ``hf`` configs), if any."""
    label_suffix: str | None = None
    """Appended to the task label (``<label>-<suffix>``) so groups of one source keep distinct ids;
    a format whose ids already carry ``config`` (``masbench``) ignores it."""
    files: list[Path] = field(default_factory=list)
    """The local files the rows were read from (none for hub rows)."""
    filetype: str | None = None
    """What the files were read as (``jsonl``, ``json``, ``csv``, ``parquet``) when all alike."""
    total: int | None = None
    """The rows the files or split hold (None: unknown); more than ``len(rows)`` when ``n`` cut them."""

    @property
    def described(self) -> str:
        """What the rows were read from, for a count: ``depth/test`` for a config, else ``where``."""
        return f"{self.config}/{self.split}" if self.config else self.where

    def label(self, base: str) -> str:
        """The task label for this group: ``base``, or ``base-<label_suffix>``."""
        return f"{base}-{self.label_suffix}" if self.label_suffix else base


class Reader(Protocol):
    """``reader(path, source, base_dir)`` → the groups of rows ``path`` holds, yielded lazily (so an
    error in an early group is raised before a later group is read). Bad data raises
    :class:`~masbench.bench.errors.TaskDataError`."""

    def __call__(self, path: str, source: TaskSource, base_dir: Path | None) -> Iterable[RowGroup]: ...


class Format(Protocol):
    """``format(group, source, label)`` → the tasks of one group of rows. ``label`` is the source's
    task label (its ``name``, else the format or short key); the source carries ``fields``,
    ``params``, ``seed``, ``gold_sep``. Bad data raises :class:`~masbench.bench.errors.TaskDataError`."""

    def __call__(self, group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]: ...


_S = "masbench.bench.sources"

READERS: Registry[Reader] = Registry("task reader", {
    "file": f"{_S}.readers:read_files",
    "jsonl": f"{_S}.readers:read_jsonl",
    "json": f"{_S}.readers:read_json",
    "csv": f"{_S}.readers:read_csv",
    "parquet": f"{_S}.readers:read_parquet",
    "hf": f"{_S}.hf:read_hf",
    "masbench-dir": f"{_S}.masbench_dir:read_masbench_dir",
    "legacy-jsonl": f"{_S}.legacy:read_legacy_jsonl",
    "legacy-parquet": f"{_S}.legacy:read_legacy_parquet",
}, plugins="masbench.readers")
"""Readers by name: ``path`` (+ the source's ``n``, ``split``, ``configs``) → groups of rows."""

FORMATS: Registry[Format] = Registry("task format", {
    "masbench": f"{_S}.masbench:masbench_format",
    "smfr": f"{_S}.smfr:smfr_format",
    "search": f"{_S}.search:search_format",
    "gsm8k": f"{_S}.reasoning:gsm8k_format",
    "math": f"{_S}.reasoning:math_format",
    "aime": f"{_S}.reasoning:aime_format",
    "choice": f"{_S}.choice:choice_format",
    "table": f"{_S}.table:table_format",
    "guess": f"{_S}.guess:guess_format",
    "open": f"{_S}.open_ended:open_format",
}, plugins="masbench.formats")
"""Formats by name: a group of rows → tasks."""
