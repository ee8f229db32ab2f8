"""The two records the bench produces: a task instance and the score of one prediction."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..spec.base import document_fields


class TaskInstance(BaseModel):
    """One benchmark task: the text a model sees, its gold answers, and how to score it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # fields documented below

    id: str
    """Stable unique id, e.g. ``depth-3-test-s0-0007``."""
    source: str
    """Group label: the task source's ``name``, else the generator name or the file stem."""
    question: str
    """The full text given to the model."""
    answers: list[str]
    """Gold final answer(s), position-ordered, as normalized strings."""
    intermediates: list[str] = Field(default_factory=list)
    """Gold intermediate answers (sub-task answers that feed the final ones), normalized."""
    axis: str | None = None
    """MASBench axis: ``depth``, ``horizon``, ``breadth``, ``parallel``, ``robustness`` or None."""
    axis_value: int | None = None
    """The axis value this instance was generated for (None outside the five axes)."""
    skills: list[str] = Field(default_factory=list)
    """Dotted skill tags for routing, e.g. ``["masbench.depth", "arith.add"]``."""
    scorer: str = "numeric"
    """Registered scorer name: ``numeric``, ``set`` or ``exact``."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Everything else: ``dag`` (networkx node-link JSON), ``templates``, ``split``, ``seed``...;
    ``evidence`` (a list of document ids holding the facts the answer needs) is stored with the
    result, so retrieval recall can be scored (``results.evidence``)."""


class Score(BaseModel):
    """The verdict on one prediction: all-or-nothing correctness plus per-position partial credit."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # fields documented below

    correct: bool
    """True only if every gold position is matched (all-or-nothing)."""
    partial: float
    """Share of gold positions matched, in [0, 1] (reported separately, never used as accuracy)."""
    predicted: list[str]
    """The extracted predicted answers, normalized."""
    gold: list[str]
    """The gold answers."""
    positions: list[bool] = Field(default_factory=list)
    """Per-position verdicts, aligned with ``gold``."""


document_fields(TaskInstance)  # the field docstrings, as descriptions (masbench.spec.base)
document_fields(Score)
