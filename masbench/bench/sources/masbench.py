"""MASBench as published on Hugging Face (``Salesforce/MASBench``), read from a local copy.

Layout: ``<dir>/<config>/test-*.parquet`` and ``<dir>/<config>/train-*.parquet`` for the configs
``breadth depth horizon parallel robustness combine`` (combine: train only, no ``value`` column).
Every column is a string: ``prompt_json`` (chat messages; the question is the user message),
``reward_model_json`` (``{"ground_truth": …, "style": "rule"}``; several answers are one string
joined by ``<<horizon>>``), ``extra_info_json`` (holds ``index``), ``axis``, ``value`` (kept as
published; parsed to an integer only where it is one) and ``data`` (a dataset tag).

Ids are ``<name>-<config>-<split>-<extra_info.index>``, unique across configs and splits. This is the
format; the reader of a local copy of the repository is :mod:`.masbench_dir`.
"""

from __future__ import annotations

from typing import Any, Iterable

from ...spec.suite import TaskSource
from ...text import normalize_answer
from ..errors import TaskDataError
from ..types import TaskInstance
from .base import RowGroup
from .fields import parse_json_cell

CONFIGS = ("breadth", "depth", "horizon", "parallel", "robustness", "combine")
"""The published configs."""
HORIZON_SEP = "<<horizon>>"
"""How the published ground truth joins several answers into one string."""


def _int_or_none(value: Any) -> int | None:
    text = str(value).strip()
    return int(text) if text.lstrip("-").isdigit() else None


def question_of(messages: Any, file: object, row: int, field: str = "prompt_json") -> tuple[str, str | None]:
    """(user message content, system message content or None) of a chat-message list."""
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise TaskDataError(file, "expected a list of chat messages {role, content}", row, field)
    users = [m.get("content") for m in messages if m.get("role") == "user"]
    if not users or not isinstance(users[-1], str):
        raise TaskDataError(file, "no user message with text content", row, field)
    system = next((m.get("content") for m in messages if m.get("role") == "system"), None)
    return users[-1], system


def masbench_task(row: dict[str, Any], file: object, row_no: int, config: str, split: str,
                  label: str) -> TaskInstance:
    """One published MASBench row as a task."""
    for col in ("prompt_json", "reward_model_json", "extra_info_json"):
        if col not in row:
            raise TaskDataError(file, f"no column {col!r} (columns: {', '.join(sorted(row))})", row_no, col)
    messages = parse_json_cell(row["prompt_json"], file, row_no, "prompt_json")
    question, system = question_of(messages, file, row_no)
    reward = parse_json_cell(row["reward_model_json"], file, row_no, "reward_model_json")
    if not isinstance(reward, dict) or "ground_truth" not in reward:
        raise TaskDataError(file, "expected an object with ground_truth", row_no, "reward_model_json")
    gold = [g.strip() for g in str(reward["ground_truth"]).split(HORIZON_SEP)]
    if not all(gold):
        raise TaskDataError(file, "empty ground truth (or an empty <<horizon>> part)", row_no, "reward_model_json")
    extra = parse_json_cell(row["extra_info_json"], file, row_no, "extra_info_json")
    if not isinstance(extra, dict) or "index" not in extra:
        raise TaskDataError(file, "expected an object with index", row_no, "extra_info_json")
    axis = str(row["axis"]) if row.get("axis") not in (None, "") else config
    value = row.get("value")
    meta: dict[str, Any] = {"config": config, "split": split, "index": extra["index"], "extra_info": extra,
                            "gold": gold, "value": value, "data": row.get("data"), "file": str(file), "row": row_no}
    if system is not None:
        meta["system"] = system
    return TaskInstance(
        id=f"{label}-{config}-{split}-{extra['index']}", source=label, question=question,
        answers=[normalize_answer(g) for g in gold], axis=axis,
        axis_value=_int_or_none(value) if value is not None else None,
        skills=[f"masbench.{axis}", "math.igsm"], scorer="masbench", meta=meta)


def masbench_tasks(rows: Iterable[tuple[object, int, dict[str, Any]]], config: str, split: str,
                   label: str) -> list[TaskInstance]:
    """Tasks from rows of one config (from files or from the ``datasets`` library)."""
    return [masbench_task(r, f, i, config, split, label) for f, i, r in rows]


def masbench_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Format ``masbench``: published MASBench rows; ids carry the group's config (``default`` when
    the reader has none) and split, so the group's ``label_suffix`` is not used."""
    return masbench_tasks(group.rows, group.config or "default", group.split, label)
