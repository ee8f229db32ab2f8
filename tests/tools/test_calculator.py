"""The calculator's parser and bounds (masbench.tools.calculator), each expected value worked by hand,
and the tool through dispatch: a result exactly at the tool's cap is not cut, one character more is."""

from __future__ import annotations

import asyncio
from fractions import Fraction

import pytest

from masbench.tools import ToolCall, ToolContext, dispatch, tool
from masbench.tools.calculator import MAX_LEN, MAX_MAGNITUDE, TOOL, CalculatorError, as_fraction, calculate, expression_of


@pytest.mark.parametrize("expr, value", [
    ("(17 + 25) * 3", 126), ("7 / 2", 3.5), ("7 // 2", 3), ("-7 % 3", 2), ("2 ** 10", 1024), ("2 ** -2", 0.25),
    ("-(3 - 5)", 2), ("+4", 4), ("1,000 + 1", 1001), ("3 × 4 ÷ 6", 2), ("2^3", 8), ("$5 + $6", 11),
    ("Expression: 3 + 4", 7), ("x = 3 + 4", 7), ("3 + 4 = 7", 7), ("thinking...\n`6 * 7`", 42), ("0.1 + 0.2", 0.3),
    ("1000001 ** 8", 1000001 ** 8), ("10 ** 50 * 10 ** 50", 10 ** 100), ("(-2) ** 64", 2 ** 64),
    ("0 ** 0", 1), ("0 ** 3", 0), ("(-3) ** -1", -1 / 3),  # only a zero base with a negative exponent is refused
    ("1 + 1 = 2 = 2", 2),  # a chain of equalities: the left side of the first "="
])
def test_values_by_hand(expr, value):
    got = calculate(expr)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("expr, message", [
    ("2 ** 0.5", "exponent must be an integer in"), ("2 ** 65", r"exponent must be an integer in \[-64, 64\]"),
    ("0 ** -1", "exponent must be an integer"), ("1000001 ** 9", "power too large"),
    ("10 ** 50 * 10 ** 50 + 1", "number too large"), ("5 / 0", "division by zero"), ("5 // 0", "division by zero"),
    ("5 % 0", "division by zero"), ("2 << 1", "operator LShift is not allowed"), ("abs(2)", "Call is not allowed"),
    ("", "empty expression"), ("1 +", "not an arithmetic expression"), ("True + 1", "booleans are not numbers"),
    ("'a'", "not a number: 'a'"),
])
def test_what_is_refused(expr, message):
    with pytest.raises(CalculatorError, match=message):
        calculate(expr)


