"""Any JSONL / CSV / parquet file: dotted field paths into (JSON-string) columns and a gold separator.

``fields`` maps roles to paths — ``question: prompt.0.content``, ``answer: reward_model.ground_truth``,
optional ``id``, ``axis``, ``axis_value``, ``intermediates`` — and ``gold_sep`` splits one gold string
into several answer positions (``"<<horizon>>"`` for MASBench's verl export). A list-valued answer
gives one position per item. ``params`` may set ``scorer`` (default ``numeric``), ``extract``,
``field``, ``skills`` and ``axis``.
"""

from __future__ import annotations

from typing import Any, Iterable

from ...spec.suite import TaskSource
from ...text import normalize_answer
from ..errors import TaskDataError
from ..types import TaskInstance
from .base import RowGroup
from .fields import get_path

PARAMS = {"scorer", "extract", "field", "skills", "axis"}
"""The ``params`` a table source accepts."""


def golds(value: Any, sep: str | None, file: object, row: int, field: str) -> list[str]:
    """Gold answer strings of one cell (a list, or a string split on ``sep``)."""
    if value is None:
        raise TaskDataError(file, "no gold answer", row, field)
    items = [str(v) for v in value] if isinstance(value, (list, tuple)) else \
        str(value).split(sep) if sep else [str(value)]
    items = [x.strip() for x in items]
    if not items or not all(items):
        raise TaskDataError(file, "empty gold answer", row, field)
    return items


def table_tasks(rows: Iterable[tuple[object, int, dict[str, Any]]], label: str, fields: dict[str, str],
                gold_sep: str | None, params: dict[str, Any], where: str) -> list[TaskInstance]:
    unknown = set(params) - PARAMS
    if unknown:
        raise TaskDataError(where, f"unknown params {sorted(unknown)} (allowed: {sorted(PARAMS)})", field="params")
    for role in ("question", "answer"):
        if role not in fields:
            raise TaskDataError(where, f"a table source needs fields.{role} (a dotted path)", field=f"fields.{role}")
    out = []
    for file, i, row in rows:
        question = get_path(row, fields["question"], file, i)
        gold = golds(get_path(row, fields["answer"], file, i), gold_sep, file, i, fields["answer"])
        ident = get_path(row, fields["id"], file, i) if "id" in fields else f"{i:04d}"
        axis = get_path(row, fields["axis"], file, i) if "axis" in fields else params.get("axis")
        value = get_path(row, fields["axis_value"], file, i) if "axis_value" in fields else None
        inter = get_path(row, fields["intermediates"], file, i) if "intermediates" in fields else None
        meta: dict[str, Any] = {"gold": gold, "file": str(file), "row": i}
        if value is not None:
            meta["value"] = value
        for key in ("extract", "field"):
            if key in params:
                meta[key] = params[key]
        text_value = str(value).strip() if value is not None else ""
        out.append(TaskInstance(
            id=f"{label}-{ident}", source=label, question=str(question),
            answers=[normalize_answer(g) for g in gold],
            intermediates=[normalize_answer(x) for x in golds(inter, gold_sep, file, i, fields["intermediates"])]
            if inter not in (None, "", []) else [],
            axis=str(axis) if axis else None,
            axis_value=int(text_value) if text_value.lstrip("-").isdigit() else None,
            skills=list(params.get("skills", ["reasoning"])), scorer=params.get("scorer", "numeric"), meta=meta))
    return out


def table_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Format ``table``: ``fields`` (dotted paths), ``gold_sep`` and ``params`` as above."""
    return table_tasks(group.rows, group.label(label), dict(source.fields), source.gold_sep,
                       dict(source.params), group.where)
