"""The text ReAct protocol: tool use for models without function calling (the embedded one, a
plain completion endpoint). A tool-using node adds :func:`instructions` to the system message; the
model answers with lines of the form::

    Thought: I need the founder of Velmora first.
    Action: search[founder of Velmora]
    Action: read_document({"doc_id": "d-0007"})

and the node runs every ``Action`` (several in one reply are parallel calls), shows the results as
``Observation`` turns (:func:`observation`) and asks again, until the model writes
``Final Answer: …`` (the agent's usual ``Answer: …`` works too).

:func:`parse` reads a reply. It never raises and tolerates the noise small models make: any case,
spaces around the brackets, markdown (``**Action:**``), a missing closing bracket (the rest of the
line is the argument), trailing text after the bracket, quotes around a plain argument, a JSON
object spread over several lines, the ``Action: name`` + ``Action Input: …`` two-line form, a JSON
action (``Action: {"name": "search", "arguments": {...}}``), ``Finish[answer]``, and invented
``Observation:`` lines (everything from the first one on is ignored: the model cannot know the
result yet). An ``Answer`` that comes *after* an ``Action`` is not final (it was written before the
observation); one that comes first ends the loop.

Arguments are passed to :func:`~masbench.tools.base.dispatch` as text: a JSON object's text is
validated against the tool's schema, a plain string fills the tool's one required field. Nothing
here interprets them further, and nothing is executed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .base import Tool, ToolCall, ToolResult

MAX_SCAN_CHARS = 20_000
"""Only this much of a reply is read (a runaway reply cannot cost more)."""
MAX_CALLS = 32
"""At most this many actions are read from one reply (the node caps what it runs per step)."""
MAX_JSON_LINES = 40
"""A JSON argument may continue over at most this many further lines."""

_LEAD = r"^[\s>*_#`~\-+•\d.)]{0,10}"
_ACTION = re.compile(_LEAD + r"action(?:\s*\d+)?[*_`\s]*[:：][*_`\s]*(?P<rest>.*)$", re.I)
_INPUT = re.compile(_LEAD + r"action[\s_]*input[*_`\s]*[:：]\s*(?P<rest>.*)$", re.I)
_FINAL = re.compile(_LEAD + r"(?:final[\s_]*answer|answer)[*_`\s]*[:：][*_`\s]*(?P<body>.*)$", re.I)
_OBSERVATION = re.compile(_LEAD + r"observation(?:\s*\d+)?\b", re.I)
_NAME = re.compile(r"(?P<name>[A-Za-z_][\w.\-]*)\s*(?P<open>[\[(:])?\s*")
_FINISH_NAMES = frozenset({"finish", "final_answer", "finalanswer", "final", "answer", "final-answer"})
_FINAL_PHRASE = re.compile(r"final\s+answer\b\s*", re.I)
_CLOSE = {"[": "]", "(": ")"}


@dataclass(slots=True)
class Parsed:
    """What one reply asks for."""

    calls: list[ToolCall] = field(default_factory=list)
    """The tool calls, in the order written (empty when the reply is final)."""
    final: str | None = None
    """The final answer's text, when the reply gives one before any action (else None)."""
    thought: str = ""
    """The text before the first action or final answer."""

    @property
    def done(self) -> bool:
        """The reply ends the loop: a final answer and no tool call."""
        return self.final is not None and not self.calls


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'`":
        return s[1:-1].strip()
    return s


def _braces_balanced(s: str) -> bool:
    """Whether every ``{`` outside JSON strings is closed (a cheap scan, no parsing)."""
    depth, in_str, esc = 0, False, False
    for ch in s:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
    return depth <= 0


def _json_action(rest: str) -> tuple[str, str | Mapping[str, object]] | None:
    """``{"name": "search", "arguments": {...}}`` (or ``action`` / ``action_input``) as (name, args)."""
    try:
        obj = json.loads(rest)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    name = obj.get("name", obj.get("action", obj.get("tool")))
    if not isinstance(name, str) or not name.strip():
        return None
    args = next((obj[k] for k in ("arguments", "action_input", "input", "args", "parameters") if k in obj), {})
    if isinstance(args, str):
        return name.strip(), args
    if isinstance(args, dict):
        return name.strip(), {str(k): v for k, v in args.items()}
    return name.strip(), json.dumps(args)


