"""Python functions as tools (masbench.tools.base: ``tool``, a plugin entry point, ``resolve``) and
dispatch's every status, each tool made inside its test — a tool registered at import time is made
once per process, before a test (or a mutant) can see how. Expected texts are written out by hand."""

from __future__ import annotations

import asyncio
import datetime
import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, model_validator

from masbench.registry import RegistryError
from masbench.tools import TOOLS, ToolCall, ToolContext, ToolOutput, dispatch, resolve, tool
from masbench.tools.base import DEFAULT_MAX_RESULT_CHARS, Tool, _parse_args, _plugin_tool


def _run(t: Tool, args: object, name: str | None = None):
    name = name or t.name
    return asyncio.run(dispatch(ToolCall(name, args, "c9"), {name: t}, ToolContext()))  # type: ignore[arg-type]


@pytest.fixture
def made():
    names: list[str] = []
    yield names
    for n in names:
        TOOLS.remove(n)


def test_a_function_becomes_a_tool_with_its_signature_as_the_schema(made):
    def rate(base: str, quote: str = "USD", scale: int = 1) -> dict:
        """Exchange rate between two currencies."""
        return {"pair": f"{base}/{quote}", "rate": 2 * scale}

    assert tool("fn_rate")(rate) is rate  # the decorator hands the function back
    made.append("fn_rate")
    t = TOOLS["fn_rate"]
    assert t.name == "fn_rate" and t.description == "Exchange rate between two currencies."
    assert t.max_result_chars == DEFAULT_MAX_RESULT_CHARS == 4000
    assert t.schema() == {"type": "function", "function": {
        "name": "fn_rate", "description": "Exchange rate between two currencies.",
        "parameters": {"type": "object", "additionalProperties": False, "required": ["base"],
                       "properties": {"base": {"title": "Base", "type": "string"},
                                      "quote": {"title": "Quote", "type": "string", "default": "USD"},
                                      "scale": {"title": "Scale", "type": "integer", "default": 1}}}}}
    assert t.single_field() == "base"  # the one required field
    # JSON-like data: its JSON text is shown, the data kept
    r = _run(t, {"base": "EUR", "scale": 3})
    assert r.status == "ok" and r.text == '{"pair": "EUR/USD", "rate": 6}' and r.data == {"pair": "EUR/USD", "rate": 6}
    assert r.arguments == '{"base":"EUR","quote":"USD","scale":3}' and r.bytes_out == 30 and not r.truncated
    r = _run(t, "GBP")  # a plain string fills the one required field
    assert r.status == "ok" and json.loads(r.text)["pair"] == "GBP/USD"
    r = _run(t, {"base": "EUR", "spread": 1})  # extra arguments are refused
    assert r.status == "invalid_args" and r.error == "spread: Extra inputs are not permitted"


def test_description_cap_and_async_functions(made):
    async def shout(word: str) -> ToolOutput:
        return ToolOutput(word.upper() * 3, {"n": 3})

    tool("fn_shout", description="Shout.", max_result_chars=5)(shout)
    made.append("fn_shout")
    t = TOOLS["fn_shout"]
    assert (t.description, t.max_result_chars) == ("Shout.", 5)
    r = _run(t, "ab")
    # "ABABAB" is 6 characters: cut at 5, one more character noted
    assert r.status == "ok" and r.text == "ABABA\n[… cut: 1 more characters]" and r.truncated and r.bytes_out == 6
    assert r.data == {"n": 3}

    def anon(x):  # no docstring, no annotation: the name is the description, the argument a string
        return f"<{x}>"

    tool("fn_anon")(anon)
    made.append("fn_anon")
    t = TOOLS["fn_anon"]
    assert t.description == "fn_anon" and t.Args.model_fields["x"].annotation is str
    r = _run(t, {"x": "5"})
    assert (r.status, r.text) == ("ok", "<5>")
    assert _run(t, {"x": 5}).status == "invalid_args"  # a string field: a number is not coerced


def test_a_result_exactly_at_the_cap_is_whole(made):
    tool("fn_five", max_result_chars=5)(lambda: "abcde")
    made.append("fn_five")
    r = _run(TOOLS["fn_five"], {})
    assert (r.text, r.truncated, r.bytes_out) == ("abcde", False, 5)


