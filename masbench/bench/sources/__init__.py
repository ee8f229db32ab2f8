"""Task sources for published data, loaded as published (no conversion step by the user).

One suite ``tasks:`` entry names one source by its key:

============  ==============================================================  ==========
key           reads                                                           scorer
============  ==============================================================  ==========
``masbench``  a local copy of ``Salesforce/MASBench`` (``<config>/<split>-*.parquet``)  masbench
``smfr``      the Illusion paper's SMFR jsonl rows (file, folder or glob)     smfr
``gsm8k``     GSM8K rows (``####`` answers)                                   gsm8k
``math``      MATH rows (``\\boxed{}`` in the solution; level and type kept)    math
``aime``      AIME-style rows (integer answers)                               aime
``choice``    GPQA-style multiple choice (seeded, recorded shuffle)           choice
``table``     any JSONL/CSV/parquet: dotted ``fields`` paths, ``gold_sep``    numeric (``params.scorer``)
``hf``        the same formats through ``datasets.load_dataset`` (``format:``) as its format
============  ==============================================================  ==========

Bad data raises :class:`~masbench.bench.errors.TaskDataError` naming the file, row and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import TaskDataError
from ..types import TaskInstance
from .choice import choice_tasks
from .hf import hf_rows
from .masbench import CONFIGS, HORIZON_SEP, load_masbench_dir, masbench_tasks
from .readers import expand, read_rows, resolve
from .reasoning import aime_tasks, gsm8k_tasks, math_tasks
from .smfr import smfr_tasks
from .table import table_tasks

KINDS = ("masbench", "smfr", "gsm8k", "math", "aime", "choice", "table", "hf")
"""Suite ``tasks:`` keys handled here (``generator``, ``jsonl`` and ``parquet`` are older keys)."""
FORMATS = KINDS[:-1]
"""Row formats (the ``format:`` of an ``hf:`` source)."""


def _from_rows(fmt: str, rows: list, source: Any, label: str, where: str, several: bool) -> list[TaskInstance]:
    fields = dict(source.fields)
    if fmt == "smfr":
        return smfr_tasks(rows, label, several)
    if fmt == "gsm8k":
        return gsm8k_tasks(rows, label, fields)
    if fmt == "math":
        return math_tasks(rows, label, fields)
    if fmt == "aime":
        return aime_tasks(rows, label, fields)
    if fmt == "choice":
        return choice_tasks(rows, label, fields, source.seed)
    if fmt == "table":
        return table_tasks(rows, label, fields, source.gold_sep, dict(source.params), where)
    raise TaskDataError(where, f"unknown format {fmt!r} (formats: {', '.join(FORMATS)})", field="format")


def source_kind(source: Any) -> str | None:
    """Which key of :data:`KINDS` a task source uses (None: a generator or an older file key)."""
    return next((k for k in KINDS if getattr(source, k, None)), None)


def load_source(source: Any, base_dir: Path | None = None) -> list[TaskInstance]:
    """Tasks of one published-data :class:`~masbench.spec.suite.TaskSource`."""
    kind = source_kind(source)
    if kind is None:
        raise ValueError("not a published-data source")
    label = source.name or ((source.format or "hf") if kind == "hf" else kind)
    ref = getattr(source, kind)
    if kind == "masbench":
        return load_masbench_dir(resolve(ref, base_dir), source.configs, source.split, source.n, label)
    if kind == "hf":
        fmt = source.format or "table"
        tasks: list[TaskInstance] = []
        for config in source.configs or [None]:
            rows = list(hf_rows(ref, config, source.split, source.n, base_dir))
            where = f"hf:{ref}[{config or 'default'}:{source.split}]"
            if fmt == "masbench":
                tasks += masbench_tasks(rows, config or "default", source.split, label)
            else:
                tasks += _from_rows(fmt, rows, source, label if not source.configs else f"{label}-{config}",
                                    where, False)
        return tasks
    files = expand(ref, base_dir)
    return _from_rows(kind, read_rows(files, source.n), source, label, str(resolve(ref, base_dir)), len(files) > 1)


__all__ = ["CONFIGS", "FORMATS", "HORIZON_SEP", "KINDS", "TaskDataError", "load_source", "source_kind"]
