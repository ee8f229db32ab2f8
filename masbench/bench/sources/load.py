"""A data source's tasks: its reader's groups of rows, each turned into tasks by its format; and the
suite check that every reader and format a suite names is registered."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ...registry import Registry, RegistryError
from ...spec.problems import Problem, problem_at
from ...spec.suite import SuiteSpec, TaskSource
from ...spec.yamlpos import Located
from ..errors import TaskDataError
from ..reads import SourceRead
from ..types import TaskInstance
from .base import FORMATS, READERS

if TYPE_CHECKING:
    from ...library import Library

T = TypeVar("T")


def _lookup(registry: Registry[T], name: str, where: str, field: str) -> T:
    try:
        return registry[name]
    except RegistryError as exc:
        raise TaskDataError(where, str(exc), field=field) from None


def read_source_counted(source: TaskSource, base_dir: Path | None = None
                        ) -> tuple[list[TaskInstance], list[SourceRead]]:
    """Tasks of one data source (any but a generator), paths resolved against ``base_dir``, and
    what each of its groups read (rows read, rows there, the cap). An unknown reader or format,
    and bad data, raise :class:`TaskDataError`."""
    route = source.route()
    if route is None:
        raise ValueError("not a data source (a generator makes its own tasks)")
    reader = _lookup(READERS, route.reader, route.path, "reader")
    fmt = _lookup(FORMATS, route.format, route.path, "format")
    tasks: list[TaskInstance] = []
    reads: list[SourceRead] = []
    for group in reader(route.path, source, base_dir):
        made = fmt(group, source, route.label)
        tasks += made
        label = made[0].source if made else route.label  # the label the tasks carry (reports group by it)
        reads.append(SourceRead(label, group.described, len(made), len(group.rows),
                                group.total, source.n))
    return tasks, reads


def read_source(source: TaskSource, base_dir: Path | None = None) -> list[TaskInstance]:
    """Tasks of one data source (:func:`read_source_counted` without the counts)."""
    return read_source_counted(source, base_dir)[0]


def check_sources(suite: SuiteSpec, located: Located, lib: "Library") -> list[Problem]:
    """Suite check (``CHECKS["suite.sources"]``): each data source's reader and format is registered."""
    problems: list[Problem] = []
    for i, source in enumerate(suite.tasks):
        route = source.route()
        if route is None:
            continue
        for field, registry, name in (("reader", READERS, route.reader), ("format", FORMATS, route.format)):
            if name not in registry:
                known = ", ".join(sorted(registry.names()))
                problems.append(problem_at(located, ("tasks", i, field),
                                           f"unknown task {field} {name!r} (known: {known})"))
    return problems