def test_star_args_cannot_be_described(made):
    def many(*words: str) -> str:
        return " ".join(words)

    with pytest.raises(TypeError, match=r"tool 'fn_many': \*args/\*\*kwargs cannot be described to a model"):
        tool("fn_many")(many)

    def kw(**opts: str) -> str:
        return ""

    with pytest.raises(TypeError, match="fn_kw"):
        tool("fn_kw")(kw)
    assert "fn_many" not in TOOLS and "fn_kw" not in TOOLS


def test_what_a_plugin_entry_point_may_name():
    class Echo(Tool):
        description = "Echo."

    inst = Echo()
    assert _plugin_tool("p1", inst) is inst
    made = _plugin_tool("p2", Echo)
    assert isinstance(made, Echo) and made is not inst

    def fn(a: int) -> int:
        """Doubles."""
        return 2 * a

    t = _plugin_tool("p3", fn)
    assert (t.name, t.description, t.max_result_chars) == ("p3", "Doubles.", 4000)
    assert _run(t, {"a": 4}).text == "8"
    assert _plugin_tool("p4", lambda b: b).description == "p4"
    with pytest.raises(TypeError, match="tool 'p5': a masbench.tools entry point names a Tool, a Tool subclass or a "
                                        "function, not a int"):
        _plugin_tool("p5", 3)


def test_resolve_names_each_tool_and_refuses_an_unknown_one(made):
    class Nameless(Tool):
        description = "no name set"

    TOOLS.add("fn_nameless", Nameless(), replace=True)
    made.append("fn_nameless")
    got = resolve(["fn_nameless", "calculator"])
    assert list(got) == ["fn_nameless", "calculator"] and got["fn_nameless"].name == "fn_nameless"
    assert got["calculator"].name == "calculator"
    with pytest.raises(RegistryError, match="no_such"):
        resolve(["no_such"])


def test_every_status_and_its_text():
    from masbench.tools.calculator import TOOL

    allowed = {"calculator": TOOL}

    def go(name, args):
        return asyncio.run(dispatch(ToolCall(name, args), allowed, ToolContext()))

    r = go("nope", "x")
    assert (r.status, r.text) == ("unknown_tool", "Error: there is no tool 'nope' (available: calculator).")
    assert r.arguments == '"x"' and r.error == "there is no tool 'nope' (available: calculator)"
    r = asyncio.run(dispatch(ToolCall("calculator", {"expression": "1"}), {}, ToolContext()))
    assert r.text == "Error: tool 'calculator' is not one this agent may use (available: none)."
    assert r.arguments == json.dumps('{"expression": "1"}')  # the mapping as JSON text, quoted
    r = go("calculator", '{"expression": 1')
    assert r.status == "invalid_args" and r.arguments == '"{\\"expression\\": 1"'
    assert r.text == "Error: calculator: arguments are not valid JSON: Expecting ',' delimiter at position 16."
    r = go("calculator", "[1, 2]")  # no "{": a plain string for the one field, which the calculator refuses
    assert (r.status, r.arguments) == ("error", '{"expression":"[1, 2]"}') and "List is not allowed" in r.text
    r = go("calculator", {"expression": 3})
    assert r.status == "invalid_args" and r.error == "expression: Input should be a valid string"
    assert r.arguments == '{"expression": 3}'
    r = go("calculator", {})
    assert r.error == "expression: Field required"
    r = go("calculator", "  2 * 3  ")
    assert (r.status, r.text, r.data, r.arguments) == ("ok", "6", 6, '{"expression":"2 * 3"}')
    r = go("calculator", "1 / 0")
    assert (r.status, r.error) == ("error", "CalculatorError: division by zero")
    assert r.text == "Error: calculator failed: CalculatorError: division by zero"
    assert r.t_start > 0 and r.call.name == "calculator" and not r.ok


