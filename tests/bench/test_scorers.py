"""The generic scorers and math equivalence at their edges: empty gold, the numeric tolerance at its
boundary, text golds, extraction settings from the task, reply-vs-list inputs of the benchmark
scorers, the unknown-scorer error, and math_equal's guards and timeouts."""

from __future__ import annotations

import threading
from fractions import Fraction

import pytest

from masbench.bench import scorers
from masbench.bench.scorers import numbers_equal, score
from masbench.bench.scoring import mathequal
from masbench.bench.scoring.mathequal import math_equal
from masbench.bench.types import TaskInstance


def task(answers: list[str], scorer: str = "numeric", **meta) -> TaskInstance:
    return TaskInstance(id="t", source="unit", question="q", answers=answers, scorer=scorer, meta=meta)


def test_no_gold_is_never_correct_and_earns_nothing() -> None:
    s = score(task([]), ["1"])
    assert s.correct is False and s.partial == 0.0 and s.positions == []


def test_partial_credit_per_position() -> None:
    s = score(task(["1", "2", "3", "4"]), ["1", "9", "3"])
    assert s.positions == [True, False, True, False] and s.partial == 0.5 and s.correct is False


def test_numeric_tolerance_is_relative_and_inclusive() -> None:
    tol = Fraction(1, 10**6)
    assert numbers_equal(str(1 + tol), "1")  # exactly at the bound
    assert not numbers_equal("1.0000015", "1")  # 1.5e-6 over a gold of 1
    assert numbers_equal("1000.0005", "1000") and not numbers_equal("1000.0015", "1000")  # relative to |gold|
    assert numbers_equal("-1000.0005", "-1000")
    assert not numbers_equal("no number", "12")


def test_a_gold_that_is_not_one_number_compares_normal_forms() -> None:
    assert numbers_equal("3, 5", "3, 5") and numbers_equal("$3 and 5", "3; 5")
    assert not numbers_equal("3, 5", "3, 7")


def test_the_task_chooses_extraction_and_field() -> None:
    reply = 'Answer: 5\n{"result": 9} and finally 7'
    assert score(task(["5"]), reply).correct
    assert score(task(["7"], extract="last_number"), reply).correct
    assert score(task(["9"], extract="json", field="result"), reply).correct
    assert score(task(["9"], field="result"), reply).correct  # auto with a field: JSON first


def test_reply_scorers_get_the_reply_or_the_extracted_list() -> None:
    t = task(["72"], scorer="gsm8k")
    assert score(t, "so #### 72").correct  # a string is the reply
    assert score(t, ["72"]).correct  # a list is already extracted
    assert score(t, ["72"], reply="#### 71").correct is False  # with a reply, the reply decides
    assert score(t, ["72"], reply="   ").correct  # a blank reply is no reply
    assert score(t, "#### 71").correct is False


def test_unknown_scorer_names_the_registered_ones() -> None:
    known = ", ".join(sorted(scorers.SCORERS))
    assert "exact, " in known + ", "
    with pytest.raises(ValueError, match=rf"^unknown scorer 'nope'; registered: {known}$"):
        score(task(["1"], scorer="nope"), ["1"])


# ----- math equivalence ---------------------------------------------------------------------------


def test_math_equal_guards() -> None:
    assert math_equal(None, None) is False and math_equal(None, "1") is False and math_equal("1", None) is False
    assert math_equal("", "") is False and math_equal("  ", "1") is False and math_equal("1", " ") is False


@pytest.mark.slow
def test_math_equal_without_sympy_for_equal_normal_forms() -> None:
    assert math_equal("Bob and Alice", "Alice and Bob")  # equal normal forms, different text
    assert math_equal(r"\text{Paris}", "Paris")  # equal after cleaning
    assert math_equal(r"\frac{1}{2}", "0.5") and math_equal(r"\sqrt{2}/2", r"\frac{\sqrt2}{2}")
    assert not math_equal("3", "4")


