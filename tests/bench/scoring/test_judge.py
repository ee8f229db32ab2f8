"""The judge scorer's pure half: rendering the judge's messages, parsing its replies, aggregating k
samples, the rule's verdict beside it, and the seeded positions of a pairwise comparison."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from masbench.bench import MODEL_SCORERS, SCORERS, TaskInstance, score
from masbench.bench.scoring.judge import (JudgeCall, aggregate, fill, judge_calls, parse_score, position_of,
                                          rule_scorer, rule_verdict, unknown_names)
from masbench.spec import AgentSpec, JudgeSpec

AGENT = AgentSpec(name="j", system="Grade strictly.", prompt="{question}\n(judge of: {task})")


def task(**kw) -> TaskInstance:
    base: dict[str, Any] = dict(id="t1", source="s", question="What is 2 plus 3? Explain.", answers=["5"], scorer="judge",
                meta={"check": "numeric", "rubric": "Says 5."})
    base.update(kw)
    return TaskInstance(**base)


@pytest.mark.parametrize("text, expected", [
    ("The reply is fine.\nVerdict: PASS", 1.0),
    ("It fails on one point, but overall.\nVerdict: pass", 1.0),   # the verdict line wins over earlier words
    ("verdict: FAIL", 0.0),
    ("INCORRECT: the sum is wrong", 0.0),
    ("This is correct.", 1.0),
    ("Yes, it meets the rubric", 1.0),
    ("No.", 0.0),
    ("I cannot tell.", None),
    ("", None),
    (None, None),
])
def test_pass_fail_parsing(text, expected):
    assert parse_score(text, JudgeSpec(agent="j")) == expected


def test_graded_and_pairwise_parsing():
    graded = JudgeSpec(agent="j", scale="graded")
    assert parse_score("Good.\nScore: 7", graded) == pytest.approx(0.7)
    assert parse_score("Score: 3/5", graded) == pytest.approx(0.6)        # its own top wins over max_score
    assert parse_score("score = 4 out of 8", graded) == pytest.approx(0.5)
    assert parse_score("Score: 12", graded) == 1.0                        # clipped
    assert parse_score("Score: 2. Later: Score: 9", graded) == pytest.approx(0.9)  # the last one
    assert parse_score("no number", graded) is None
    pair = JudgeSpec(agent="j", scale="pairwise", rubric="{first} vs {second}")
    assert parse_score("Winner: B", pair, "B") == 1.0
    assert parse_score("Winner: B", pair, "A") == 0.0
    assert parse_score("winner: tie", pair, "A") == 0.5
    assert parse_score("A is nicer", pair, "A") is None


def test_aggregate_majority_mean_and_unparsed():
    maj = JudgeSpec(agent="j", k=3)
    assert aggregate([1.0, 0.0, 1.0], maj) == (True, pytest.approx(2 / 3), 2)
    assert aggregate([1.0, 0.0], maj) == (False, 0.5, 1)                  # a tie fails
    assert aggregate([1.0, None, None], maj) == (False, pytest.approx(1 / 3), 1)  # unparsed counts as a fail
    skip = JudgeSpec(agent="j", unparsed="skip")
    assert aggregate([1.0, None, None], skip) == (True, 1.0, 1)
    assert aggregate([None], skip) == (False, 0.0, 0)
    mean = JudgeSpec(agent="j", scale="graded", aggregate="mean", threshold=0.6)
    assert aggregate([0.9, 0.5, 0.5], mean)[0] is True                    # mean 0.633 though one sample passed
    assert aggregate([0.9, 0.4, 0.4], mean)[0] is False


def test_judge_calls_render_the_rubric_into_the_agent_prompt():
    spec = JudgeSpec(agent="j", k=3, seed=2)
    calls = judge_calls(task(meta={"check": "numeric", "rubric": "Says 5.", "reference": "2 + 3 = 5"}),
                        "It is 5. Answer: 5", spec, AGENT, truth=True)
    assert [c.sample_index for c in calls] == [2000, 2001, 2002]          # the seed fixes the samples
    system, user = calls[0].messages
    assert system == {"role": "system", "content": "Grade strictly."}
    text = user["content"]
    assert "What is 2 plus 3? Explain." in text and "It is 5. Answer: 5" in text and "Says 5." in text
    assert "Reference answer:\n2 + 3 = 5" in text and text.endswith("(judge of: What is 2 plus 3? Explain.)")
    assert calls[0].meta["sim"] == {"mode": "grade", "truth": True, "scale": "pass-fail", "task": "t1",
                                    "agent": "j", "skills": ["judge"]}
    bare = judge_calls(task(answers=[], meta={}), "some text", JudgeSpec(agent="j"), AGENT)[0]
    assert "Reference answer" not in bare.messages[1]["content"]
    assert "correctly, completely" in bare.messages[1]["content"]         # the generic rubric


def test_pairwise_positions_are_seeded_and_swap_the_replies():
    spec = JudgeSpec(agent="j", scale="pairwise", k=16, rubric="A: {first} | B: {second}")
    t = task(meta={"reference": "REF"})
    calls = judge_calls(t, "MINE", spec, AgentSpec(name="j", prompt="{question}"))
    positions = [c.position for c in calls]
    assert set(positions) == {"A", "B"}                                   # both orders occur over 16 samples
    assert positions == [position_of(spec, t, j) for j in range(16)]      # and are the same on a re-score
    for c in calls:
        body = c.messages[-1]["content"]
        assert body == ("A: MINE | B: REF" if c.position == "A" else "A: REF | B: MINE")
        assert c.meta["sim"]["position"] == c.position
    other = JudgeSpec(agent="j", scale="pairwise", k=16, rubric="A: {first} | B: {second}", seed=1)
    assert [position_of(other, t, j) for j in range(16)] != positions     # another seed, another draw


def test_rubric_templates_are_checked():
    with pytest.raises(ValidationError, match="first"):
        JudgeSpec(agent="j", scale="pairwise", rubric="Compare {reply}")
    with pytest.raises(ValidationError, match="reply"):
        JudgeSpec(agent="j", rubric="Judge the task {task}")
    assert unknown_names("{question} {task} {oops} {oops} {{literal}}", ("question", "task")) == ["oops"]
    assert fill("{a} and {b} and {{c}}", {"a": "1"}) == "1 and {b} and {{c}}"


def test_rule_verdict_where_the_task_has_a_checkable_gold():
    assert rule_scorer(task()) == "numeric"
    assert rule_scorer(task(scorer="numeric", meta={})) == "numeric"       # a rule-scored task checks itself
    assert rule_scorer(task(answers=[], meta={})) is None                 # open-ended: nothing to check
    assert rule_verdict(task(), ["5"], "Answer: 5") is True
    assert rule_verdict(task(), ["6"], "Answer: 6") is False
    assert rule_verdict(task(answers=[], meta={}), [], "x") is None


def test_the_scorer_asks_k_times_and_never_for_an_empty_reply():
    scorer = MODEL_SCORERS["judge"]
    asked: list[JudgeCall] = []

    async def ask(call: JudgeCall) -> str | None:
        asked.append(call)
        return ["Verdict: PASS", "Verdict: FAIL", None][call.sample_index % 3]

    spec = JudgeSpec(agent="j", k=3)
    judged = asyncio.run(scorer.score(task(), "Answer: 6", ["6"], spec, AGENT, ask))
    assert len(asked) == 3 and judged.samples == [1.0, 0.0, None] and judged.passes == 1
    assert judged.score.correct is False and judged.rule_correct is False and judged.judge == "j"
    assert all(c.meta["sim"]["truth"] is False for c in asked)            # a simulated judge is told the truth
    asked.clear()
    empty = asyncio.run(scorer.score(task(), "  ", [""], spec, AGENT, ask))
    assert asked == [] and empty.score.correct is False and empty.samples == [None] * 3


def test_score_refuses_a_task_that_needs_a_model():
    assert "judge" in SCORERS and "judge" in MODEL_SCORERS
    with pytest.raises(ValueError, match="asks a model"):
        score(task(), ["5"])


@pytest.mark.parametrize("text, expected", [
    # a verdict in markdown bold after an explanation that itself says "correct"
    ("**Evaluation:** The response correctly identifies that 2 + 3 = 5 and shows the addition.\n\n**Verdict:** PASS",
     1.0),
    ("The reply states 6, which is incorrect; the sum is 5. It does not meet the rubric.\n\nVerdict: FAIL", 0.0),
    # the verdict line wins over a later PASS/FAIL word
    ("Verdict: FAIL\n\nNote: a reply saying 5 would pass.", 0.0),
    # no verdict line: the last PASS/FAIL/CORRECT/INCORRECT word (with its -ed/-es/-s ending)
    ("The reply is incorrect because it says 6.", 0.0),
    ("It passes: the answer matches the reference, though the explanation is thin. Correct.", 1.0),
    ("The final answer passes, but the explanation fails to show the carry.", 0.0),
    ("The reply failed at first but then corrects itself; the final answer is correct", 1.0),
    # neither: a reply that opens with yes or no (after markdown or quotes)
    ("**Yes** — it says 5 and explains why.", 1.0),
    ("No, the reply gives 6.", 0.0),
    ("\"no\" — off by one", 0.0),
    ("Nothing to object to; yes.", None),     # "Nothing" is not "no", and "yes" is not at the start
    ("passable, but barely", None),           # "passable" is not the word "pass"
])
def test_pass_fail_parsing_of_real_looking_replies(text, expected):
    assert parse_score(text, JudgeSpec(agent="j")) == expected


@pytest.mark.parametrize("text, expected", [
    ("The reply is mostly right but skips a step.\n\nScore: 8/10", 0.8),
    ("**Score:** 7", 0.7),                           # over max_score (10)
    ("Score: 3.5 / 5", 0.7),                         # its own top
    ("score = 2 out of 4", 0.5),
    ("Score: 7/0", 0.7),                             # a zero top is ignored: over max_score
    ("Score: -2", 0.0),                              # clipped at 0
    ("Score: 15 out of 10", 1.0),                    # clipped at 1
    ("First impression: Score: 9. On reflection, Score: 4/10.", 0.4),
])
def test_graded_parsing_of_real_looking_replies(text, expected):
    assert parse_score(text, JudgeSpec(agent="j", scale="graded")) == pytest.approx(expected)


@pytest.mark.parametrize("text, position, expected", [
    ("Reply A is more complete and cites the reference.\n\nWinner: **A**", "A", 1.0),
    ("Winner: Reply B", "A", 0.0),
    ("winner = reply b", "B", 1.0),
    ("Both are equally good. Winner: TIE", "B", 0.5),
    ("Winner: A. On second thought, Winner: B", "B", 1.0),   # the last one
    ("Winner: A", None, 1.0),                                 # no position: the reply stood first
    ("Winner: B", None, 0.0),
    ("Winner: Both", "A", None),
])
def test_pairwise_parsing_of_real_looking_replies(text, position, expected):
    spec = JudgeSpec(agent="j", scale="pairwise", rubric="{first} vs {second}")
    assert parse_score(text, spec, position) == expected


def test_aggregate_by_hand():
    # five samples at threshold 0.5: 0.5 passes (≥), 0.4 does not
    spec = JudgeSpec(agent="j", k=5)
    assert aggregate([0.5, 0.4, 1.0, 0.0, 0.5], spec) == (True, 0.6, 3)    # 3 of 5 pass: a majority
    assert aggregate([0.5, 0.4, 1.0, 0.0, 0.0], spec) == (False, 0.4, 2)   # 2 of 5
    assert aggregate([1.0, 1.0, 0.0, 0.0], spec) == (False, 0.5, 2)        # 2 of 4 is a tie: not a majority
    assert aggregate([], spec) == (False, 0.0, 0)
    # mean: (0.75 + 0.25 + 0.5) / 3 = 0.5 exactly, which passes (≥ 0.5); (0.75 + 0.25 + 0.25) / 3 ≈ 0.417 does
    # not; passes still counts the samples at or above the threshold
    assert aggregate([0.75, 0.25, 0.5], JudgeSpec(agent="j", aggregate="mean")) == (True, 0.5, 2)
    assert aggregate([0.75, 0.25, 0.25], JudgeSpec(agent="j", aggregate="mean")) == (False, pytest.approx(1.25 / 3), 1)
    # unparsed: fail counts None as 0 (1 of 3 pass); skip leaves it out (1 of 2: a tie)
    assert aggregate([1.0, 0.0, None], spec) == (False, pytest.approx(1 / 3), 1)
    assert aggregate([1.0, 0.0, None], JudgeSpec(agent="j", unparsed="skip")) == (False, 0.5, 1)
    assert aggregate([1.0, 1.0, None], JudgeSpec(agent="j", unparsed="skip")) == (True, 1.0, 2)
    assert aggregate([None, None], JudgeSpec(agent="j", unparsed="skip", aggregate="mean")) == (False, 0.0, 0)


def test_the_scorer_keeps_each_samples_reply_and_score():
    scorer = MODEL_SCORERS["judge"]
    replies = {0: "Verdict: PASS", 1: "Looks correct to me.", 2: "Verdict: FAIL"}

    async def ask(call: JudgeCall) -> str | None:
        return replies[call.sample_index - 1000]

    spec = JudgeSpec(agent="j", k=3, seed=1)
    judged = asyncio.run(scorer.score(task(), "Answer: 5", ["5"], spec, AGENT, ask))
    assert judged.texts == ["Verdict: PASS", "Looks correct to me.", "Verdict: FAIL"]
    assert judged.samples == [1.0, 1.0, 0.0] and judged.passes == 2 and judged.value == pytest.approx(2 / 3)
    assert judged.score.correct is True and judged.score.partial == pytest.approx(2 / 3)
    assert judged.score.predicted == ["5"] and judged.score.gold == ["5"] and judged.score.positions == [True]
    assert judged.rule_correct is True


def test_the_judges_messages_exactly():
    spec = JudgeSpec(agent="j", k=2, seed=3, rubric="T={task}|R={reply}|{reference_block}K={rubric}")
    agent = AgentSpec(name="j", system="Grade.", prompt="Q: {question} / {task} / {reply} / {reference} / {rubric}")
    t = task(meta={"check": "numeric", "rubric": "Says 5.", "reference": "2 + 3 = 5"})
    calls = judge_calls(t, "It is 5.", spec, agent)
    assert [c.sample_index for c in calls] == [3000, 3001] and [c.position for c in calls] == [None, None]
    block = "Reference answer:\n2 + 3 = 5\n\n"
    rubric = f"T=What is 2 plus 3? Explain.|R=It is 5.|{block}K=Says 5."
    assert calls[1].messages == [
        {"role": "system", "content": "Grade."},
        {"role": "user", "content": f"Q: {rubric} / What is 2 plus 3? Explain. / It is 5. / 2 + 3 = 5 / Says 5."}]
    assert calls[0].meta == {"sim": {"mode": "grade", "truth": None, "scale": "pass-fail", "task": "t1", "agent": "j",
                                     "skills": ["judge"]}}
    # no meta reference: the answers joined; no system prompt: one message
    bare = judge_calls(task(answers=["5", "five"], meta={}), "x", spec, AgentSpec(name="j", prompt="{question}"))
    assert len(bare[0].messages) == 1 and bare[0].messages[0]["role"] == "user"
    assert bare[0].messages[0]["content"].startswith("T=What is 2 plus 3? Explain.|R=x|Reference answer:\n5, five\n\nK=")
    assert "K=Says 5." not in bare[0].messages[0]["content"]


def test_a_task_that_needs_a_model_is_refused_outside_a_run_with_why():
    with pytest.raises(ValueError) as ei:
        score(task(), ["5"])
    assert str(ei.value) == ("task 't1': scorer 'judge' asks a model; it scores inside a run (the suite's `judge:` "
                             "block), not from extracted answers")


def test_pairwise_positions_follow_the_documented_draw():
    # the rule: blake2b (8 bytes, big-endian) of "position|seed|task id|sample"; even puts the reply first (A)
    import hashlib

    def by_hand(seed: int, task_id: str, j: int) -> str:
        h = hashlib.blake2b(f"position|{seed}|{task_id}|{j}".encode(), digest_size=8).digest()
        return "A" if int.from_bytes(h, "big") % 2 == 0 else "B"

    t = task()
    for seed in (0, 7):
        spec = JudgeSpec(agent="j", scale="pairwise", k=16, seed=seed, rubric="{first} vs {second}")
        assert [position_of(spec, t, j) for j in range(16)] == [by_hand(seed, "t1", j) for j in range(16)]
    other = task(id="t2")
    spec = JudgeSpec(agent="j", scale="pairwise", k=16, rubric="{first} vs {second}")
    assert [position_of(spec, other, j) for j in range(16)] == [by_hand(0, "t2", j) for j in range(16)]


def test_the_scorer_renders_the_reply_keeps_positions_and_fills_an_empty_reply():
    scorer = MODEL_SCORERS["judge"]
    seen: list[JudgeCall] = []

    async def ask(call: JudgeCall) -> str | None:
        seen.append(call)
        return "Winner: B"  # the second shown

    spec = JudgeSpec(agent="j", scale="pairwise", k=8, rubric="1: {first} | 2: {second}")
    t = task(meta={"reference": "REF"})
    judged = asyncio.run(scorer.score(t, "MINE", ["5"], spec, AgentSpec(name="j", prompt="{question}"), ask))
    # the reply is what the judge is shown; "Winner: B" is a win exactly where the reply stood second (B)
    assert all("MINE" in c.messages[-1]["content"] for c in seen)
    assert judged.samples == [1.0 if c.position == "B" else 0.0 for c in seen]
    assert {c.position for c in seen} == {"A", "B"}  # both occur among the 8, so the two cases are told apart
    empty = asyncio.run(scorer.score(t, "", ["5"], JudgeSpec(agent="j", k=3), AGENT, ask))
    assert empty.texts == [None, None, None] and empty.samples == [None, None, None]


def test_no_reference_renders_an_empty_block():
    spec = JudgeSpec(agent="j", rubric="[{reference_block}]{reply}")
    call = judge_calls(task(answers=[], meta={}), "R", spec, AgentSpec(name="j", prompt="{question}"))[0]
    assert call.messages == [{"role": "user", "content": "[]R"}]


def test_which_tasks_have_a_rule_and_a_top_of_one():
    assert rule_scorer(task(meta={})) is None                           # judged, answers, no check: no rule
    assert rule_scorer(task(answers=[], meta={"check": "numeric"})) is None  # a check but no gold
    # a graded reply's own top of 1 is a top like any other: 0.5 / 1
    assert parse_score("Score: 0.5 / 1", JudgeSpec(agent="j", scale="graded")) == 0.5


def test_the_rules_verdict_reads_the_whole_reply_where_the_rule_does():
    # gsm8k (a reply-reading rule) takes the number after "####" in the reply; the extracted answer handed
    # in beside it, 7, is wrong. So the verdict on the reply is a pass, and one taken from the extracted
    # answers alone (no reply) a fail: the two cases tell whether the reply reached the rule
    t = task(answers=["42"], meta={"check": "gsm8k"})
    reply = "6 * 7 = 42\n#### 42"
    assert rule_verdict(t, ["7"], reply) is True
    assert rule_verdict(t, ["7"], None) is False
    scorer = MODEL_SCORERS["judge"]
    asked: list[JudgeCall] = []

    async def ask(call: JudgeCall) -> str | None:
        asked.append(call)
        return "Verdict: FAIL"

    judged = asyncio.run(scorer.score(t, reply, ["7"], JudgeSpec(agent="j", k=2), AGENT, ask))
    assert judged.rule_correct is True and judged.score.correct is False  # the judge's verdict is its own
    assert [c.meta["sim"]["truth"] for c in asked] == [True, True]        # and the simulated judge is told the rule's
