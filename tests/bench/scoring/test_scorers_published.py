"""Each benchmark's scorer on a table of replies, including the tricky ones, scored as that
benchmark's own scorer would (the verdicts come from the published rules in docs/formats.md)."""

from __future__ import annotations

import pytest

from masbench.bench import TaskInstance, extract_raw, math_equal, score


def task(answers: list[str], scorer: str, **meta) -> TaskInstance:
    return TaskInstance(id="t", source="s", question="q", answers=answers, scorer=scorer, meta=meta)


MASBENCH_ONE = task(["9"], "masbench", gold=["9"])
MASBENCH_TWO = task(["9", "5"], "masbench", gold=["9", "5"])
MASBENCH_FRAC = task(["1/2"], "masbench", gold=["\\frac{1}{2}"])
MASBENCH = [
    (MASBENCH_ONE, "<thinking>3 + 6 = 9</thinking><answer>9</answer>", True),
    (MASBENCH_ONE, "<thinking>...</thinking><answer>\\boxed{9}</answer>", True),
    (MASBENCH_ONE, "So the total is \\boxed{9}.", True),
    (MASBENCH_ONE, "Answer: 9", True),
    (MASBENCH_ONE, "<answer>9.0</answer>", True),
    (MASBENCH_ONE, "<thinking>maybe 9</thinking><answer>10</answer>", False),
    (MASBENCH_FRAC, "<answer>0.5</answer>", True),
    (MASBENCH_TWO, "### Final Answers\nProblem 1: \\boxed{9}\nProblem 2: \\boxed{5}", True),
    (MASBENCH_TWO, "<thinking>\\boxed{1}</thinking><answer>\\boxed{9}\n\n\\boxed{5}</answer>", True),
    (MASBENCH_TWO, "### Final Answers\nProblem 1: \\boxed{9}", False),  # one box for two golds
    (MASBENCH_TWO, "\\boxed{9}\n\n\\boxed{5}\n\n\\boxed{5}", False),  # three boxes: count mismatch
    (MASBENCH_TWO, "Problem 1: \\boxed{5}\nProblem 2: \\boxed{9}", False),  # positions matter
    (MASBENCH_TWO, "Answer: 9, 5", False),  # no \boxed{} at all: zero boxes for two golds
]

SMFR_TIE = task(["erin, greta"], "smfr", candidates=["Erin", "Greta", "Hiro"], gold_names=["Erin", "Greta"])
SMFR_ONE = task(["hiro"], "smfr", candidates=["Erin", "Greta", "Hiro"], gold_names=["Hiro"])
SMFR = [
    (SMFR_TIE, '{"answer": ["Erin", "Greta"]}', True),
    (SMFR_TIE, 'Hiro never qualifies.\n{"answer": ["Greta", "Erin"]}', True),
    (SMFR_TIE, "Answer: Erin, Greta", True),
    (SMFR_TIE, "Answer: Greta and Erin", True),
    (SMFR_TIE, "Hiro is out. The final answer: \\boxed{Erin, Greta}", True),
    (SMFR_TIE, "Answer: erin, greta", True),
    (SMFR_TIE, "Answer: Erin", False),  # a missed tie
    (SMFR_TIE, '{"answer": ["Erin"]}', False),
    (SMFR_TIE, "Answer: Erin, Greta, Hiro", False),  # a false tie
    (SMFR_TIE, "Answer: none", False),
    (SMFR_ONE, "Answer: Hiro", True),
    (SMFR_ONE, '{"answer": ["Hiro", "Erin"]}', False),  # a false tie
    (SMFR_ONE, '{"answer": "Hiro"}', True),
]

GSM = task(["1206"], "gsm8k", gold=["1206"])
GSM8K = [
    (GSM, "6 * 201 = 1206\n#### 1206", True),
    (GSM, "#### 1,206", True),
    (GSM, "The answer is 1206.", True),
    (GSM, "Answer: $1,206", True),
    (GSM, "Answer: 1206.00", True),
    (GSM, "\\boxed{1206}", True),
    (GSM, "#### 1206\nAnswer: 7", True),  # the strict #### match comes first (lm-eval)
    (GSM, "#### 1205", False),
    (GSM, "1206 looks likely, but the answer is 1207", False),
    (GSM, "", False),
]

