"""SMFR rows as the Illusion paper publishes them (``balanced_dataset_single_{N}_fixed.jsonl``).

A row: ``problem`` (text), ``answer`` = ``{"investor_dates": {name: [dates]}, "comparison":
{name: date | null}, "answer": [names]}``, ``cot``, ``metadata`` = ``{task_type, seed,
num_instances, aggregation_op, task_params {price_type, question_type, target_percentage,
num_distractors}, breadth, depth, updatable_data}``, ``generation_params``.

The gold is the set ``answer.answer`` (one answer position, scored by set equality); the candidates
are the investor names (keys of ``investor_dates``); N (``metadata.num_instances``) is the task's axis
value (axis ``smfr``), question type, aggregation and price type are its tags.
"""

from __future__ import annotations

from typing import Any, Iterable

from ...spec.suite import TaskSource
from ...text import normalize_answer
from ..errors import TaskDataError
from ..types import TaskInstance
from .base import RowGroup
from .fields import parse_json_cell


def smfr_task(row: dict[str, Any], file: object, row_no: int, ident: str, label: str) -> TaskInstance:
    """One published SMFR row as a task."""
    if not isinstance(row.get("problem"), str):
        raise TaskDataError(file, "expected the problem text", row_no, "problem")
    answer = parse_json_cell(row.get("answer"), file, row_no, "answer")
    if not isinstance(answer, dict) or not isinstance(answer.get("answer"), list):
        raise TaskDataError(file, "expected an object whose 'answer' is a list of names", row_no, "answer")
    names = [str(x) for x in answer["answer"]]
    if not names:
        raise TaskDataError(file, "empty gold list (published SMFR never has a 'none' answer)", row_no,
                            "answer.answer")
    dates = answer.get("investor_dates") or {}
    if not isinstance(dates, dict):
        raise TaskDataError(file, "expected an object {investor: [dates]}", row_no, "answer.investor_dates")
    candidates = list(dates) or list(answer.get("comparison") or {}) or names
    meta_in = parse_json_cell(row.get("metadata") or {}, file, row_no, "metadata")
    if not isinstance(meta_in, dict):
        raise TaskDataError(file, "expected an object", row_no, "metadata")
    params = meta_in.get("task_params") or {}
    n_inv = meta_in.get("num_instances")
    tags = ["smfr"]
    for key, value in (("question", params.get("question_type")), ("aggregation", meta_in.get("aggregation_op")),
                       ("price", params.get("price_type"))):
        if value:
            tags.append(f"smfr.{key}.{str(value).lower()}")
    meta = {"candidates": candidates, "gold_names": sorted(names), "investor_dates": dates,
            "comparison": answer.get("comparison"), "metadata": meta_in, "file": str(file), "row": row_no,
            "tie": len(names) > 1}
    return TaskInstance(
        id=f"{label}-{ident}", source=label, question=row["problem"],
        answers=[normalize_answer(", ".join(sorted(names)))],
        intermediates=[], axis="smfr", axis_value=int(n_inv) if isinstance(n_inv, int) else None,
        skills=tags, scorer="smfr", meta=meta)


def smfr_tasks(rows: Iterable[tuple[object, int, dict[str, Any]]], label: str, several_files: bool) -> list[TaskInstance]:
    """Tasks from published SMFR rows; ids are ``<name>-n<N>-<row>`` (``<name>-<file>-<row>`` over
    several files, so merged and per-N files never collide)."""
    out = []
    for file, row_no, row in rows:
        if several_files:
            ident = f"{getattr(file, 'stem', file)}-{row_no:04d}"
        else:
            raw_meta = row.get("metadata")
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            n_inv = meta.get("num_instances")
            ident = f"n{n_inv}-{row_no:04d}" if n_inv is not None else f"{row_no:04d}"
        out.append(smfr_task(row, file, row_no, ident, label))
    return out


def smfr_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Format ``smfr``: the Illusion paper's rows (ids by file when the group spans several files)."""
    return smfr_tasks(group.rows, group.label(label), len(group.files) > 1)
