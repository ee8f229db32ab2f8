"""Task loaders: a source's tasks (a generator, or a reader × format data source), and whole suites.

Data sources go through :func:`masbench.bench.sources.read_source` (readers and formats by name);
``load_jsonl`` / ``load_parquet`` are the older generic readers as functions (format ``guess``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..spec.suite import GENERATOR_N, SuiteSpec, TaskSource
from .reads import SourceRead
from .registry import GENERATORS
from .sources import read_source_counted
from .sources.base import Row, RowGroup
from .sources.guess import guessed_group
from .sources.legacy import jsonl_lines, parquet_table_rows
from .types import TaskInstance


def _legacy(rows_of: Callable[[Path, int | None], list[Row]], path: Path, n: int | None,
            fields: dict[str, str] | None, name: str | None, params: dict[str, Any] | None,
            filetype: str) -> list[TaskInstance]:
    path = Path(path)
    group = RowGroup(rows_of(path, n), str(path), "test", files=[path], filetype=filetype)
    return guessed_group(group, dict(fields or {}), dict(params or {}), name)


def load_jsonl(path: Path, n: int | None = None, fields: dict[str, str] | None = None,
               name: str | None = None, params: dict[str, Any] | None = None) -> list[TaskInstance]:
    """Tasks from a GSM8K-style JSONL file (blank lines skipped), at most ``n``."""
    return _legacy(jsonl_lines, path, n, fields, name, params, "jsonl")


def load_parquet(path: Path, n: int | None = None, fields: dict[str, str] | None = None,
                 name: str | None = None, params: dict[str, Any] | None = None) -> list[TaskInstance]:
    """Tasks from a MASBench-layout parquet file, at most ``n`` rows."""
    return _legacy(parquet_table_rows, path, n, fields, name, params, "parquet")


@dataclass
class SuiteTasks:
    """A suite's tasks, and what loading them read (one :class:`SourceRead` per group of rows or
    generator, in source order)."""

    tasks: list[TaskInstance] = field(default_factory=list)
    """All tasks, in source order."""
    reads: list[SourceRead] = field(default_factory=list)
    """Rows read per group (a file set, a dataset config) and tasks made per generator."""


def load_source(source: TaskSource, base_dir: Path | None = None) -> SuiteTasks:
    """Tasks of one :class:`~masbench.spec.suite.TaskSource` and what it read (file paths resolve
    against ``base_dir``)."""
    if not source.generator:
        return SuiteTasks(*read_source_counted(source, base_dir))
    try:
        fn = GENERATORS[source.generator]
    except KeyError:
        raise ValueError(f"unknown generator {source.generator!r}; "
                         f"registered: {', '.join(sorted(GENERATORS))}") from None
    tasks = fn(source.values, source.n or GENERATOR_N, source.seed, source.split, **source.params)
    if source.name and source.name != source.generator:
        tasks = [t.model_copy(update={"id": f"{source.name}-{t.id}", "source": source.name})
                 for t in tasks]
    return SuiteTasks(tasks, [SourceRead(source.name or source.generator, source.generator, len(tasks))])


def load_tasks(source: TaskSource, base_dir: Path | None = None) -> list[TaskInstance]:
    """Tasks of one :class:`~masbench.spec.suite.TaskSource` (file paths resolve against ``base_dir``)."""
    return load_source(source, base_dir).tasks


def load_suite(suite: SuiteSpec, base_dir: Path | None = None, limit: int | None = None) -> SuiteTasks:
    """All tasks of a :class:`~masbench.spec.suite.SuiteSpec`, in source order, and what each source
    read; ids must be unique. ``limit`` keeps the first ``limit`` tasks of each source (``--limit``)."""
    out = SuiteTasks()
    seen: dict[str, int] = {}
    for k, source in enumerate(suite.tasks):
        loaded = load_source(source, base_dir)
        out.reads += loaded.reads
        for task in loaded.tasks[:limit]:
            if task.id in seen:
                raise ValueError(f"suite {suite.name!r}: task id {task.id!r} appears in sources "
                                 f"#{seen[task.id] + 1} and #{k + 1}; give the sources distinct names")
            seen[task.id] = k
            out.tasks.append(task)
    return out


def load_suite_tasks(suite: SuiteSpec, base_dir: Path | None = None) -> list[TaskInstance]:
    """All tasks of a :class:`~masbench.spec.suite.SuiteSpec`, in source order; ids must be unique."""
    return load_suite(suite, base_dir).tasks
