"""Answer extraction, normalization and scoring on a table of answer strings."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from masbench.bench import SCORERS, TaskInstance, extract_answers, normalize_answer, score
from masbench.text import canonical_number, extract_raw, parse_number


def task(answers, scorer="numeric", **meta) -> TaskInstance:
    return TaskInstance(id="t", source="test", question="q", answers=answers, scorer=scorer, meta=meta)


# (gold answers, scorer, model reply, expected correct)
TABLE = [
    # --- plain formats, one numeric answer
    (["42"], "numeric", "Answer: 42", True),
    (["42"], "numeric", "answer: 42.", True),
    (["42"], "numeric", "**Answer:** 42", True),
    (["42"], "numeric", "Final Answer: $42", True),
    (["42"], "numeric", "The answer is 42 apples.", True),
    (["42"], "numeric", "So 40 + 2 = 42.\nAnswer: 42.0", True),
    (["42"], "numeric", "I think \\boxed{42}", True),
    (["42"], "numeric", "Answer: \\boxed{42}", True),
    (["42"], "numeric", "40 plus 2 makes 42", True),
    (["42"], "numeric", '{"reasoning": "40+2", "answer": 42}', True),
    (["42"], "numeric", "Answer:\n42", True),
    (["42"], "numeric", "Answer: 3 + 39 = 42", True),
    (["42"], "numeric", "Answer: +42", True),
    (["1000"], "numeric", "Answer: 1,000", True),
    (["1000"], "numeric", "Answer: $1,000.00", True),
    (["12"], "numeric", "Answer: 12 dollars", True),
    (["0.75"], "numeric", "Answer: 3/4", True),
    (["0.75"], "numeric", "\\boxed{\\frac{3}{4}}", True),
    (["1.5"], "numeric", "Answer: 1 1/2", True),
    (["-5"], "numeric", "Answer: −5 degrees", True),
    (["0"], "numeric", "Answer: -0", True),
    (["50"], "numeric", "Answer: 50%", True),
    (["1/3"], "numeric", "Answer: 0.3333333", True),
    # --- near misses, one numeric answer
    (["42"], "numeric", "Answer: 43", False),
    (["42"], "numeric", "Answer: 4.2", False),
    (["42"], "numeric", "Answer: 420", False),
    (["42"], "numeric", "Answer: -42", False),
    (["42"], "numeric", "Answer: 42.5", False),
    (["42"], "numeric", "I don't know.", False),
    (["42"], "numeric", "", False),
    (["1000"], "numeric", "Answer: 1,001", False),
    (["0.75"], "numeric", "Answer: 3/5", False),
    (["1/3"], "numeric", "Answer: 0.33", False),
    (["7"], "numeric", "Answer: 7\nWait, no. Answer: 8", False),
    # --- several answers: all-or-nothing
    (["3", "5"], "numeric", "Answer: 3, 5", True),
    (["3", "5"], "numeric", "Answer 1: 3\nAnswer 2: 5", True),
    (["3", "5"], "numeric", "Answer: 3\nAnswer: 5", True),
    (["3", "5"], "numeric", "Answer: 3; 5", True),
    (["1000", "5"], "numeric", "Answer: 1,000, 5", True),
    (["3", "5"], "numeric", "Answer: 5, 3", False),
    (["3", "5"], "numeric", "Answer: 3", False),
    (["3", "5", "8"], "numeric", "Answer: 3, 5, 9", False),
    # --- sets of names (SMFR): ties
    (["alice"], "set", "Answer: Alice", True),
    (["alice"], "set", "Answer: alice.", True),
    (["alice"], "set", "Answer: Alice, Bob", False),  # false tie
    (["alice, bob"], "set", "Answer: Bob and Alice", True),
    (["alice, bob"], "set", "Answer: Alice", False),  # missed tie
    (["alice, bob"], "set", "Answer: Alice, Bob, Chloe", False),
    (["none"], "set", "Answer: none of them", True),
    # --- exact text
    (["paris"], "exact", "Answer: Paris", True),
    (["paris"], "exact", "Answer: Paris, France", False),
    (["b"], "exact", "Answer: (B)", True),
]


@pytest.mark.parametrize(("gold", "scorer_name", "reply", "expected"), TABLE)
def test_score_table(gold, scorer_name, reply, expected):
    meta = {"candidates": ["Alice", "Bob", "Chloe"]} if scorer_name == "set" else {}
    verdict = score(task(gold, scorer_name, **meta), reply)
    assert verdict.correct is expected, (reply, verdict)
    assert 0.0 <= verdict.partial <= 1.0
    assert verdict.gold == gold


def test_table_is_large_enough():
    assert len(TABLE) >= 40


def test_partial_credit_is_per_position():
    v = score(task(["3", "5", "8"]), "Answer: 3, 5, 9")
    assert not v.correct and v.partial == pytest.approx(2 / 3) and v.positions == [True, True, False]
    v = score(task(["3", "5"]), ["3"])
    assert not v.correct and v.partial == 0.5
    v = score(task(["3", "5"]), ["3", "5"])
    assert v.correct and v.partial == 1.0 and v.predicted == ["3", "5"]


def test_set_scorer_without_candidates():
    assert score(task(["alice, bob"], "set"), "Answer: Bob & Alice").correct
    assert not score(task(["alice, bob"], "set"), "Answer: Bob").correct


@pytest.mark.parametrize(("raw", "norm"), [
    ("1,000", "1000"), ("$12.00", "12"), ("3/4", "0.75"), ("-0", "0"), ("12.50", "12.5"), ("+5", "5"),
    ("1/3", "1/3"), ("6/3", "2"), ("12 apples", "12"), ("  Paris  ", "paris"), ("New   York", "new york"),
    ("Bob, Alice", "alice, bob"), ("Bob and Alice", "alice, bob"), ("3, 5", "3, 5"), ("1e3", "1000"),
    ("**7**", "7"), ("x = 12", "12"), ("2024-03-05", "2024-03-05"), ("50 %", "50"), ("€ 3.10", "3.1"),
])
def test_normalize_answer(raw, norm):
    assert normalize_answer(raw) == norm


def test_extract_modes():
    text = 'Work: 2+3=5. {"answer": 9} \\boxed{7}\nAnswer: 6'
    assert extract_answers(text, how="final") == ["6"]
    assert extract_answers(text, how="boxed") == ["7"]
    assert extract_answers(text, how="json") == ["9"]
    assert extract_answers(text, how="last_number") == ["6"]
    assert extract_answers(text, how="auto") == ["6"]
    assert extract_answers('{"result": [1, 2]}', n=2, how="auto", field="result") == ["1", "2"]
    assert extract_answers("Answer: 3, 5", n=2) == ["3", "5"]
    assert extract_answers("Answer: 1,000", n=1) == ["1000"]
    assert extract_answers("Answer: Tom", how="text") == ["answer: tom"]
    assert extract_raw("nothing here", how="final") == []
    with pytest.raises(ValueError):
        extract_answers("x", how="magic")


def test_registries():
    assert {"numeric", "set", "exact"} <= set(SCORERS)
    with pytest.raises(ValueError):
        score(task(["1"], "nope"), "Answer: 1")


@given(st.integers(min_value=-10**9, max_value=10**9))
def test_integers_round_trip(n):
    assert normalize_answer(str(n)) == str(n)
    assert normalize_answer(f"{n:,}") == str(n)
    assert normalize_answer(f"{n}.0") == str(n)


@given(st.fractions(max_denominator=64))
def test_fractions_are_canonical(x):
    text = canonical_number(Fraction(x))
    assert parse_number(text) == Fraction(x)
    assert normalize_answer(f"{x.numerator}/{x.denominator}") == text
