"""A model judge as a scorer: which agent judges, with which rubric, on which scale, how many times.

A suite's ``judge:`` block configures it; tasks whose scorer is ``judge`` (the ``open`` task format,
or ``params: {scorer: judge}`` of a table) are scored by it. ``masbench judge check`` runs the same
judge on tasks that also have a rule-checkable gold and measures its agreement with that gold.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import Spec

DEFAULT_RUBRIC = """Judge a reply to a task.

Task:
{task}

{reference_block}Rubric:
{rubric}

Reply to judge:
{reply}

Does the reply meet the rubric? End with one line: "Verdict: PASS" or "Verdict: FAIL"."""
"""The default rubric template for ``scale: pass-fail``."""

DEFAULT_GRADED_RUBRIC = """Grade a reply to a task.

Task:
{task}

{reference_block}Rubric:
{rubric}

Reply to grade:
{reply}

How well does the reply meet the rubric, from 0 (not at all) to 10 (fully)? End with one line: "Score: N"."""
"""The default rubric template for ``scale: graded``."""

DEFAULT_PAIRWISE_RUBRIC = """Compare two replies to a task.

Task:
{task}

Rubric:
{rubric}

Reply A:
{first}

Reply B:
{second}

Which reply meets the rubric better? End with one line: "Winner: A", "Winner: B" or "Winner: TIE"."""
"""The default rubric template for ``scale: pairwise`` (the reply against the task's reference)."""

DEFAULT_TASK_RUBRIC = "The reply answers the task correctly, completely and without false statements."
"""The rubric of a task that names none (``{rubric}`` in the template)."""

Scale = Literal["pass-fail", "graded", "pairwise"]


class JudgeSpec(Spec):
    """How a judged task is scored: ``k`` calls of the judge agent on a rubric prompt, each parsed
    to a score in [0, 1], aggregated (``majority`` of the per-sample verdicts or the ``mean``
    score) and compared with ``threshold``. Judge calls are ``calls`` rows with purpose ``scoring``:
    cached like any call, never part of a design's cost, budget or curve (docs/judge.md)."""

    agent: str = Field(min_length=1)
    """The judge: any agent YAML (its model alias, system message, temperature, max_tokens and
    stop sequences are used). Its ``prompt`` receives the rendered rubric as ``{question}``; it
    may also name ``{task}``, ``{reply}``, ``{reference}`` and ``{rubric}`` directly."""
    scale: Scale = "pass-fail"
    """``pass-fail`` (the reply must end "Verdict: PASS/FAIL"), ``graded`` ("Score: N" out of
    ``max_score``, divided by it) or ``pairwise`` (the reply against the task's reference, shown
    as A and B in a seeded random order: "Winner: A/B/TIE"; the reply scores 1, 0 or 0.5)."""
    rubric: str | None = None
    """The prompt template. Names: ``{task}`` (the question), ``{reply}``, ``{reference}`` (the
    task's reference answer, "" if none), ``{reference_block}`` ("Reference answer:\\n…\\n\\n" or
    ""), ``{rubric}`` (the task's own rubric, else a generic one), and for ``pairwise`` ``{first}``
    / ``{second}``. None: the built-in template of the scale."""
    threshold: float = Field(default=0.5, ge=0, le=1)
    """A sample passes when its score is at least this; so does a cell's aggregate."""
    max_score: float = Field(default=10.0, gt=0)
    """``graded``: the top of the judge's scale (its "Score: N" is divided by it, clipped to [0, 1])."""
    k: int = Field(default=1, ge=1, le=32)
    """Judge samples per reply."""
    aggregate: Literal["majority", "mean"] = "majority"
    """``majority``: the reply passes when more than half of the samples pass (a tie fails);
    ``mean``: when the mean score reaches ``threshold``."""
    seed: int = 0
    """Fixes the samples (mixed into each call's sample index, so the same seed re-scores from the
    cache at no cost) and the pairwise positions."""
    unparsed: Literal["fail", "skip"] = "fail"
    """A sample whose verdict cannot be parsed: counted as a failing sample (``fail``), or left
    out of the aggregate (``skip``; a cell with no parsed sample fails)."""

    @model_validator(mode="after")
    def _template(self) -> "JudgeSpec":
        if self.rubric is not None and self.scale == "pairwise" and not ("{first}" in self.rubric
                                                                         and "{second}" in self.rubric):
            raise ValueError("a pairwise rubric must name {first} and {second} (the two replies, in random order)")
        if self.rubric is not None and self.scale != "pairwise" and "{reply}" not in self.rubric:
            raise ValueError("a rubric must name {reply} (the reply the judge scores)")
        return self

    def template(self) -> str:
        """The rubric template in use."""
        if self.rubric is not None:
            return self.rubric
        return {"pass-fail": DEFAULT_RUBRIC, "graded": DEFAULT_GRADED_RUBRIC,
                "pairwise": DEFAULT_PAIRWISE_RUBRIC}[self.scale]


__all__ = ["DEFAULT_TASK_RUBRIC", "JudgeSpec", "Scale"]