def test_math_equal_passes_a_timeout_only_in_the_main_thread(monkeypatch) -> None:
    import math_verify

    seen: list = []

    def fake_verify(g, p, **kw):
        seen.append(kw)
        return False
    monkeypatch.setattr(math_verify, "verify", fake_verify)
    assert math_equal("a+b", "b+a") is False
    assert seen == [{"timeout_seconds": 5}]
    assert mathequal._timeout() == 5
    out: list = []
    th = threading.Thread(target=lambda: out.append(mathequal._timeout()))
    th.start()
    th.join()
    assert out == [None]


def test_a_comparison_sympy_cannot_do_is_not_equal(monkeypatch) -> None:
    import math_verify

    def boom(*a, **kw):
        raise TypeError("cannot compare")
    monkeypatch.setattr(math_verify, "verify", boom)
    assert math_equal("a+b", "b+a") is False


# ----- the benchmark scorers' shared scoring (masbench.bench.scoring.benchmarks) -------------------


def test_masbench_scorer_partial_credit_in_order() -> None:
    t = task(["1", "2", "3"], scorer="masbench")
    s = score(t, r"<answer>\boxed{1} \boxed{5} \boxed{3.0}</answer>")
    assert s.positions == [True, False, True] and s.partial == pytest.approx(2 / 3) and s.correct is False
    assert s.predicted == ["1", "5", "3"] and s.gold == ["1", "2", "3"]
    s = score(t, r"\boxed{1} \boxed{2}")  # the boxed-count rule: two boxes for three golds
    assert s.correct is False and s.positions == [False, False, False] and s.partial == 0.0
    assert score(t, r"\boxed{1} \boxed{2} \boxed{3}").correct


def test_masbench_scorer_without_gold_earns_nothing() -> None:
    s = score(task([], scorer="masbench"), r"\boxed{1}")
    assert s.correct is False and s.partial == 0.0


def test_masbench_scorer_reads_published_golds_from_meta_when_they_line_up() -> None:
    assert score(task(["7"], scorer="masbench", gold=["8"]), r"\boxed{8}").correct  # meta gold wins
    assert not score(task(["7"], scorer="masbench", gold=["8"]), r"\boxed{7}").correct
    assert score(task(["7"], scorer="masbench", gold=["8", "9"]), r"\boxed{7}").correct  # wrong length: answers
    assert score(task(["7"], scorer="masbench", gold="8"), r"\boxed{7}").correct  # not a list: answers
    assert score(task(["7", "8"], scorer="masbench", gold=[1, 2]), r"\boxed{1} \boxed{2}").correct  # as text


def test_math_equal_edges_found_by_mutation_testing() -> None:
    assert math_equal(None, "None") is False  # a missing prediction is not the text "None"
    assert math_equal("\\", "5") is False  # an unparseable side is not equal
    # equal normal forms decide before sympy, which reads "12 dollars" as a product of symbols
    assert math_equal("12 dollars", "12") and math_equal("12", "12 dollars")


@pytest.mark.parametrize("pred,gold", [("x+1", "y+1"), (r"\sqrt{2}", "2"), ("2x", "2"), (r"2\pi", "2"),
                                       ("x^2", "2"), ("n-1", "1"), ("a/2", "2")])
def test_math_equal_does_not_reduce_an_expression_to_its_number(pred, gold) -> None:
    # each pair differs as mathematics (different variable, sqrt(2) ~ 1.414, 2x is not 2, ...), but
    # normalize_answer keeps only the number of such a span: it must not decide for expressions
    assert math_equal(pred, gold) is False and math_equal(gold, pred) is False


def test_math_equal_still_reads_plain_answers_by_their_normal_form() -> None:
    assert math_equal("x+1", "1+x")  # the same expression (symbolic check)
    assert math_equal("about 12", "12") and math_equal("1,000", "1000") and math_equal(r"\$12", "12")


def test_math_equal_cleans_markdown_around_an_expression() -> None:
    # math-verify does not read markdown emphasis or code ticks; the cleaned spans are the same text
    assert math_equal("**x^2**", "x^2") and math_equal("`2x`", "2x") and math_equal("**2x**", "2x")
