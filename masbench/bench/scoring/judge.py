"""The ``judge`` scorer: a model reads the task, the reference (if any) and the reply under a rubric,
and its replies are parsed to a verdict.

This module never calls a model. It renders the judge's messages (:func:`judge_calls`), parses
what came back (:func:`parse_score`) and aggregates the ``k`` samples (:func:`aggregate`); the
harness hands it an ``ask`` coroutine that makes one call through the gateway (purpose ``scoring``,
cached like any call). Registered in :data:`~masbench.bench.registry.MODEL_SCORERS`, the scorers
that need a model; :func:`~masbench.bench.scorers.score` refuses them with a clear error.

Where a task also has a rule-checkable gold (``meta["check"]`` names a rule scorer, or its own
scorer is one), the rule's verdict is computed beside the judge's (``rule_correct``): that is
what ``masbench judge check`` measures the judge against, and what a simulated judge is told.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from ...spec.agent import AgentSpec
from ...spec.judge import DEFAULT_TASK_RUBRIC, JudgeSpec
from ..registry import MODEL_SCORERS, SCORERS
from ..types import Score, TaskInstance

PROMPT_NAMES = ("question", "task", "reply", "reference", "rubric")
"""The names a judge agent's own ``prompt`` may use (``{question}`` is the rendered rubric)."""
RUBRIC_NAMES = ("task", "reply", "reference", "reference_block", "rubric", "first", "second")
"""The names a rubric template may use."""

_NAME = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_.]*)\}(?!\})")


def unknown_names(template: str, allowed: tuple[str, ...]) -> list[str]:
    """The ``{name}`` references of a template that are not in ``allowed`` (in order, once each)."""
    return list(dict.fromkeys(n for n in _NAME.findall(template) if n not in allowed))


def fill(template: str, values: dict[str, str]) -> str:
    """``template`` with every ``{name}`` of ``values`` replaced (other braces left as written)."""
    return _NAME.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), template)


@dataclass(frozen=True, slots=True)
class JudgeCall:
    """One judge sample to make: its messages, its sample index (the cache key's and the
    simulator's seed), the hints a simulated judge needs, and where the reply stood (pairwise)."""

    messages: list[dict[str, Any]]
    sample_index: int
    meta: dict[str, Any]
    position: str | None = None


Ask = Callable[[JudgeCall], Awaitable["str | None"]]
"""One judge call: the judge's reply text, or None when the call failed."""


@dataclass(slots=True)
class Judged:
    """A reply scored by a judge: the score the results row keeps, and how it came about."""

    score: Score
    judge: str
    """The judge agent's name."""
    samples: list[float | None]
    """Each sample's parsed score in [0, 1] (None: unparsed or failed)."""
    passes: int
    """Samples that passed (score ≥ threshold)."""
    value: float
    """The aggregate: share of passing samples (majority) or mean score (mean)."""
    rule_correct: bool | None = None
    """The rule-checked verdict, where the task has a checkable gold."""
    texts: list[str | None] = field(default_factory=list)
    """The judge's replies (for the detail column)."""


def rule_scorer(task: TaskInstance) -> str | None:
    """The rule scorer that checks this task's gold (``meta["check"]``, else its own scorer when
    that one needs no model), or None: an open-ended task without a checkable gold."""
    name = task.meta.get("check") or (task.scorer if task.scorer not in MODEL_SCORERS else None)
    return str(name) if name and task.answers else None


def rule_verdict(task: TaskInstance, answers: list[str], reply: str | None) -> bool | None:
    """The task's rule-checked verdict on a reply (None where it has no checkable gold)."""
    name = rule_scorer(task)
    if name is None:
        return None
    from ..scorers import score  # the entry point (reply scorers read the whole reply)

    return score(task.model_copy(update={"scorer": name}), answers, reply=reply).correct


def _draw(*parts: object) -> int:
    return int.from_bytes(hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest(), "big")


def position_of(spec: JudgeSpec, task: TaskInstance, j: int) -> str:
    """Where the reply stands in sample ``j`` of a pairwise comparison (``A`` or ``B``): seeded by
    the judge's seed, the task and the sample, so a re-score asks the same questions."""
    return "A" if _draw("position", spec.seed, task.id, j) % 2 == 0 else "B"


def judge_calls(task: TaskInstance, reply: str, spec: JudgeSpec, agent: AgentSpec,
                truth: bool | None = None) -> list[JudgeCall]:
    """The ``k`` calls that judge ``reply``. ``truth``: the rule's verdict, told to a simulated
    judge only (request metadata never reaches a real model)."""
    reference = str(task.meta.get("reference") or (", ".join(task.answers) if task.answers else ""))
    rubric = str(task.meta.get("rubric") or DEFAULT_TASK_RUBRIC)
    out = []
    for j in range(spec.k):
        values = {"task": task.question, "reply": reply, "reference": reference, "rubric": rubric,
                  "reference_block": f"Reference answer:\n{reference}\n\n" if reference else ""}
        position = None
        if spec.scale == "pairwise":
            position = position_of(spec, task, j)
            values["first"], values["second"] = (reply, reference) if position == "A" else (reference, reply)
        question = fill(spec.template(), values)
        user = fill(agent.prompt, {**values, "question": question})
        messages = ([{"role": "system", "content": agent.system}] if agent.system else []) + \
            [{"role": "user", "content": user}]
        meta = {"sim": {"mode": "grade", "truth": truth, "scale": spec.scale, "task": task.id, "agent": agent.name,
                        "skills": ["judge"], **({"position": position} if position else {})}}
        out.append(JudgeCall(messages, spec.seed * 1000 + j, meta, position))
    return out


