"""The standard reasoning sets as published: GSM8K, MATH and AIME-style rows.

- GSM8K (``openai/gsm8k``): ``question``, ``answer`` = worked solution ending ``#### 72``; the gold
  is what follows the last ``####`` (thousands commas dropped).
- MATH (``hendrycks/competition_math``, MATH-500): ``problem``, ``solution`` whose last
  ``\\boxed{}`` is the gold (an ``answer`` column, as in MATH-500, wins when present); ``level`` and
  ``type`` are kept (``meta`` and a ``math.<type>`` skill tag).
- AIME (e.g. ``AI-MO/aimo-validation-aime``, ``Maxwell-Jia/AIME_2024``): ``problem`` / ``Problem``,
  ``answer`` / ``Answer`` an integer 0–999.

Column names are found case-insensitively; ``fields`` (dotted paths) overrides them.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from ...spec.suite import TaskSource
from ...text import boxed_spans, normalize_answer
from ..errors import TaskDataError
from ..types import TaskInstance
from .base import RowGroup
from .fields import first_present, get_path

Rows = Iterable[tuple[object, int, dict[str, Any]]]

_DEFAULTS = {
    "gsm8k": {"question": ["question"], "answer": ["answer"]},
    "math": {"question": ["problem", "question"], "answer": ["answer"], "solution": ["solution"]},
    "aime": {"question": ["problem", "question"], "answer": ["answer"]},
}


def _field(row: dict[str, Any], fields: dict[str, str], role: str, kind: str, file: object, row_no: int,
           required: bool = True) -> Any:
    if role in fields:
        return get_path(row, fields[role], file, row_no, required)
    col = first_present(row, _DEFAULTS[kind].get(role, [role]))
    if col is None:
        if required:
            raise TaskDataError(file, f"no {role} column among {', '.join(sorted(row))}; set fields.{role}",
                                row_no, role)
        return None
    return row[col]


def _ident(row: dict[str, Any], fields: dict[str, str], file: object, row_no: int) -> str:
    if "id" in fields:
        return str(get_path(row, fields["id"], file, row_no))
    col = first_present(row, ["id", "unique_id", "uid", "idx"])
    return str(row[col]) if col is not None else f"{row_no:04d}"


def gsm8k_gold(text: str, file: object, row_no: int) -> str:
    """The number after the last ``####`` of a GSM8K solution."""
    if "####" not in text:
        raise TaskDataError(file, "no '#### <answer>' in the GSM8K solution", row_no, "answer")
    gold = text.rsplit("####", 1)[1].strip().replace(",", "")
    if not gold:
        raise TaskDataError(file, "nothing after '####'", row_no, "answer")
    return gold


def gsm8k_tasks(rows: Rows, label: str, fields: dict[str, str]) -> list[TaskInstance]:
    out = []
    for file, i, row in rows:
        q = _field(row, fields, "question", "gsm8k", file, i)
        gold = gsm8k_gold(str(_field(row, fields, "answer", "gsm8k", file, i)), file, i)
        out.append(TaskInstance(id=f"{label}-{_ident(row, fields, file, i)}", source=label, question=str(q),
                                answers=[normalize_answer(gold)], skills=["math.word_problem"], scorer="gsm8k",
                                meta={"gold": [gold], "file": str(file), "row": i}))
    return out


def math_tasks(rows: Rows, label: str, fields: dict[str, str]) -> list[TaskInstance]:
    out = []
    for file, i, row in rows:
        q = _field(row, fields, "question", "math", file, i)
        gold = _field(row, fields, "answer", "math", file, i, required=False)
        if gold in (None, ""):
            solution = _field(row, fields, "solution", "math", file, i)
            boxes = boxed_spans(str(solution))
            if not boxes:
                raise TaskDataError(file, "no \\boxed{} answer in the solution", i, "solution")
            gold = boxes[-1]
        level = row.get("level") if "level" in row else row.get("Level")
        kind = row.get("type") if "type" in row else row.get("subject")
        tag = re.sub(r"[^a-z0-9]+", "_", str(kind).lower()).strip("_") if kind else "competition"
        out.append(TaskInstance(id=f"{label}-{_ident(row, fields, file, i)}", source=label, question=str(q),
                                answers=[str(gold).strip()], skills=[f"math.{tag}"], scorer="math",
                                meta={"gold": [str(gold).strip()], "level": level, "type": kind,
                                      "file": str(file), "row": i}))
    return out


def aime_tasks(rows: Rows, label: str, fields: dict[str, str]) -> list[TaskInstance]:
    out = []
    for file, i, row in rows:
        q = _field(row, fields, "question", "aime", file, i)
        raw = str(_field(row, fields, "answer", "aime", file, i)).strip()
        boxes = boxed_spans(raw)
        text = boxes[-1] if boxes else raw
        if not re.fullmatch(r"0*\d{1,3}", text):
            raise TaskDataError(file, f"AIME answers are integers 0-999, got {raw!r}", i, "answer")
        gold = str(int(text))
        out.append(TaskInstance(id=f"{label}-{_ident(row, fields, file, i)}", source=label, question=str(q),
                                answers=[gold], skills=["math.competition"], scorer="aime",
                                meta={"gold": [gold], "file": str(file), "row": i}))
    return out


def gsm8k_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Format ``gsm8k``: ``question`` and an ``answer`` ending ``#### <gold>``."""
    return gsm8k_tasks(group.rows, group.label(label), dict(source.fields))


def math_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Format ``math``: ``problem`` and a ``solution`` whose last ``\\boxed{}`` is the gold."""
    return math_tasks(group.rows, group.label(label), dict(source.fields))


def aime_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Format ``aime``: ``problem`` and an integer ``answer`` 0-999."""
    return aime_tasks(group.rows, group.label(label), dict(source.fields))
