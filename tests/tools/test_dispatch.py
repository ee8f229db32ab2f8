"""One dispatch for every tool call: arguments that fail their schema, unknown and not-allowed
tools, oversized results and tools that raise all come back as recorded statuses with a message
the model can read — never an exception, never model text run as code."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from masbench.tools import TOOLS, ToolCall, ToolContext, ToolOutput, dispatch, resolve, tool
from masbench.tools.base import Tool


@tool("disp_echo", description="Echo a word, n times.")
def _echo(word: str, n: int = 1) -> str:
    return " ".join([word] * n)


@tool("disp_boom")
def _boom(x: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom on {x}")


@tool("disp_big", max_result_chars=50)
def _big(n: int) -> str:
    """A long result."""
    return "é" * n


@tool("disp_data")
async def _data(q: str) -> list[str]:
    """Returns structured data (doc ids)."""
    return ["d1", "d2"]


class _NotText(Tool):
    name = "disp_nottext"
    description = "returns a non-str text"
    Args = TOOLS["disp_echo"].Args

    async def run(self, args, ctx):
        return ToolOutput(12345)  # type: ignore[arg-type]  # a sloppy tool: its text is not a str


TOOLS.add("disp_nottext", _NotText(), replace=True)
ALLOWED = resolve(["disp_echo", "disp_boom", "disp_big", "disp_data", "disp_nottext", "calculator"])
CTX = ToolContext()


def run(name: str, args: object):
    return asyncio.run(dispatch(ToolCall(name, args, "c1"), ALLOWED, CTX))  # type: ignore[arg-type]


def test_ok_with_json_text_a_mapping_or_a_plain_string_for_the_one_required_field() -> None:
    assert run("disp_echo", '{"word": "hi", "n": 2}').text == "hi hi"
    r = run("disp_echo", {"word": "yo"})
    assert (r.status, r.text, json.loads(r.arguments)) == ("ok", "yo", {"word": "yo", "n": 1})
    r = run("disp_echo", "plain words")
    assert (r.status, r.text, r.bytes_out, r.truncated) == ("ok", "plain words", 11, False)


def test_structured_data_is_kept_for_the_caller() -> None:
    r = run("disp_data", "anything")
    assert r.ok and r.data == ["d1", "d2"] and json.loads(r.text) == ["d1", "d2"]


def test_arguments_failing_the_schema_are_invalid_args_with_pydantic_s_reason() -> None:
    for args, why in [('{"word": "x", "n": "many"}', "n:"), ('{"n": 2}', "word: Field required"),
                      ('{"word": "x", "extra": 1}', "extra: Extra inputs are not permitted"),
                      ('{"word": "x", ', "not valid JSON"), ('["a list"]', None)]:
        r = run("disp_echo", args)
        assert r.status == "invalid_args" or (why is None and r.status == "ok"), (args, r)
        if why is not None:
            assert why in (r.error or "") and r.text.startswith("Error: disp_echo:"), (args, r.text)


def test_a_plain_string_for_a_tool_with_several_required_fields_is_invalid() -> None:
    @tool("disp_two")
    def two(a: str, b: str) -> str:
        """Two fields."""
        return a + b

    r = asyncio.run(dispatch(ToolCall("disp_two", "just text"), resolve(["disp_two"]), CTX))
    assert r.status == "invalid_args" and "takes a JSON object with a, b" in (r.error or "")
    TOOLS.remove("disp_two")


def test_unknown_and_not_allowed_tools_are_told_apart_and_list_what_is_available() -> None:
    r = run("no_such_tool", "x")
    assert r.status == "unknown_tool" and "there is no tool 'no_such_tool'" in r.text and "disp_echo" in r.text
    r = asyncio.run(dispatch(ToolCall("calculator", "1+1"), resolve(["disp_echo"]), CTX))
    assert r.status == "not_allowed" and "not one this agent may use" in r.text and "(available: disp_echo)" in r.text


def test_a_registered_tool_that_cannot_load_is_not_allowed_not_a_crash() -> None:
    TOOLS.add("disp_broken", "masbench.tools.no_such_module:TOOL", replace=True)
    try:
        r = run("disp_broken", "x")
        assert r.status == "not_allowed"
    finally:
        TOOLS.remove("disp_broken")


def test_a_tool_that_raises_is_an_error_the_model_reads() -> None:
    r = run("disp_boom", "now")
    assert r.status == "error" and r.error == "RuntimeError: boom on now"
    assert r.text == "Error: disp_boom failed: RuntimeError: boom on now" and r.latency_s >= 0


def test_an_oversized_result_is_cut_and_its_full_size_kept() -> None:
    r = run("disp_big", '{"n": 500}')
    assert r.status == "ok" and r.truncated and r.bytes_out == 1000  # 500 two-byte characters
    assert r.text.startswith("é" * 50) and r.text.endswith("[… cut: 450 more characters]")


def test_a_tool_output_whose_text_is_not_a_string_is_shown_as_text() -> None:
    r = run("disp_nottext", "x")
    assert r.status == "ok" and r.text == "12345"


def test_model_text_is_never_run_as_code(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    for expr in [f"open({str(target)!r}, 'w').write('x')", "__import__('os').system('true')", "(lambda: 1)()",
                 "[x for x in ()]", "2 ** 10 ** 10"]:
        r = run("calculator", json.dumps({"expression": expr}))
        assert r.status == "error" and r.text.startswith("Error: calculator failed: CalculatorError"), expr
    assert not target.exists()
    assert run("calculator", "(17 + 25) * 3").text == "126"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20), st.one_of(st.text(), st.dictionaries(st.text(max_size=8), st.text(max_size=8))))
def test_dispatch_never_raises_on_anything_a_model_writes(name: str, args: object) -> None:
    r = run(name, args)
    assert r.status in ("ok", "invalid_args", "unknown_tool", "not_allowed", "error") and isinstance(r.text, str)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_argument_text_for_a_real_tool_is_a_status(args: str) -> None:
    for name in ("disp_echo", "calculator"):
        r = run(name, args)
        assert r.status in ("ok", "invalid_args", "error"), (name, args, r)


def test_lone_surrogates_in_a_model_s_json_are_replaced_not_a_crash() -> None:
    r = run("disp_echo", '{"word": "a\\ud800b"}')
    assert r.status == "ok" and r.text == "a?b" and json.loads(r.arguments)["word"] == "a?b"
    r = run("disp_echo", {"\ud800": "x"})
    assert r.status == "invalid_args" and r.text.encode()


class _Nap(Tool):
    """Sleeps 0.05 s, then returns the run's design tag (read from the context), or raises if asked to."""

    name = "disp_nap"
    description = "naps"
    Args = TOOLS["disp_echo"].Args

    async def run(self, args, ctx):
        await asyncio.sleep(0.05)
        word = args.model_dump()["word"]
        if word == "fail":
            raise ValueError("woke badly")
        return f"{word} for {ctx.tags['design']}"