AIME_T = task(["33"], "aime", gold=["33"])
AIME = [
    (AIME_T, "\\boxed{33}", True),
    (AIME_T, "The final answer is $\\boxed{033}$.", True),
    (AIME_T, "Answer: 33", True),
    (AIME_T, "so m + n = 33", True),
    (AIME_T, "We get 12 first, then \\boxed{33}", True),
    (AIME_T, "\\boxed{33.5}", False),
    (AIME_T, "\\boxed{34}", False),
    (AIME_T, "Answer: 330", False),
    (AIME_T, "\\boxed{33} was a typo, \\boxed{34}", False),
    (AIME_T, "", False),
]

HALF = task(["\\frac{1}{2}"], "math", gold=["\\frac{1}{2}"])
ROOT = task(["\\frac{\\sqrt{2}}{2}"], "math", gold=["\\frac{\\sqrt{2}}{2}"])
MATH = [
    (HALF, "\\boxed{\\frac{1}{2}}", True),
    (HALF, "\\boxed{0.5}", True),  # \frac{1}{2} vs 0.5
    (HALF, "\\boxed{1/2}", True),
    (HALF, "\\boxed{\\dfrac{1}{2}}", True),
    (HALF, "\\boxed{\\frac{2}{4}}", True),
    (HALF, "Answer: 0.5", True),
    (HALF, "\\boxed{0.25}", False),
    (HALF, "\\boxed{2}", False),
    (HALF, "", False),
    (ROOT, "\\boxed{\\sqrt{2}/2}", True),
    (ROOT, "\\boxed{\\frac{1}{\\sqrt{2}}}", True),
    (ROOT, "\\boxed{\\sqrt{2}}", False),
]

C = task(["C"], "choice", letters="ABCD")
CHOICE = [
    (C, "Answer: C", True),
    (C, "The answer is (C).", True),
    (C, "\\boxed{C}", True),
    (C, "I think C is right.", True),  # the letter in prose
    (C, "Option (A) fails on units, so option C.", True),
    (C, "**C**", True),
    (C, "(C)", True),
    (C, "A careful look shows the answer is B", False),
    (C, "Answer: D", False),
    (C, "The answer is a tough one; I pick B.", False),
    (C, "None of them.", False),
]

TABLE = [("masbench", r) for r in MASBENCH] + [("smfr", r) for r in SMFR] + [("gsm8k", r) for r in GSM8K] + \
    [("aime", r) for r in AIME] + [("math", r) for r in MATH] + [("choice", r) for r in CHOICE]


@pytest.mark.parametrize("bench,row", TABLE, ids=[f"{b}-{i}" for i, (b, _r) in enumerate(TABLE)])
def test_benchmark_scorer_table(bench, row):
    t, reply, expected = row
    assert t.scorer == bench
    assert score(t, reply).correct is expected, reply


def test_each_benchmark_has_at_least_ten_replies():
    for bench in ("masbench", "smfr", "gsm8k", "aime", "math", "choice"):
        assert sum(b == bench for b, _ in TABLE) >= 10


def test_extracted_answers_follow_the_same_rules():
    """What the harness passes when a node has no reply text: the rule still applies."""
    assert score(MASBENCH_TWO, ["9", "5"]).correct
    assert not score(MASBENCH_TWO, ["9"]).correct  # count mismatch
    assert score(SMFR_TIE, ["Erin, Greta"]).correct and not score(SMFR_TIE, ["Erin"]).correct
    assert score(MASBENCH_TWO, ["9"], reply="\\boxed{9} \\boxed{5}").correct  # the reply wins


def test_json_list_answer_is_kept_whole():
    assert extract_raw('{"answer": ["Erin", "Greta"]}', n=1, how="json") == ["Erin, Greta"]
    assert extract_raw('{"answer": ["9", "5", "1"]}', n=2, how="json") == ["9", "5"]
    old_style_smfr = task(["erin, greta"], "set", candidates=["Erin", "Greta", "Hiro"])
    assert score(old_style_smfr, '{"answer": ["Erin", "Greta"]}').correct


@pytest.mark.parametrize("a,b,same", [("\\frac{1}{2}", "0.5", True), ("1/2", "0.5", True), ("2", "3", False),
                                       ("\\sqrt{8}", "2\\sqrt{2}", True), ("x+1", "1+x", True)])
def test_math_equal(a, b, same):
    assert math_equal(b, a) is same