def test_json_of_data_keeps_non_ascii_and_shows_other_objects_as_text(made):
    # written by hand: ensure_ascii=False keeps "ü" as one character (not "\u00fc"); a date is not JSON,
    # default=str shows it as str(date(2024, 1, 2)) == "2024-01-02"
    def city(name: str) -> dict:
        return {"city": name, "since": datetime.date(2024, 1, 2)}

    tool("fn_city")(city)
    made.append("fn_city")
    r = _run(TOOLS["fn_city"], {"name": "Zürich"})
    assert (r.status, r.text) == ("ok", '{"city": "Zürich", "since": "2024-01-02"}')
    assert r.bytes_out == 42  # 41 characters, "ü" two UTF-8 bytes


def test_registering_a_name_again_replaces_the_tool(made):
    # a notebook cell run twice, a module reloaded: the second function wins, no "already registered"
    tool("fn_again")(lambda: "first")
    made.append("fn_again")
    tool("fn_again")(lambda: "second")
    assert _run(TOOLS["fn_again"], {}).text == "second"


def test_a_list_argument_is_cleaned_item_by_item(made):
    def join(words: list[str]) -> str:
        return "-".join(words)

    tool("fn_join")(join)
    made.append("fn_join")
    # a lone surrogate inside a list item is replaced by "?" (as in a plain string field), the others kept
    r = _run(TOOLS["fn_join"], '{"words": ["a\\ud800", "b"]}')
    assert (r.status, r.text, r.arguments) == ("ok", "a?-b", '{"words":["a?","b"]}')


def test_a_schema_without_a_title_is_still_a_schema():
    # an Args model whose JSON schema drops its title itself: schema() has nothing to pop and must not fail
    def drop_title(s: dict[str, Any], cls: type) -> None:
        s.pop("title")

    class Untitled(BaseModel):
        model_config = ConfigDict(json_schema_extra=drop_title)
        x: int

    class T(Tool):
        name, description, Args = "untitled", "No title.", Untitled

    assert T().schema() == {"type": "function", "function": {"name": "untitled", "description": "No title.",
                            "parameters": {"type": "object", "required": ["x"],
                                           "properties": {"x": {"title": "X", "type": "integer"}}}}}


class _Range(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lo: int
    hi: int
    ids: list[int] = []

    @model_validator(mode="after")
    def _ordered(self) -> "_Range":
        if self.lo > self.hi:
            raise ValueError("lo above hi")
        return self


class _RangeTool(Tool):
    name, description, Args = "range", "A range.", _Range

    async def run(self, args, ctx):
        assert isinstance(args, _Range)
        return f"{args.lo}..{args.hi}"


def test_invalid_args_messages_name_each_field_and_the_whole_object():
    t = _RangeTool()
    # two errors joined by "; ", each "field: pydantic's message"; a list item's place is "ids.1"
    r = _run(t, {"lo": 1, "hi": 2, "ids": [3, "x"], "extra": 0})
    assert r.status == "invalid_args"
    assert [m.split(": ")[0] for m in (r.error or "").split("; ")] == ["ids.1", "extra"]
    assert r.error == ("ids.1: Input should be a valid integer, unable to parse string as an integer; "
                       "extra: Extra inputs are not permitted")
    # a model-level check has no field: it is the arguments' as a whole
    r = _run(t, {"lo": 3, "hi": 2})
    assert r.error == "arguments: Value error, lo above hi"
    assert r.text == "Error: range: arguments: Value error, lo above hi."
    # the refused arguments are recorded as JSON text, non-ASCII kept, a non-JSON value (a date) as its str
    r = _run(t, {"lo": "é", "hi": datetime.date(2024, 1, 2)})
    assert r.status == "invalid_args" and r.arguments == '{"lo": "é", "hi": "2024-01-02"}'


def test_arguments_that_are_no_object_are_refused_with_their_text():
    t = _RangeTool()
    # a plain string for a tool of two required fields: the string recorded as a JSON string
    assert _parse_args(t, "3 4") == (None, '"3 4"', "range takes a JSON object with lo, hi, ids")
    # neither text nor a mapping (a caller's list): refused, its str() recorded as a JSON string
    got = _parse_args(t, [1, 2])  # type: ignore[arg-type]
    assert got == (None, '"[1, 2]"', "arguments must be a JSON object")