def test_bounds_are_inclusive_where_they_say_so():
    assert calculate("2 ** 64") == 2 ** 64 and calculate("2 ** -64") == 2.0 ** -64
    assert calculate("1000000 ** 9") == 10 ** 54            # |a| = 10⁶ is not above the power bound
    assert calculate("1000001 ** 8") == 1000001 ** 8        # nor is b = 8
    assert calculate("-(10 ** 50 * 10 ** 50)") == -MAX_MAGNITUDE
    assert calculate("1" + " + 0" * ((MAX_LEN - 1) // 4)) == 1  # 1 + 4·499 = 1997 characters
    with pytest.raises(CalculatorError, match="expression too long"):
        calculate("1" * (MAX_LEN + 1))


@pytest.mark.parametrize("x, message", [
    ("2 ** 0.5", "exponent must be an integer in [-64, 64]"), ("1000001 ** 9", "power too large"),
    ("10 ** 50 * 10 ** 50 + 1", "number too large"), ("5 % 0", "division by zero"),
    ("2 << 1", "operator LShift is not allowed"),
    ("abs(2)", "Call is not allowed (numbers, + - * / // % ** and parentheses only)"),
    ("1 +", "not an arithmetic expression: '1 +' (invalid syntax)"), ("True + 1", "booleans are not numbers"),
    ("X", "Name is not allowed (numbers, + - * / // % ** and parentheses only)"),  # only backticks are stripped
    ("  ", "empty expression"), ("1" * 2001, "expression too long"), (["1", "2"], "expected one expression, got a list"),
])
def test_a_refusal_says_exactly_why(x, message):
    # the whole message, not a search inside it: it is what the model is told
    with pytest.raises(CalculatorError) as ei:
        calculate(x)
    assert str(ei.value) == message


def test_floats_become_fractions_with_a_denominator_of_at_most_10_to_the_12():
    with pytest.raises(CalculatorError) as ei:
        as_fraction(float("nan"))
    assert str(ei.value) == "not a finite number"
    # 2⁻³⁹: its denominator 2³⁹ ≈ 5.5·10¹¹ is within 10¹², so it stays exact
    assert as_fraction(2.0 ** -39) == Fraction(1, 2 ** 39)
    # 2⁻⁴¹ ≈ 4.5·10⁻¹³: its denominator 2⁴¹ ≈ 2.2·10¹² is beyond 10¹²; of the fractions within it, 0 is
    # nearer (4.5·10⁻¹³ away) than the smallest positive one, 1/10¹² (5.5·10⁻¹³ away)
    assert as_fraction(2.0 ** -41) == 0


@pytest.mark.parametrize("x, value", [
    ({"expression": "1 + 1"}, 2), ({"expr": "2 + 1"}, 3), ({"answer": "2 * 2"}, 4), ({"value": 5}, 5),
    ({"answer": "1", "expr": "2", "expression": "3"}, 3),   # the first of result, expression, expr, answer, value
    ({"value": "1", "answer": "2"}, 2),
    ("5 − 3", 2),                                           # a Unicode minus sign
    # an equality: the left side, unless only the left has letters (a variable being assigned)
    ("3 + 4 = 8", 7), ("X = 3 + 4", 7), ("1e3 = 1000 dollars", 1000), ("1e3 = 1000 USD", 1000),
])
def test_which_text_is_computed(x, value):
    assert calculate(x) == value


def test_a_long_chain_within_the_length_cap_is_a_value_not_a_recursion_error():
    # each is under MAX_LEN (2000) characters but nests deeper than Python's default recursion limit
    # (1000): the walk must not recurse per node
    assert calculate("-" * 1999 + "1") == -1          # 1999 minus signs: an odd count negates
    assert calculate("-" * 1998 + "1") == 1           # an even count does not
    assert calculate("1" + "+1" * 999) == 1000        # 1999 characters, a thousand ones
    assert calculate("2" + "-1" * 999) == -997        # 2 − 999, left to right
    with pytest.raises(CalculatorError, match="division by zero"):  # left operand first, as written
        calculate("1 / 0 + (1 & 2)")
    with pytest.raises(CalculatorError, match="operator BitAnd is not allowed"):
        calculate("(1 & 2) + 1 / 0")


def test_values_and_containers():
    assert expression_of({"result": "1 + 1", "expression": "x"}) == "1 + 1"  # result first
    assert expression_of({"value": 3}) == "3" and expression_of(["2 * 3"]) == "2 * 3" and expression_of(2.5) == "2.5"
    with pytest.raises(CalculatorError, match="expected one expression, got a list"):
        expression_of([1, 2])
    with pytest.raises(CalculatorError, match=r"no expression field in \['a', 'b'\]"):
        expression_of({"b": 1, "a": 2})
    with pytest.raises(CalculatorError, match="cannot compute a bool"):
        expression_of(True)
    assert as_fraction(0.1).denominator == 10 and as_fraction(3) == 3
    with pytest.raises(CalculatorError, match="not a finite number"):
        as_fraction(float("inf"))


def test_the_tool_returns_the_value_as_text_and_data():
    res = asyncio.run(dispatch(ToolCall("calculator", {"expression": "(17 + 25) * 3"}), {"calculator": TOOL}, ToolContext()))
    assert res.status == "ok" and res.text == "126" and res.data == 126
    bad = asyncio.run(dispatch(ToolCall("calculator", {"expression": "2 ** 0.5"}), {"calculator": TOOL}, ToolContext()))
    assert bad.status == "error" and "exponent must be an integer" in bad.text


@tool("calc_cap_probe", max_result_chars=5)
def _probe(n: int) -> str:
    return "x" * n


def test_a_result_at_the_cap_is_whole_and_one_more_is_cut():
    from masbench.tools import TOOLS
    t = {"calc_cap_probe": TOOLS["calc_cap_probe"]}
    five = asyncio.run(dispatch(ToolCall("calc_cap_probe", {"n": 5}), t, ToolContext()))
    assert five.text == "xxxxx" and not five.truncated and five.bytes_out == 5
    six = asyncio.run(dispatch(ToolCall("calc_cap_probe", {"n": 6}), t, ToolContext()))
    assert six.truncated and six.text == "xxxxx\n[… cut: 1 more characters]" and six.bytes_out == 6
