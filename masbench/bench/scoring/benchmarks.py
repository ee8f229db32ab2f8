"""Scorers true to each benchmark. Each reads the whole reply (when there is one) and applies that
benchmark's own extraction and comparison; given only extracted answers it applies the same rule
to them. Registered by name in :data:`~masbench.bench.registry.REPLY_SCORERS`."""

from __future__ import annotations

import re

from ...text import boxed_spans, name_set, normalize_answer, parse_number
from ..registry import reply_scorer
from ..scorers import numbers_equal
from ..types import Score, TaskInstance
from .mathequal import math_equal
from .replies import answer_region, clean, final_span, gsm8k_span, letter_of


def _score(task: TaskInstance, predicted: list[str], positions: list[bool], correct: bool | None = None) -> Score:
    gold = list(task.answers)
    ok = bool(gold) and all(positions) and len(positions) == len(gold) if correct is None else correct
    return Score(correct=ok, partial=sum(positions) / len(gold) if gold else 0.0,
                 predicted=[normalize_answer(p) for p in predicted], gold=gold, positions=positions)


def _golds(task: TaskInstance) -> list[str]:
    raw = task.meta.get("gold")
    return [str(g) for g in raw] if isinstance(raw, list) and len(raw) == len(task.answers) else list(task.answers)


@reply_scorer("masbench")
def score_masbench(task: TaskInstance, reply: str | None, extracted: list[str]) -> Score:
    """MASBench (MAS-Orchestra's rule-based reward). One gold: the final answer (last ``\\boxed{}``
    in the ``<answer>`` part, else the "Answer:" line / last number) equals the gold as a normalized
    string or symbolically (``math-verify``). Several golds: every ``\\boxed{}`` is extracted, their
    number must equal the number of golds, and all must match in order (all-or-nothing)."""
    golds = _golds(task)
    if len(golds) == 1:
        span = final_span(reply) if reply is not None else (extracted[0] if extracted else None)
        predicted = [span] if span else []
        return _score(task, predicted, [bool(span) and math_equal(span, golds[0])])
    if reply is not None:
        predicted = boxed_spans(answer_region(reply))
    else:
        predicted = [p for p in extracted if p]
    if len(predicted) != len(golds):  # the boxed-count rule: a wrong count is wrong, whatever matches
        return _score(task, predicted, [False] * len(golds), correct=False)
    return _score(task, predicted, [math_equal(p, g) for p, g in zip(predicted, golds)])


@reply_scorer("smfr")
def score_smfr(task: TaskInstance, reply: str | None, extracted: list[str]) -> Score:
    """SMFR (the Illusion paper's diagnostic): set equality of the known investor names found in the
    answer part of the reply (a JSON ``answer`` list kept whole, an "Answer:" line, a ``\\boxed{}``, else
    the reply). A false tie — an extra or a missing name — is wrong."""
    candidates = task.meta.get("candidates")
    gold = set(task.meta.get("gold_names") or name_set(task.answers[0], candidates))
    gold = {normalize_answer(g) for g in gold}
    span = (final_span(reply) if reply is not None else ", ".join(extracted)) or (reply or "")
    found = {normalize_answer(n) for n in name_set(span, candidates)} - {"none"}
    return _score(task, [", ".join(sorted(found))], [bool(found) and found == gold])


@reply_scorer("gsm8k")
def score_gsm8k(task: TaskInstance, reply: str | None, extracted: list[str]) -> Score:
    """GSM8K (lm-evaluation-harness ``gsm8k``): the number after ``####``, else the final answer
    span's number, equals the gold number (commas, ``$`` and ``.0`` do not matter)."""
    span = gsm8k_span(reply) if reply is not None else (extracted[0] if extracted else None)
    return _score(task, [span] if span else [], [bool(span) and numbers_equal(span, task.answers[0])])


@reply_scorer("aime")
def score_aime(task: TaskInstance, reply: str | None, extracted: list[str]) -> Score:
    """AIME: the final answer (last ``\\boxed{}``, else "Answer:" line, else last number) is the gold
    integer (``033`` = ``33``; a non-integer is wrong)."""
    span = final_span(reply) if reply is not None else (extracted[0] if extracted else None)
    value = parse_number(clean(span)) if span else None
    if value is None and span:
        ints = re.findall(r"\d+", clean(span))
        value = parse_number(ints[-1]) if len(ints) == 1 else None
    ok = value is not None and value.denominator == 1 and value == int(task.answers[0])
    return _score(task, [span] if span else [], [ok])


@reply_scorer("math")
def score_math(task: TaskInstance, reply: str | None, extracted: list[str]) -> Score:
    """MATH (Hendrycks et al.; the ``math-verify`` comparison used by lighteval / open-r1): the last
    ``\\boxed{}`` (else the "Answer:" line) is equivalent to the gold, as a string or symbolically."""
    span = final_span(reply) if reply is not None else (extracted[0] if extracted else None)
    return _score(task, [span] if span else [], [bool(span) and math_equal(span, _golds(task)[0])])


@reply_scorer("choice")
def score_choice(task: TaskInstance, reply: str | None, extracted: list[str]) -> Score:
    """Multiple choice (GPQA style): the chosen option letter equals the gold letter."""
    letters = str(task.meta.get("letters") or "ABCD")
    text = reply if reply is not None else " ".join(extracted)
    letter = letter_of(text, letters)
    return _score(task, [letter] if letter else [], [letter == task.answers[0].upper()])
