"""Format ``guess``: the older generic reading behind the ``jsonl:`` / ``parquet:`` keys.

Column names are guessed among common ones unless ``fields`` names them (plain column names, not
dotted paths); ``params`` may set ``scorer`` (default ``numeric``), ``extract``, ``field``,
``skills`` and ``axis``.

- The gold: GSM8K ``#### 42`` (what follows the last ``####``), a list, a JSON list string, or a
  scalar; a list gives several answer positions.
- Parquet files: the axis comes from ``params.axis``, an ``axis`` field, or a file stem starting
  with an axis name; a file in the published MASBench layout (``prompt_json``, ``reward_model_json``,
  ``extra_info_json``, no ``fields``) is read as the ``masbench`` format does, its config the
  parent folder (when a published config), else the axis, else ``masbench``.
- Tasks are labelled by the source's ``name``, else the file stem; ids ``<label>-<id>`` or
  ``<label>-<row:04d>`` (0-based, blank lines not counted). Bad data is a ``ValueError``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from ...spec.suite import TaskSource
from ...text import normalize_answer
from ..types import TaskInstance
from .base import RowGroup
from .masbench import CONFIGS, masbench_tasks

AXES = ("depth", "horizon", "breadth", "parallel", "robustness")
"""Axis names a parquet file's stem may start with."""
MASBENCH_COLUMNS = {"prompt_json", "reward_model_json", "extra_info_json"}
"""The columns that mark a file of the published MASBench layout."""

_GUESS = {
    "question": ["question", "problem", "prompt", "input", "query", "instruction"],
    "answer": ["answer", "answers", "gold", "final_answer", "target", "solution", "label", "output"],
    "id": ["id", "uid", "task_id", "qid", "idx"],
    "intermediates": ["intermediates", "intermediate_answers", "sub_answers"],
    "axis_value": ["axis_value", "level", "value", "difficulty"],
}
PARAMS = {"scorer", "extract", "skills", "axis", "field"}
"""The ``params`` this format accepts."""


def gold_list(value: Any) -> list[str]:
    """Gold answers from a cell: GSM8K ``#### 42``, a list, a JSON list string, or a scalar."""
    if value is None:
        return []
    if hasattr(value, "tolist"):  # numpy / pyarrow arrays
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [normalize_answer(str(v)) for v in value]
    text = str(value)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [normalize_answer(str(v)) for v in parsed]
    return [normalize_answer(stripped)]


def _int_value(value: Any) -> int | None:
    """An axis value as an integer where it is one (``"3"``, 3); anything else (``"3-4"``) is None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    return int(text) if text.lstrip("-").isdigit() else None


def _column(row: dict[str, Any], fields: dict[str, str], key: str, required: bool, where: str) -> Any:
    if key in fields:
        if fields[key] not in row:
            raise ValueError(f"{where}: no field {fields[key]!r} (fields.{key}); has {sorted(row)}")
        return row[fields[key]]
    for name in _GUESS.get(key, [key]):
        if name in row:
            return row[name]
    if required:
        raise ValueError(f"{where}: no {key} field among {sorted(row)}; set fields.{key}")
    return None


def guessed_tasks(rows: Iterable[dict[str, Any]], label: str, fields: dict[str, str],
                  params: dict[str, Any], where: str, default_axis: str | None) -> list[TaskInstance]:
    """Tasks from plain rows, their columns guessed (see the module doc)."""
    unknown = set(params) - PARAMS
    if unknown:
        raise ValueError(f"{where}: unknown params {sorted(unknown)} for a file source "
                         f"(allowed: {sorted(PARAMS)})")
    tasks = []
    for i, row in enumerate(rows):
        at = f"{where} row {i + 1}"
        question = _column(row, fields, "question", True, at)
        answers = gold_list(_column(row, fields, "answer", True, at))
        if not answers:
            raise ValueError(f"{at}: empty answer")
        ident = _column(row, fields, "id", False, at)
        axis = _column(row, fields, "axis", False, at) if "axis" in fields else None
        axis = str(axis) if axis else params.get("axis", default_axis)
        axis_value = _column(row, fields, "axis_value", False, at) if axis else None
        inter = _column(row, fields, "intermediates", False, at)
        meta: dict[str, Any] = {"row": i}
        for key in ("extract", "field"):
            if key in params:
                meta[key] = params[key]
        tasks.append(TaskInstance(
            id=f"{label}-{ident}" if ident is not None else f"{label}-{i:04d}",
            source=label,
            question=str(question),
            answers=answers,
            intermediates=gold_list(inter) if inter is not None else [],
            axis=axis,
            axis_value=_int_value(axis_value),
            skills=list(params.get("skills", ["math.word_problem"])),
            scorer=params.get("scorer", "numeric"),
            meta=meta,
        ))
    return tasks


def guessed_group(group: RowGroup, fields: dict[str, str], params: dict[str, Any],
                  name: str | None) -> list[TaskInstance]:
    """Tasks of one group of rows (see the module doc), labelled ``name`` or the file stem."""
    path = group.files[0] if len(group.files) == 1 else Path(group.where)
    parquet = group.filetype == "parquet"
    stem = path.stem.lower()
    axis = next((a for a in AXES if stem.startswith(a)), None) if parquet else None
    if parquet and not fields and group.rows and MASBENCH_COLUMNS <= set(group.rows[0][2]):
        config = path.parent.name if path.parent.name in CONFIGS else (axis or "masbench")
        return masbench_tasks(group.rows, config, stem.split("-", 1)[0], name or "masbench")
    return guessed_tasks([r for _f, _i, r in group.rows], name or path.stem, fields, params, group.where, axis)


def guess_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Format ``guess``; ``label`` is not used: the default label is the file stem, as it always was."""
    return guessed_group(group, dict(source.fields), dict(source.params), source.name)