class _Reader:
    """One pass over a reply's lines."""

    def __init__(self, text: str, names: Iterable[str], id_prefix: str):
        self.lines = text[:MAX_SCAN_CHARS].splitlines()
        self.canon = {n.lower(): n for n in names}
        self.prefix = id_prefix
        self.out = Parsed()

    def name(self, raw: str) -> str:
        return self.canon.get(raw.lower(), raw)

    def gather(self, i: int, buf: str) -> tuple[str, int]:
        """``buf`` (from line ``i``) extended over the next lines until its braces balance."""
        j = i
        while j + 1 < len(self.lines) and j - i < MAX_JSON_LINES and not _braces_balanced(buf):
            j += 1
            buf += "\n" + self.lines[j]
        return buf, j

    def add(self, name: str, args: str | Mapping[str, object]) -> None:
        calls = self.out.calls
        if len(calls) < MAX_CALLS:
            calls.append(ToolCall(self.name(name), args, f"{self.prefix}{len(calls)}"))

    def bracketed(self, i: int, open_: str, after: str) -> tuple[str, int]:
        """The argument after an opening bracket on line ``i`` (and, for a JSON object, the lines
        it continues over): (argument text, index of the last line used)."""
        close = _CLOSE[open_]
        if after.lstrip().startswith("{"):
            after, i = self.gather(i, after)
            end = after.rfind("}")
            if end >= 0:
                return after[: end + 1].strip(), i
        k = after.rfind(close)
        return _unquote(after[:k] if k >= 0 else after.rstrip(close + " ")), i

    def action(self, i: int, rest: str) -> tuple[bool, int]:
        """Read the action on line ``i``: (whether it was a final answer, last line used)."""
        rest = rest.strip().strip("*`").strip()
        if rest.startswith("{"):
            buf, j = self.gather(i, rest)
            got = _json_action(buf[: buf.rfind("}") + 1] if "}" in buf else buf)
            if got is not None:
                if got[0].lower() in _FINISH_NAMES:
                    a = got[1]
                    return self.finish(a if isinstance(a, str) else json.dumps(dict(a)), j), j
                self.add(*got)
            return False, j
        m = _FINAL_PHRASE.match(rest)
        if m:  # "Action: Final Answer[...]" / "Action: Final Answer: ..."
            body = rest[m.end():].strip().lstrip(":[(").rstrip("])").strip()
            return self.finish(body, i), i
        m = _NAME.match(rest)
        if m is None:
            return False, i
        name, open_, after = m.group("name"), m.group("open"), rest[m.end():]
        if open_ in _CLOSE:
            args, i = self.bracketed(i, open_, after)
        else:
            args = _unquote(after)
            if not args and i + 1 < len(self.lines):  # "Action: search" then "Action Input: ..."
                nxt = _INPUT.match(self.lines[i + 1])
                if nxt is not None:
                    i += 1
                    args = nxt.group("rest").strip()
                    if args.startswith("{"):
                        args, i = self.gather(i, args)
                        args = args[: args.rfind("}") + 1] if "}" in args else args
                    else:
                        args = _unquote(args)
        if name.lower() in _FINISH_NAMES:
            return self.finish(args, i), i
        self.add(name, args)
        return False, i

    def finish(self, body: str, i: int) -> bool:
        """A final answer on line ``i`` (its text runs to the end of the reply); True if it counts."""
        if self.out.calls:
            return False  # written before the observation it would need: not final
        rest = [body.strip()] + [ln for ln in self.lines[i + 1:] if not _ACTION.match(ln)]
        self.out.final = "\n".join(x for x in rest if x is not None).strip()
        return True

    def run(self) -> Parsed:
        lines, i, first = self.lines, 0, None
        while i < len(lines):
            line = lines[i]
            if _OBSERVATION.match(line) and (self.out.calls or self.out.final is not None or first is not None):
                break  # an invented observation: the rest is the model talking to itself
            m = _ACTION.match(line)
            if m is not None:
                first = i if first is None else first
                final, i = self.action(i, m.group("rest"))
                if final:
                    break
                i += 1
                continue
            f = _FINAL.match(line)
            if f is not None and not self.out.calls:
                first = i if first is None else first
                self.finish(f.group("body"), i)
                break
            i += 1
        self.out.thought = "\n".join(lines[: first if first is not None else len(lines)]).strip()
        return self.out


def parse(text: str, names: Iterable[str] = (), *, id_prefix: str = "call-") -> Parsed:
    """The tool calls and final answer of a reply in the text protocol (see the module docstring).
    ``names``: the allowed tool names (a name written in another case is mapped to its spelling);
    ``id_prefix``: the calls' ids are ``{id_prefix}0``, ``{id_prefix}1``, …. Never raises."""
    return _Reader(text if isinstance(text, str) else str(text), names, id_prefix).run()


def _arg_lines(t: Tool) -> list[str]:
    schema = t.Args.model_json_schema()
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    out = []
    for name, p in props.items():
        if not isinstance(p, dict):
            continue
        typ = p.get("type") or "/".join(str(x.get("type")) for x in p.get("anyOf", []) if isinstance(x, dict)) or "any"
        bits = [f"{name} ({typ}, {'required' if name in required else 'default ' + json.dumps(p.get('default'))})"]
        if p.get("description"):
            bits.append(str(p["description"]))
        out.append(": ".join(bits))
    return out


def instructions(tools: Mapping[str, Tool]) -> str:
    """The system-message section that describes the allowed tools and the text protocol."""
    rows = []
    example = None
    for name, t in tools.items():
        args = _arg_lines(t)
        rows.append(f"- {name}: {t.description}" + (f"\n  Arguments: {'; '.join(args)}" if args else ""))
        one = t.single_field()
        if example is None and one is not None:
            example = f"Action: {name}[your {one} here]"
    example = example or (f"Action: {next(iter(tools))}({{\"argument\": \"value\"}})" if tools else "")
    return ("You can use these tools:\n" + "\n".join(rows) + "\n\n"
            "To use a tool, write a line\n"
            "Action: tool_name[argument]\n"
            "for a tool with one required argument, or give all its arguments as a JSON object:\n"
            "Action: tool_name({\"argument\": \"value\"})\n"
            f"For example:\n{example}\n"
            "You may write several Action lines to make several calls at once. Then stop writing: each "
            "result comes back to you as an Observation.\n"
            "When you know the answer, write a last line\n"
            "Final Answer: <the answer>")


def native_instructions() -> str:
    """The system-message section for function calling (the tools travel in the request)."""
    return ("Call the tools you need; you may call several at once. When you know the answer, reply "
            "without a tool call and end with a line\nFinal Answer: <the answer>")


def observation(results: Sequence[ToolResult]) -> str:
    """The user turn that shows a step's tool results (text protocol)."""
    if len(results) == 1:
        return f"Observation: {results[0].text}"
    return "\n\n".join(f"Observation {i} ({r.call.name}): {r.text}" for i, r in enumerate(results, 1))


__all__ = ["MAX_CALLS", "MAX_SCAN_CHARS", "Parsed", "instructions", "native_instructions", "observation", "parse"]