def test_every_result_keeps_its_call_start_time_and_latency() -> None:
    """The call object itself, a wall-clock start between the clocks read around dispatch, and a latency
    of at least the tool's 0.05 s nap (a small slack for the loop's clock) and at most the whole dispatch's time."""
    import time

    nap = _Nap()
    ctx = ToolContext(tags={"design": "d7"})
    for name, args, status in [("disp_nap", '{"word": "hi"}', "ok"), ("disp_nap", '{"word": "fail"}', "error"),
                               ("disp_nap", '{"n": 1}', "invalid_args"), ("nope", "x", "unknown_tool"),
                               ("calculator", "1", "not_allowed")]:
        call = ToolCall(name, args, "c2")
        w0, p0 = time.time(), time.perf_counter()
        r = asyncio.run(dispatch(call, {"disp_nap": nap, "disp_echo": ALLOWED["disp_echo"]}, ctx))
        p1, w1 = time.perf_counter(), time.time()
        assert r.status == status and r.call is call and w0 <= r.t_start <= w1, (name, args, r)
        if status in ("ok", "error"):  # the tool ran: its nap is timed
            assert 0.04 <= r.latency_s <= p1 - p0, (status, r.latency_s, p1 - p0)
        else:
            assert r.latency_s == 0.0
    r = asyncio.run(dispatch(ToolCall("disp_nap", '{"word": "hi"}'), {"disp_nap": nap}, ctx))
    assert r.text == "hi for d7"  # the context given to dispatch is the one the tool reads


def test_an_unknown_tool_lists_every_available_one_and_keeps_mapping_arguments_as_text() -> None:
    # sorted names joined by ", "; a mapping's arguments recorded as the JSON string of its JSON text,
    # a date (not JSON) as its str(): json.dumps('{"when": "2024-01-02"}') written out by hand
    import datetime

    r = asyncio.run(dispatch(ToolCall("nope", {"when": datetime.date(2024, 1, 2)}),
                             {"zeta": ALLOWED["disp_echo"], "alpha": ALLOWED["disp_echo"]}, CTX))
    assert r.text == "Error: there is no tool 'nope' (available: alpha, zeta)."
    assert r.arguments == '"{\\"when\\": \\"2024-01-02\\"}"'


def test_a_text_that_is_a_str_is_shown_as_its_characters_not_its_str() -> None:
    # a str-mixin Enum member is a str whose str() is its name ("_Shade.RED" on Python 3.11+): the
    # model is shown its characters, "red" (3 bytes); only a text that is no str goes through str()
    from enum import Enum

    class _Shade(str, Enum):
        RED = "red"

    class _Paint(Tool):
        name, description, Args = "disp_paint", "paints", TOOLS["disp_echo"].Args

        async def run(self, args, ctx):
            return ToolOutput(_Shade.RED)

    r = asyncio.run(dispatch(ToolCall("disp_paint", "x"), {"disp_paint": _Paint()}, CTX))
    assert (r.status, r.text, r.bytes_out) == ("ok", "red", 3)
