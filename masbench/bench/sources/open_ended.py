"""Format ``open``: open-ended tasks scored by the suite's model judge, some with a checkable gold.

One row per task: ``question`` (required), ``id``, ``rubric`` (what a good reply does; the judge's
``{rubric}``), ``reference`` (a reference reply the judge may see, never required). A row may also
carry a rule-checkable gold: ``gold`` (a string or a list, one per answer position) and ``check``
(the rule scorer that checks it, default ``exact``) — ``masbench judge check`` measures the
judge's agreement with that rule on those rows. ``fields`` renames the columns
(``{question: prompt}``); ``params`` may set ``skills``.
"""

from __future__ import annotations

from typing import Any

from ...spec.suite import TaskSource
from ...text import normalize_answer
from ..errors import TaskDataError
from ..registry import SCORERS
from ..types import TaskInstance
from .base import RowGroup
from .fields import get_path
from .table import golds

ROLES = ("question", "id", "rubric", "reference", "gold", "check")
"""The columns a row may have (renamed through ``fields``)."""


def open_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Rows → judged tasks (scorer ``judge``); see the module doc."""
    unknown = set(source.fields) - set(ROLES)
    if unknown:
        raise TaskDataError(group.where, f"unknown fields {sorted(unknown)} (roles: {', '.join(ROLES)})",
                            field="fields")
    extra = set(source.params) - {"skills"}
    if extra:
        raise TaskDataError(group.where, f"unknown params {sorted(extra)} (allowed: ['skills'])", field="params")
    name = {r: source.fields.get(r, r) for r in ROLES}
    out = []
    for file, i, row in group.rows:
        def get(role: str, required: bool = False) -> Any:
            return get_path(row, name[role], file, i, required=required)

        question = get("question", required=True)
        if not str(question).strip():
            raise TaskDataError(file, "empty question", i, name["question"])
        gold_value = get("gold")
        gold = golds(gold_value, None, file, i, name["gold"]) if gold_value not in (None, "", []) else []
        check = get("check")
        if check is not None and not gold:
            raise TaskDataError(file, "check: names a rule scorer but the row has no gold", i, name["check"])
        meta: dict[str, Any] = {"file": str(file), "row": i}
        if gold:
            check = str(check or "exact")
            if check not in SCORERS or check == "judge":
                raise TaskDataError(file, f"check: {check!r} is not a rule scorer (registered: "
                                          f"{', '.join(sorted(s for s in SCORERS if s != 'judge'))})", i, name["check"])
            meta.update(check=check, gold=gold)
        for role in ("rubric", "reference"):
            value = get(role)
            if value not in (None, ""):
                meta[role] = str(value)
        ident = get("id")
        out.append(TaskInstance(
            id=f"{group.label(label)}-{ident if ident is not None else f'{i:04d}'}", source=group.label(label),
            question=str(question), answers=[normalize_answer(g) for g in gold],
            skills=list(source.params.get("skills", ["open"])), scorer="judge", meta=meta))
    return out
