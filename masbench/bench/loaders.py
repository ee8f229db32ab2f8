"""Task loaders: a source's tasks (a generator, or a reader × format data source), and whole suites.

Data sources go through :func:`masbench.bench.sources.read_source` (readers and formats by name);
``load_jsonl`` / ``load_parquet`` are the older generic readers as functions (format ``guess``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..spec.suite import SuiteSpec, TaskSource
from .registry import GENERATORS
from .sources import read_source
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


def load_tasks(source: TaskSource, base_dir: Path | None = None) -> list[TaskInstance]:
    """Tasks of one :class:`~masbench.spec.suite.TaskSource` (file paths resolve against ``base_dir``)."""
    if not source.generator:
        return read_source(source, base_dir)
    try:
        fn = GENERATORS[source.generator]
    except KeyError:
        raise ValueError(f"unknown generator {source.generator!r}; "
                         f"registered: {', '.join(sorted(GENERATORS))}") from None
    tasks = fn(source.values, source.n, source.seed, source.split, **source.params)
    if source.name and source.name != source.generator:
        tasks = [t.model_copy(update={"id": f"{source.name}-{t.id}", "source": source.name})
                 for t in tasks]
    return tasks


def load_suite_tasks(suite: SuiteSpec, base_dir: Path | None = None) -> list[TaskInstance]:
    """All tasks of a :class:`~masbench.spec.suite.SuiteSpec`, in source order; ids must be unique."""
    tasks: list[TaskInstance] = []
    seen: dict[str, int] = {}
    for k, source in enumerate(suite.tasks):
        for task in load_tasks(source, base_dir):
            if task.id in seen:
                raise ValueError(f"suite {suite.name!r}: task id {task.id!r} appears in sources "
                                 f"#{seen[task.id] + 1} and #{k + 1}; give the sources distinct names")
            seen[task.id] = k
            tasks.append(task)
    return tasks