_VERDICT = re.compile(r"verdict\s*[:=]?\s*\**\s*(pass|fail)", re.IGNORECASE)
_WORD = re.compile(r"\b(pass|fail|correct|incorrect)(?:ed|es|s)?\b", re.IGNORECASE)
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
_SCORE = re.compile(r"score\s*[:=]?\s*\**\s*(-?\d+(?:\.\d+)?)(?:\s*(?:/|out of)\s*(\d+(?:\.\d+)?))?", re.IGNORECASE)
_WINNER = re.compile(r"winner\s*[:=]?\s*\**\s*(?:reply\s+)?(A|B|tie)\b", re.IGNORECASE)


def parse_score(text: str | None, spec: JudgeSpec, position: str | None = None) -> float | None:
    """One judge reply as a score in [0, 1], or None when it says nothing parseable.

    ``pass-fail``: the last "Verdict: PASS/FAIL", else the last PASS/FAIL (or CORRECT/INCORRECT)
    word, else a reply that starts with Yes or No; ``graded``: the last "Score: N" (or "N/M",
    "N out of M") over ``max_score``, clipped;
    ``pairwise``: the last "Winner: A/B/TIE" — 1 when the reply won, 0.5 a tie, 0 it lost."""
    if not text:
        return None
    if spec.scale == "graded":
        hits = _SCORE.findall(text)
        if not hits:
            return None
        value, top = hits[-1]
        return min(1.0, max(0.0, float(value) / (float(top) if top and float(top) > 0 else spec.max_score)))
    if spec.scale == "pairwise":
        won = _WINNER.findall(text)
        if not won:
            return None
        w = won[-1].upper()
        return 0.5 if w == "TIE" else 1.0 if w == (position or "A") else 0.0
    said = _VERDICT.findall(text) or _WORD.findall(text) or _YES_NO.findall(text)
    if not said:
        return None
    return 1.0 if said[-1].lower() in ("pass", "correct", "yes") else 0.0


def aggregate(samples: list[float | None], spec: JudgeSpec) -> tuple[bool, float, int]:
    """(passed, aggregate value, passing samples) of a reply's samples (see :class:`JudgeSpec`)."""
    counted = [0.0 if s is None else s for s in samples] if spec.unparsed == "fail" else \
        [s for s in samples if s is not None]
    passes = sum(1 for s in counted if s >= spec.threshold)
    if not counted:
        return False, 0.0, 0
    if spec.aggregate == "mean":
        value = sum(counted) / len(counted)
        return value >= spec.threshold, value, passes
    return passes * 2 > len(counted), passes / len(counted), passes


class JudgeScorer:
    """The ``judge`` model scorer."""

    async def score(self, task: TaskInstance, reply: str | None, answers: list[str], spec: JudgeSpec,
                    agent: AgentSpec, ask: Ask) -> Judged:
        """Judge one reply: ``k`` calls through ``ask``, parsed and aggregated. An empty reply fails
        without a call."""
        truth = rule_verdict(task, answers, reply)
        if not reply or not reply.strip():
            samples: list[float | None] = [None] * spec.k
            texts: list[str | None] = [None] * spec.k
        else:
            calls = judge_calls(task, reply, spec, agent, truth)
            texts = list(await asyncio.gather(*(ask(c) for c in calls)))
            samples = [parse_score(t, spec, c.position) for t, c in zip(texts, calls)]
        ok, value, passes = aggregate(samples, spec)
        sc = Score(correct=ok, partial=value, predicted=list(answers), gold=list(task.answers), positions=[ok])
        return Judged(sc, agent.name, samples, passes, value, truth, texts)


def _needs_a_model(task: TaskInstance, predicted: list[str]) -> Score:
    raise ValueError(f"task {task.id!r}: scorer 'judge' asks a model; it scores inside a run (the suite's "
                     "`judge:` block), not from extracted answers")


MODEL_SCORERS.add("judge", JudgeScorer())
SCORERS.add("judge", _needs_a_model)

__all__ = ["Ask", "JudgeCall", "JudgeScorer", "Judged", "PROMPT_NAMES", "RUBRIC_NAMES", "aggregate", "fill",
           "judge_calls", "parse_score", "position_of", "rule_scorer", "rule_verdict", "unknown_names"]
