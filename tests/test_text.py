"""masbench.text piece by piece: LaTeX/markdown cleaning, exact numbers and their canonical text,
list/name normalization, answer lines, boxed spans, JSON answers, extraction order and choices.
Every expected value is written out by hand from the input (not produced by the code)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from masbench.text import (
    HOWS,
    boxed_spans,
    canonical_number,
    extract_answers,
    extract_raw,
    json_objects,
    name_set,
    normalize_answer,
    number_tokens,
    numeric_value,
    parse_choice,
    parse_number,
    split_list,
)

# ----- cleaning (through normalize_answer, whose first step it is) --------------------------------


@pytest.mark.parametrize("raw,want", [
    (r"\text{Paris}", "paris"), (r"\mathrm{Paris}", "paris"), (r"\textbf{Paris}", "paris"),
    (r"\mathbf{Paris}", "paris"), (r"\text{12}", "12"),
    (r"\$12", "12"), (r"50\%", "50"), (r"1{,}000", "1000"), (r"1\!000", "1000"), (r"1\,000", "1000"),
    (r"\left(7\right)", "7"), ("−5", "-5"), ("**42**", "42"), ("__42__", "42"), ("`42`", "42"),
    ("$42$", "42"), ("42.", "42"), ("42!;", "42"), ("(42)", "42"), ('"42"', "42"),
    (r"\frac{3}{4}", "0.75"), (r"\dfrac{1}{2}", "0.5"), (r"\tfrac{1}{4}", "0.25"),
    ("**Paris**", "paris"), ("__Paris__", "paris"), ("`Paris`", "paris"), (r"\left Paris\right", "paris"),
    ("x \\, y", "x y"), ("x\\!y", "xy"),
])
def test_cleaning_strips_wrappers(raw: str, want: str) -> None:
    assert normalize_answer(raw) == want


def test_cleaning_keeps_what_it_does_not_know() -> None:
    # only the listed commands and marks are removed: other text survives, case-folded
    assert normalize_answer("XX") == "xx" and normalize_answer("a-b") == "a-b"
    assert normalize_answer("Left, Right") == "left, right"
    assert normalize_answer(r"\textit{Rome} x") == r"\textit{rome} x"


# ----- numbers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw,want", [
    ("$1,200.50", Fraction(2401, 2)), ("12 apples", Fraction(12)), ("3/4", Fraction(3, 4)),
    ("1 1/2", Fraction(3, 2)), ("2  3 / 4", Fraction(11, 4)), ("-7", Fraction(-7)), ("−7", Fraction(-7)),
    ("-$7", Fraction(-7)), ("$-7", Fraction(-7)), ("$−7", Fraction(-7)), ("−$7", Fraction(-7)),
    ("+7", Fraction(7)), ("- -7", Fraction(7)),  # two minus signs cancel
    ("1e3", Fraction(1000)), (".5", Fraction(1, 2)), ("25%", Fraction(25)),
    ("5 and 7", None), ("1/0", None), ("abc", None), ("", None), ("12,34", None),
])
def test_parse_number(raw: str, want: Fraction | None) -> None:
    assert parse_number(raw) == want


def test_number_tokens_in_order_with_unicode_minus() -> None:
    assert number_tokens("from −3 to 4, then 1,000 and 2/3") == ["-3", "4", "1,000", "2/3"]
    assert number_tokens("x2 3.5.") == ["3.5"]


@pytest.mark.parametrize("x,want", [
    (Fraction(12), "12"), (Fraction(-3), "-3"), (Fraction(0), "0"), (Fraction(3, 4), "0.75"),
    (Fraction(1, 2), "0.5"), (Fraction(1, 5), "0.2"), (Fraction(1, 8), "0.125"), (Fraction(3, 20), "0.15"),
    (Fraction(1, 25), "0.04"), (Fraction(1, 16), "0.0625"), (Fraction(-1, 4), "-0.25"), (Fraction(5, 2), "2.5"),
    (Fraction(1, 3), "1/3"), (Fraction(-2, 3), "-2/3"), (Fraction(1, 6), "1/6"), (Fraction(101, 10), "10.1"),
    (Fraction(1, 2**71 + 2), f"1/{2**71 + 2}"),  # huge denominators stay exact (no float division)
])
def test_canonical_number(x: Fraction, want: str) -> None:
    assert canonical_number(x) == want


def test_numeric_value_takes_the_span_else_its_last_number() -> None:
    assert numeric_value("12") == 12
    assert numeric_value("first 3, then **7** apples") == 7
    assert numeric_value("x = 1/0 or 5") == 5
    assert numeric_value("no number") is None


# ----- normalization ------------------------------------------------------------------------------


@pytest.mark.parametrize("raw,want", [
    ("1,000", "1000"), ("$12.00", "12"), ("3/4", "0.75"), ("-0", "0"), ("12 apples", "12"), ("3, 5", "3, 5"),
    ("5; 3", "5, 3"), ("Bob and Alice", "alice, bob"), ("Bob & Alice & Bob", "alice, bob"),
    ("Anna Maria Lopez Garcia, Bob", "anna maria lopez garcia, bob"),
    ("Anna Maria Lopez Garcia Diaz, Bob", "anna maria lopez garcia diaz, bob"),
    ("the total is 42", "42"), ("  Hello   World ", "hello world"), ("x2 and 3", "x2 and 3"),
    ("12 and 3 apples", "12, 3"), ("room 12b", "room 12b"),
])
def test_normalize_answer(raw: str, want: str) -> None:
    assert normalize_answer(raw) == want


def test_name_lists_sort_only_short_digit_free_parts() -> None:
    # 5-word or digit-bearing parts are not names: the text stays in its order
    assert normalize_answer("Zed, Anna Maria Lopez Garcia Diaz") == "zed, anna maria lopez garcia diaz"
    assert normalize_answer("Zed, Anna Maria Lopez Garcia") == "anna maria lopez garcia, zed"
    assert normalize_answer("Zed, B2") == "zed, b2"
    assert normalize_answer("Zed, , Amy") == "amy, zed"  # empty parts are dropped by split_list


def test_split_list() -> None:
    assert split_list("1,000 and 2; 3 & 4, 5") == ["1,000", "2", "3", "4", "5"]
    assert split_list(" , ") == []


def test_name_set() -> None:
    cands = ["Alice", "Bob", "Eve"]
    assert name_set("I think **alice** and BOB.", cands) == {"alice", "bob"}
    assert name_set("Bobby", cands) == frozenset()  # whole words only
    assert name_set("none of them", cands) == {"none"}
    assert name_set("Nobody", None) == {"none"}
    assert name_set("Carol and Dan", None) == {"carol", "dan"}
    assert name_set("Carol", ["Alice"]) == frozenset()


# ----- extraction ---------------------------------------------------------------------------------


def test_final_answer_lines() -> None:
    assert extract_raw("Answer: 41\nthen\nFinal answer: **42**", how="final") == ["42"]
    assert extract_raw("Answer:\n\n   42 apples\nmore", how="final") == ["42 apples"]  # value on the next line
    assert extract_raw("The answer is 7", how="final") == ["7"]
    assert extract_raw("Answer: \\boxed{9} (I think)", how="final") == ["9"]
    assert extract_raw("no answer line", how="final") == []
    assert extract_raw("Answer:", how="final") == []
    assert extract_raw("line one\nAnswer:\nline\nAnswer:\n\n8", how="final") == ["line", "8"][-1:]


def test_indexed_answer_lines_fill_positions() -> None:
    text = "Answer 2: 5\nAnswer 1: 3\nAnswer 3: 9"
    assert extract_raw(text, n=3, how="final") == ["3", "5", "9"]
    assert extract_raw(text, n=2, how="final") == ["3", "5"]
    # index 1 missing: no positional fill, the trailing lines are taken in order
    assert extract_raw("Answer 2: 5\nAnswer 3: 9", n=2, how="final") == ["5", "9"]
    # one answer wanted: the last line, whatever its index
    assert extract_raw(text, n=1, how="final") == ["9"]
    assert extract_raw("Answer 1: 4\nAnswer: 6", n=2, how="final") == ["4", "6"]


def test_boxed_spans_keep_nested_braces_and_skip_unclosed() -> None:
    assert boxed_spans(r"\boxed{\frac{1}{2}} and \fbox{ 3 }") == [r"\frac{1}{2}", "3"]
    assert boxed_spans(r"\boxed{12") == []
    assert boxed_spans(r"\boxed {7}") == ["7"]
    assert extract_raw(r"\boxed{1} then \boxed{2}", how="boxed") == ["2"]
    assert extract_raw(r"\boxed{1} then \boxed{2, 3}", n=2, how="boxed") == ["2", "3"]
    assert extract_raw(r"\boxed{1} \boxed{2} \boxed{3}", n=2, how="boxed") == ["2", "3"]
    assert extract_raw(r"\boxed{1, 2} \boxed{3}", n=2, how="boxed") == ["2", "3"]
    assert extract_raw(r"\boxed{1, 2, 3}", n=2, how="boxed") == ["1", "2"]
    assert extract_raw(r"\boxed{1}", n=2, how="boxed") == ["1"]


def test_last_number_and_text() -> None:
    assert extract_raw("1 then 2 then 3", n=2, how="last_number") == ["2", "3"]
    assert extract_raw("  whole reply  ", how="text") == ["whole reply"]
    assert extract_raw("   ", how="text") == [] and extract_raw("", how="text") == []
    assert extract_raw(None, how="text") == []  # type: ignore[arg-type]


def test_json_objects() -> None:
    assert json_objects('{"a": 1}') == [{"a": 1}]
    assert json_objects('[1, 2]') == [[1, 2]]
    assert json_objects('see ```json\n{"a": 1}\n``` and ```\n{"b": 2}\n``` and ```bad```') == [{"a": 1}, {"b": 2}]
    assert json_objects('x {"a": {"b": 1}} y {not json} z {"c": 2}') == [{"a": {"b": 1}}, {"c": 2}]
    assert json_objects("{ {\"a\": 1}") == [{"a": 1}]
    assert json_objects("no braces") == []


@pytest.mark.parametrize("key", ["answer", "answers", "final_answer", "final"])
def test_json_default_keys(key: str) -> None:
    assert extract_raw(f'{{"{key}": "42"}}', how="json") == ["42"]


def test_json_answers() -> None:
    assert extract_raw('{"answer": ["Bob", "Alice"]}', how="json") == ["Bob, Alice"]  # one answer: a tie
    assert extract_raw('{"answer": []}', how="json") == []
    assert extract_raw('{"answers": [3, 5, 7]}', n=2, how="json") == ["3", "5"]
    assert extract_raw('{"answer": "3, 5"}', n=2, how="json") == ["3", "5"]
    assert extract_raw('{"result": 9, "answer": 1}', how="json", field="result") == ["9"]
    assert extract_raw('{"answer": 1} then {"answer": 2}', how="json") == ["2"]  # the last object wins
    assert extract_raw('{"answer": 1} then {"other": 2}', how="json") == ["1"]
    assert extract_raw('[1, 2] {"x": 1}', how="json") == []


def test_auto_tries_final_boxed_json_number_text() -> None:
    assert extract_raw("Answer: 5\n\\boxed{6} 7") == ["5"]
    assert extract_raw("Answer: 5 \\boxed{6} 7") == ["6"]  # a box on the answer line is the answer
    assert extract_raw("so \\boxed{6} 7") == ["6"]
    assert extract_raw('{"answer": 8} 9') == ["8"]
    assert extract_raw("it is 7 or 9") == ["9"]
    assert extract_raw("  Paris  ") == ["Paris"]
    assert extract_raw("") == []
    assert extract_raw("{ not json } Paris") == ["{ not json } Paris"]


def test_auto_with_a_field_tries_json_first_then_the_rest() -> None:
    assert extract_raw('Answer: 5 {"result": 3}', field="result") == ["3"]
    assert extract_raw('Answer: 5\n{"other": 3}', field="result") == ["5"]
    assert extract_raw(r'\boxed{6} {"other": 3}', field="result") == ["6"]
    assert extract_raw('it is 7 {"other": "x"}', field="result") == ["7"]
    assert extract_raw("just words", field="result") == ["just words"]
    # the named field, not the default keys: no json answer, so the last number
    assert extract_raw('{"answer": "four", "n": 4}', field="result") == ["4"]
    assert extract_raw('{"answer": "four"}', field="result") == ['{"answer": "four"}']


def test_extract_answers_normalizes_and_passes_the_field() -> None:
    assert extract_answers("Answer: $1,000.00") == ["1000"]
    assert extract_answers('{"result": "3/4", "answer": 1}', how="json", field="result") == ["0.75"]
    assert extract_answers('{"result": "3/4"} Answer: 1', field="result") == ["0.75"]
    assert extract_answers("Answer 1: 3\nAnswer 2: 1/2", n=2) == ["3", "0.5"]
    assert extract_answers("Answer: 3", n=0) == ["3"]  # at least one


def test_unknown_extraction_is_a_clear_error() -> None:
    assert "auto" in HOWS
    with pytest.raises(ValueError, match=r"^unknown extraction 'nope'; expected one of final, boxed, last_number, "
                                         r"json, text, auto$"):
        extract_raw("x", how="nope")


def test_default_extraction_is_auto_for_one_answer() -> None:
    assert extract_raw("Answer 1: 3\nAnswer 2: 4") == ["4"]
    assert extract_raw(r"\boxed{2}") == ["2"]


# ----- choices ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,n,want", [
    ("Choice: 2", 3, 1), ("choice #3", 3, 2), ("CHOICE: **1**", 3, 0), ("Choice 2", 3, 1), ("choice:2", 2, 1),
    ("Choice: 4", 3, None), ("Choice: 0", 3, None), ("I like 2 but 3 is best", 3, 2), ("1 or 7", 3, 0),
    ("candidate 9", 3, None), ("nothing", 3, None), ("1234 then 2", 3, 1), ("Choice: 1 though 3", 3, 0),
])
def test_parse_choice(text: str, n: int, want: int | None) -> None:
    assert parse_choice(text, n) == want


# ----- edge cases found by mutation testing (benchmarks/mutation.py) ------------------------------


def test_cleaning_edges_that_numbers_would_hide() -> None:
    assert normalize_answer(r"Paris\$") == "paris" and normalize_answer(r"Paris\%") == "paris%"
    assert normalize_answer("a−b") == "a-b" and normalize_answer("$Paris$") == "paris"
    assert normalize_answer("Paris!;") == "paris"


def test_fraction_spacing() -> None:
    assert parse_number("2\t3/4") == Fraction(11, 4)  # any whitespace between the whole part and the fraction
    assert parse_number("3 / 4") == Fraction(3, 4)  # spaces around the slash are not a whole part
    # the double-sign rule holds for a span's numeric value and its normal form too
    assert numeric_value("- -7") == 7 and normalize_answer("- -7") == "7"


def test_canonical_number_of_a_high_power_of_five() -> None:
    # 1/5**30 = 2**30 / 10**30, exactly (a float division of the denominator would lose it)
    assert canonical_number(Fraction(1, 5**30)) == "0.000000000000000000001073741824"


def test_answer_on_the_line_after_an_empty_answer_line() -> None:
    # "Answer: **" cleans to nothing, so the value is the next non-empty line (not the one after)
    assert extract_raw("\nAnswer: **\n\n7\n8", how="final") == ["7"]
    assert extract_raw("x\nAnswer: **\n7", how="final") == ["7"]
    assert extract_raw("Answer: **\n  \n", how="final") == []


def test_json_objects_scan_left_to_right_past_failures() -> None:
    assert json_objects('x {bad} {"a": 1} {"b": 2}') == [{"a": 1}, {"b": 2}]
    assert json_objects('{{"a": 1}') == [{"a": 1}]
    assert json_objects('x {"a": 1} {"b": 2} {"c": 3}') == [{"a": 1}, {"b": 2}, {"c": 3}]
    assert extract_raw('{"answer": 1} [2]', how="json") == ["1"]  # a trailing non-object is skipped


def test_a_choice_one_past_the_last_candidate_is_out_of_range() -> None:
    assert parse_choice("4 is best", 3) is None


def test_a_non_object_json_block_after_the_answer_is_skipped() -> None:
    assert extract_raw('```json\n{"answer": 1}\n``` then ```json\n[2]\n```', how="json") == ["1"]
