"""Scorers: compare extracted answers with gold, all-or-nothing, with per-position partial credit.

A scorer takes the task and the *raw* predicted spans (one per answer position) and returns a
:class:`~masbench.bench.types.Score`. ``score`` is the entry point: it extracts a reply first.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

from ..text import extract_raw, name_set, normalize_answer, numeric_value, parse_number
from .registry import REPLY_SCORERS, SCORERS, scorer
from .types import Score, TaskInstance

_TOLERANCE = Fraction(1, 10**6)


def _verdict(task: TaskInstance, predicted: list[str], same: Callable[[str, str], bool]) -> Score:
    gold = list(task.answers)
    positions = [i < len(predicted) and same(predicted[i], g) for i, g in enumerate(gold)]
    partial = sum(positions) / len(gold) if gold else 0.0
    return Score(correct=bool(gold) and all(positions), partial=partial,
                 predicted=[normalize_answer(p) for p in predicted], gold=gold, positions=positions)


def numbers_equal(predicted: str, gold: str) -> bool:
    """Exact numeric equality (tolerance 1e-6 relative, for non-terminating decimals)."""
    p, g = numeric_value(predicted), parse_number(gold)
    if p is None:
        return False
    if g is None:
        return normalize_answer(predicted) == normalize_answer(gold)
    return p == g or abs(p - g) <= _TOLERANCE * max(1, abs(g))


@scorer("numeric")
def score_numeric(task: TaskInstance, predicted: list[str]) -> Score:
    """Each position is one number; units, commas, currency and ``.0`` do not matter."""
    return _verdict(task, predicted, numbers_equal)


@scorer("set")
def score_set(task: TaskInstance, predicted: list[str]) -> Score:
    """Each position is a set of names; equal sets only (a false tie is wrong).

    ``task.meta["candidates"]`` (e.g. the investors) lets a reply name them in free text."""
    candidates = task.meta.get("candidates")

    def same(p: str, g: str) -> bool:
        return name_set(p, candidates) == name_set(g, candidates)

    return _verdict(task, predicted, same)


@scorer("exact")
def score_exact(task: TaskInstance, predicted: list[str]) -> Score:
    """Each position must equal the gold after :func:`normalize_answer`."""
    return _verdict(task, predicted, lambda p, g: normalize_answer(p) == normalize_answer(g))


def score(task: TaskInstance, prediction: str | list[str], reply: str | None = None) -> Score:
    """Score a prediction. A string is a model reply: its answers are extracted first (as many as
    the task has, with ``task.meta["extract"]``/``["field"]`` if set); a list is taken as the
    already-extracted answers. A benchmark scorer that reads whole replies (:data:`REPLY_SCORERS`)
    gets the reply — ``prediction`` if it is a string, else ``reply`` — and applies its own rule."""
    if task.scorer in REPLY_SCORERS:
        text = prediction if isinstance(prediction, str) else reply if reply and reply.strip() else None
        extracted = [] if isinstance(prediction, str) else [str(p) for p in prediction]
        return REPLY_SCORERS[task.scorer](task, text, extracted)
    if isinstance(prediction, str):
        predicted = extract_raw(prediction, n=max(1, len(task.answers)),
                                how=task.meta.get("extract", "auto"), field=task.meta.get("field"))
    else:
        predicted = [str(p) for p in prediction]
    try:
        fn = SCORERS[task.scorer]
    except KeyError:
        known = ", ".join(sorted(SCORERS))
        raise ValueError(f"unknown scorer {task.scorer!r}; registered: {known}") from None
    return fn(task, predicted)
