"""Finding the answer part of a reply (masbench.bench.scoring.replies), case by case."""

from __future__ import annotations

from types import SimpleNamespace

from masbench.bench.scoring.replies import answer_region, clean, final_span, gsm8k_span, letter_of, raw_vote_key


def test_answer_region() -> None:
    assert answer_region("x <answer> 1 </answer> y <ANSWER>2</answer>") == "2"
    assert answer_region("x <answer>3") == "3"  # an unclosed tag runs to the end
    assert answer_region("<answer>  </answer> plain") == "<answer>  </answer> plain"  # empty body: the reply
    assert answer_region("") == "" and answer_region(None) == ""  # type: ignore[arg-type]


def test_final_span() -> None:
    assert final_span(r"<answer>\boxed{1} then \boxed{2}</answer>") == "2"
    assert final_span(r"Answer: 5 \boxed{6}") == "6"  # a box anywhere in the region wins
    assert final_span("Answer 1: 3\nAnswer 2: 4") == "4"  # one final span
    assert final_span("it is 7 or 9") == "9"
    assert final_span("") is None


def test_gsm8k_span() -> None:
    assert gsm8k_span("so #### 1,234 and #### -5.") == "-5."
    assert gsm8k_span("Answer: 12") == "12"
    assert gsm8k_span("") is None and gsm8k_span(None) is None  # type: ignore[arg-type]


def test_letter_patterns_in_order() -> None:
    assert letter_of(r"\boxed{\text{(C)}} though answer is B") == "C"
    assert letter_of("The answer is **(b)") is None  # the letter itself is case-sensitive
    assert letter_of("The answer: D") == "D"
    assert letter_of("I pick option B") == "B" and letter_of("choice (c)") is None
    assert letter_of("maybe (B), maybe (D)") == "D"
    assert letter_of("Thinking...\n**C**\n") == "C"
    assert letter_of("Answer is E") is None and letter_of("Answer is E", letters="ABCDE") == "E"
    assert letter_of("") is None and letter_of(None) is None  # type: ignore[arg-type]


def test_prose_letters_skip_the_article() -> None:
    assert letter_of("I think B is wrong, so C.") == "C"
    assert letter_of("C is right. A good guess though") == "C"  # "A good": the article
    assert letter_of("C or A") == "A"  # a stand-alone A at the end is a letter
    assert letter_of("C, A. Done") == "A"
    assert letter_of("C is it, not A Big one") == "A"  # "A" then a capital word: not the article
    assert letter_of("X marks") is None


def test_clean_and_raw_vote_keys() -> None:
    assert clean(" **42** ") == "42"
    one, two = SimpleNamespace(answers=["1"]), SimpleNamespace(answers=["1", "2"])
    assert raw_vote_key(one, "<answer> 9 </answer>") == "9"
    assert raw_vote_key(one, "Answer: 1,000 apples") == "1,000 apples"
    assert raw_vote_key(two, r"\boxed{1} x \boxed{ 2 } \boxed{3}") == "2, 3"
    assert raw_vote_key(two, r"\boxed{3}") == "3"  # fewer boxes than golds: the auto extraction
    assert raw_vote_key(two, "Answer 1: 4\nAnswer 2: 5") == "4, 5"
    assert raw_vote_key(one, "<answer>None</answer>") is None and raw_vote_key(one, "") is None
    assert raw_vote_key(one, "Answer: none") is None
    assert raw_vote_key(SimpleNamespace(), "Answer: 7") == "7" and raw_vote_key(None, "Answer: 7") == "7"


def test_edges_found_by_mutation_testing() -> None:
    assert final_span("\\boxed{6}\nAnswer: 5") == "6"  # boxes win over an answer line
    assert letter_of("ANSWER: B. Not C") == "B"  # the patterns ignore case (the letter does not)
    assert letter_of("B\nI considered C too") == "B"  # a line that is just a letter, not the last prose letter
    one, two = SimpleNamespace(answers=["1"]), SimpleNamespace(answers=["1", "2"])
    assert raw_vote_key(one, r"\boxed{1} \boxed{2}") == "2"
    assert raw_vote_key(one, "Answer: 7\n\\boxed{1}") == "7"  # one gold: the auto extraction, not the box
    assert raw_vote_key(two, "Answer: 7\n\\boxed{1} \\boxed{2}") == "1, 2"  # several golds: the boxes
