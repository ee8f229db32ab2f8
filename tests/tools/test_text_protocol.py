"""The text ReAct protocol: the parser reads what small models write (noise included), never
raises on any text, and the instructions describe every allowed tool."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masbench.tools import ToolCall, ToolResult, resolve, tool
from masbench.tools.protocol import instructions, observation, parse

NAMES = ["search", "read_document", "calculator"]


def calls(text: str) -> list[tuple[str, object]]:
    return [(c.name, c.arguments) for c in parse(text, NAMES).calls]


@pytest.mark.parametrize("text, expected", [
    ("Action: search[founder of Velmora]", [("search", "founder of Velmora")]),
    ("action:search[x]", [("search", "x")]),
    ("  ACTION :  Search [ spaced words ]  ", [("search", "spaced words")]),
    ("**Action:** search[bold markdown]", [("search", "bold markdown")]),
    ("Action: search[no closing bracket", [("search", "no closing bracket")]),
    ("Action: search[words] and then I will read it.", [("search", "words")]),
    ("Action: search[a [nested] bracket] trailing", [("search", "a [nested] bracket")]),
    ('Action: search["quoted words"]', [("search", "quoted words")]),
    ('Action: search("parenthesised")', [("search", "parenthesised")]),
    ("Action: search: colon form", [("search", "colon form")]),
    ("Action: search plain words", [("search", "plain words")]),
    ('Action: read_document({"doc_id": "d-7"})', [("read_document", '{"doc_id": "d-7"}')]),
    ('Action: calculator({"expression":\n  "1 + 2"\n})', [("calculator", '{"expression":\n  "1 + 2"\n}')]),
    ('Action: search\nAction Input: the two-line form', [("search", "the two-line form")]),
    ('Action: search\nAction Input: {"query": "json", "k": 2}', [("search", '{"query": "json", "k": 2}')]),
    ('Action: {"name": "search", "arguments": {"query": "q", "k": 3}}', [("search", {"query": "q", "k": 3})]),
    ('Action: {"action": "read_document", "action_input": "d-2"}', [("read_document", "d-2")]),
    ("Action 1: search[a]\nAction 2: search[b]", [("search", "a"), ("search", "b")]),
])
def test_actions_small_models_write_are_read(text: str, expected: list) -> None:
    assert calls(text) == expected


def test_several_actions_are_parallel_calls_with_distinct_ids_in_order() -> None:
    p = parse("Thought: two things at once.\nAction: search[alpha]\nAction: read_document[d-1]\n"
              "Action: calculator[2 * 21]", NAMES, id_prefix="s3-")
    assert [(c.name, c.arguments, c.id) for c in p.calls] == [
        ("search", "alpha", "s3-0"), ("read_document", "d-1", "s3-1"), ("calculator", "2 * 21", "s3-2")]
    assert p.thought == "Thought: two things at once." and p.final is None and not p.done


@pytest.mark.parametrize("text, final", [
    ("Thought: done.\nFinal Answer: Tarsk", "Tarsk"),
    ("final answer : 42", "42"),
    ("**Final Answer:** Paris", "Paris"),
    ("Answer: 17", "17"),
    ("Action: Finish[Paris]", "Paris"),
    ("Action: Final Answer[Oslo]", "Oslo"),
    ("Action: final answer: 9", "9"),
    ('Action: {"name": "final_answer", "arguments": "Rome"}', "Rome"),
])
def test_a_final_answer_ends_the_loop(text: str, final: str) -> None:
    p = parse(text, NAMES)
    assert p.done and p.calls == [] and p.final == final


def test_an_answer_written_after_an_action_is_not_final() -> None:
    p = parse("Action: search[x]\nFinal Answer: a guess before seeing the result", NAMES)
    assert [c.arguments for c in p.calls] == ["x"] and p.final is None and not p.done


def test_an_invented_observation_and_what_follows_it_are_ignored() -> None:
    p = parse("Action: search[real]\nObservation: [d-9] something I made up\nAction: search[invented]\n"
              "Final Answer: made up", NAMES)
    assert [c.arguments for c in p.calls] == ["real"] and p.final is None


def test_names_take_the_allowed_spelling_and_unknown_names_pass_through() -> None:
    assert calls("Action: SEARCH[x]\nAction: Read_Document[d]\nAction: browse[y]") == [
        ("search", "x"), ("read_document", "d"), ("browse", "y")]


def test_a_reply_without_protocol_lines_has_neither_calls_nor_final() -> None:
    p = parse("I think the answer might be in the corpus somewhere.", NAMES)
    assert p.calls == [] and p.final is None and p.thought.startswith("I think")


def test_a_runaway_reply_is_bounded() -> None:
    p = parse("Action: search[x]\n" * 1000, NAMES)
    assert len(p.calls) == 32


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_the_parser_never_raises_on_arbitrary_text(text: str) -> None:
    p = parse(text, NAMES)
    assert isinstance(p.calls, list) and (p.final is None or isinstance(p.final, str))


_PIECES = st.sampled_from(["Action:", "action :", "Action Input:", "Final Answer:", "Answer:", "Observation:",
                           "search", "read_document", "Finish", "[", "]", "(", ")", "{", "}", '"', "\n", " ",
                           '{"name": "search"', '"arguments": {', "**", ":", ",", "\\", "x"])


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=40).map("".join))
def test_the_parser_never_raises_on_protocol_shaped_noise(text: str) -> None:
    p = parse(text, NAMES)
    for c in p.calls:
        assert isinstance(c.name, str) and isinstance(c.arguments, (str, dict))


@tool("proto_lookup", description="Look a key up.")
def _lookup(key: str, exact: bool = False) -> str:
    return key


def test_instructions_describe_every_allowed_tool_and_the_format() -> None:
    text = instructions(resolve(["calculator", "proto_lookup"]))
    for part in ("- calculator:", "expression (string, required)", "- proto_lookup: Look a key up.",
                 "key (string, required)", "exact (boolean, default false)", "Action: tool_name[argument]",
                 "Final Answer: <the answer>", "Action: calculator[your expression here]"):
        assert part in text, part


def test_observations_label_each_result_of_a_parallel_step() -> None:
    r1 = ToolResult(ToolCall("search", "a"), "ok", "[d1] one", json.dumps("a"))
    r2 = ToolResult(ToolCall("calculator", "1+"), "error", "Error: calculator failed", json.dumps("1+"))
    assert observation([r1]) == "Observation: [d1] one"
    assert observation([r1, r2]) == ("Observation 1 (search): [d1] one\n\n"
                                     "Observation 2 (calculator): Error: calculator failed")
