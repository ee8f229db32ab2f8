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
    n = source.n or GENERATOR_N
    if source.distinct:
        tasks = distinct_tasks(lambda m: fn(source.values, m, source.seed, source.split, **source.params), n,
                               source.generator)
    else:
        tasks = fn(source.values, n, source.seed, source.split, **source.params)
    if source.name and source.name != source.generator:
        tasks = [t.model_copy(update={"id": f"{source.name}-{t.id}", "source": source.name})
                 for t in tasks]
    return SuiteTasks(tasks, [SourceRead(source.name or source.generator, source.generator, len(tasks),
                                         repeated=repeated_questions(tasks))])


DISTINCT_DRAWS = 64
"""``distinct: true`` draws up to this many instances per value for each task it keeps."""


def repeated_questions(tasks: list[TaskInstance]) -> int:
    """How many of ``tasks`` ask a question an earlier one already asks."""
    return len(tasks) - len({t.question for t in tasks})


def distinct_tasks(make: Callable[[int], list[TaskInstance]], n: int, what: str) -> list[TaskInstance]:
    """``n`` tasks per axis value, none asking a question an earlier one asks: ``make(m)`` is the
    generator at ``m`` instances per value (values in blocks of ``m``, instance i the same whatever
    ``m``: more instances never change the first ones), asked for twice as many until every value's
    block holds ``n`` new questions, in draw order."""
    m = n
    while True:
        made = make(m)
        if len(made) % m:
            raise ValueError(f"generator {what!r}: distinct: needs {m} tasks per value, got {len(made)} in all")
        seen: set[str] = set()
        out: list[TaskInstance] = []
        short = False
        for b in range(0, len(made), m):
            kept = 0
            for t in made[b:b + m]:
                if kept == n:
                    break
                if t.question not in seen:
                    seen.add(t.question)
                    out.append(t)
                    kept += 1
            short = short or kept < n
        if not short:
            return out
        if m >= DISTINCT_DRAWS * n:
            raise ValueError(f"generator {what!r}: fewer than {n} distinct questions per value in {m} draws "
                             "(ask for fewer: n)")
        m *= 2


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
            if task.id in seen:  # the one check that a run's task ids are unique
                if seen[task.id] == k:
                    raise ValueError(f"suite {suite.name!r}: task id {task.id!r} appears twice in source #{k + 1}")
                raise ValueError(f"suite {suite.name!r}: task id {task.id!r} appears in sources "
                                 f"#{seen[task.id] + 1} and #{k + 1}; give the sources distinct names")
            seen[task.id] = k
            out.tasks.append(task)
    return out


def load_suite_tasks(suite: SuiteSpec, base_dir: Path | None = None) -> list[TaskInstance]:
    """All tasks of a :class:`~masbench.spec.suite.SuiteSpec`, in source order; ids must be unique."""
    return load_suite(suite, base_dir).tasks
