"""Multiple-choice rows (GPQA style): options shuffled with a seeded, recorded permutation.

Two published shapes are read:

- GPQA (``Idavidrein/gpqa`` CSV): ``Question``, ``Correct Answer``, ``Incorrect Answer 1..3``,
  ``Record ID``. The correct answer is option 0 before shuffling.
- A list of options (MMLU style): ``question``, ``choices`` (a list, or JSON list text) and
  ``answer`` (an index, a letter, or the correct option's text).

The options are shuffled by ``random.Random(f"choice|{seed}|{id}")`` — the same seed and id always
give the same order — and ``meta["permutation"][j]`` is the original index of the option shown as
letter j. The gold is a letter; the ``choice`` scorer compares letters.
"""

from __future__ import annotations

import json
import random
import string
from typing import Any, Iterable

from ...spec.suite import TaskSource
from ..errors import TaskDataError
from ..types import TaskInstance
from .base import RowGroup
from .fields import first_present, get_path

INSTRUCTION = 'Answer with the letter of the correct option, as "Answer: <letter>".'
"""Appended after the options (our wording; GPQA publishes no prompt)."""


def _options(row: dict[str, Any], fields: dict[str, str], file: object, i: int) -> tuple[list[str], int]:
    """(options, index of the correct one) before shuffling."""
    list_column = fields.get("choices") or (None if "Correct Answer" in row else first_present(row, ["choices", "options"]))
    if list_column is not None:  # MMLU style: a list of options and the answer's index / letter / text
        raw = get_path(row, list_column, file, i)
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raise TaskDataError(file, "choices is neither a list nor JSON list text", i, "choices") from None
        if not isinstance(raw, list) or len(raw) < 2:
            raise TaskDataError(file, "expected a list of at least two options", i, "choices")
        options = [str(o).strip() for o in raw]
        ans = get_path(row, fields.get("answer", first_present(row, ["answer", "label"]) or "answer"), file, i)
        if isinstance(ans, int) or str(ans).strip().isdigit():
            correct = int(ans)
        elif len(str(ans).strip()) == 1 and str(ans).strip().upper() in string.ascii_uppercase[:len(options)]:
            correct = string.ascii_uppercase.index(str(ans).strip().upper())
        elif str(ans).strip() in options:
            correct = options.index(str(ans).strip())
        else:
            raise TaskDataError(file, f"answer {ans!r} is not an index, a letter or an option", i, "answer")
        if not 0 <= correct < len(options):
            raise TaskDataError(file, f"answer index {correct} is outside the {len(options)} options", i, "answer")
        return options, correct
    right = fields.get("correct", "Correct Answer")
    wrong = [k for k in row if k.lower().startswith("incorrect answer")] if "incorrect" not in fields else \
        [s.strip() for s in fields["incorrect"].split(",")]
    options = [str(get_path(row, right, file, i)).strip()]
    for key in sorted(wrong):
        options.append(str(get_path(row, key, file, i)).strip())
    if len(options) < 2:
        raise TaskDataError(file, "no 'Incorrect Answer N' columns", i, "Incorrect Answer 1")
    return options, 0


def choice_tasks(rows: Iterable[tuple[object, int, dict[str, Any]]], label: str, fields: dict[str, str],
                 seed: int) -> list[TaskInstance]:
    out = []
    for file, i, row in rows:
        qcol = fields.get("question") or first_present(row, ["Question", "question", "problem"])
        if qcol is None:
            raise TaskDataError(file, f"no question column among {', '.join(sorted(row))}", i, "question")
        question = str(get_path(row, qcol, file, i)).strip()
        idcol = fields.get("id") or first_present(row, ["Record ID", "id", "uid"])
        ident = str(get_path(row, idcol, file, i)) if idcol else f"{i:04d}"
        options, correct = _options(row, fields, file, i)
        order = list(range(len(options)))
        random.Random(f"choice|{seed}|{ident}").shuffle(order)
        letters = string.ascii_uppercase[:len(options)]
        body = "\n".join(f"{letters[j]}) {options[k]}" for j, k in enumerate(order))
        gold = letters[order.index(correct)]
        out.append(TaskInstance(
            id=f"{label}-{ident}", source=label, question=f"{question}\n\n{body}\n\n{INSTRUCTION}",
            answers=[gold], skills=["choice"], scorer="choice",
            meta={"gold": [gold], "options": options, "permutation": order, "letters": letters,
                  "shuffle_seed": seed, "file": str(file), "row": i}))
    return out


def choice_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Format ``choice``: GPQA / MMLU-style rows, options shuffled by the source's ``seed``."""
    return choice_tasks(group.rows, group.label(label), dict(source.fields), source.seed)
