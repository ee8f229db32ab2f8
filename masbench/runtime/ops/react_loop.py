"""One execution of a ``react`` node (:mod:`.react`): a bounded loop of model
step → tool calls → observations.

Per step: fit the transcript into its budget (the node's ``overflow`` setting), one model call
through ``calls.model`` (budget-checked before it is sent: a refused step ends the loop, the node's
status ``budget_exhausted``), the reply's tool calls (native ``tool_calls``, or the text protocol's
``Action:`` lines, :mod:`masbench.tools.protocol`), each dispatched (:func:`masbench.tools.dispatch`;
up to ``parallel_tools`` of them concurrently, the rest ``refused``), recorded (a ``tool_calls``
row each, :mod:`masbench.runtime.tool_rows`) and shown back — native: the assistant message with its
``tool_calls`` and one ``tool`` message per call; text: one ``Observation`` user turn. A reply
without tool calls is the final one. After ``max_steps`` steps one more call asks for the final
answer.

The transcript is the system message and the question (kept), then one *turn* per step (the
reply and its observations, dropped together). Its size is estimated like the simulator counts
prompts (~4 characters a token plus 3 a message).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ...charge import Tally
from ...spec.react import ReactParams
from ...tools import Tool, ToolCall, ToolContext, ToolResult, dispatch
from ...tools import protocol
from ..calls import BudgetRefused
from ..scope import Env, Scope
from ..tool_rows import emit, result_ids, trace
from ..values import OK, Val
from .base import Calls
from .prompted import Answer, PromptedNode

TOOL_CACHE: dict[str, object] = {}
"""Per-process resources of tools (an index built once per corpus), handed to every tool call."""

OBSERVATION_STOP = "\nObservation:"
"""A text-protocol step stops before the model writes its own observation."""

SUMMARY_SYSTEM = ("You condense the working notes of a research assistant. Keep every fact that helps answer "
                  "the question, with the document ids in brackets; drop everything else.")


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """Prompt tokens of a transcript, estimated (~4 characters a token, 3 per message; tool calls
    counted by their JSON)."""
    chars = 0
    for m in messages:
        chars += len(str(m.get("content") or ""))
        if m.get("tool_calls"):
            chars += len(json.dumps(m["tool_calls"]))
    return max(1, math.ceil(chars / 4)) + 3 * len(messages)


@dataclass(slots=True)
class Bound:
    """A react node's settings, resolved at bind time."""

    params: ReactParams
    tools: dict[str, Tool]
    context_tokens: int
    instructions: str
    """The system-message section of the text protocol."""
    schemas: list[dict[str, object]]
    """The tools' function-calling entries (native mode)."""


@dataclass(slots=True)
class Turn:
    """One step of the transcript: the model's reply and the observations it got."""

    messages: list[dict[str, Any]]
    docs: list[str]
    """Documents whose text the observations show (ids of ok results)."""


@dataclass(slots=True)
class Transcript:
    """The messages a step sends: the kept head, a note for dropped steps, the turns."""

    head: list[dict[str, Any]]
    turns: list[Turn] = field(default_factory=list)
    note: str | None = None
    """What stands for dropped steps: their count, or their summary."""
    note_docs: list[str] = field(default_factory=list)
    dropped: int = 0

    def messages(self) -> list[dict[str, Any]]:
        out = list(self.head)
        if self.note:
            out.append({"role": "user", "content": self.note})
        for t in self.turns:
            out.extend(t.messages)
        return out

    def seen(self) -> list[str]:
        """Documents whose text is in the context (first-seen order)."""
        out: dict[str, None] = dict.fromkeys(self.note_docs)
        for t in self.turns:
            out.update(dict.fromkeys(t.docs))
        return list(out)


def _mentions(text: str, doc: str) -> bool:
    return re.search(rf"(?<![\w\-]){re.escape(doc)}(?![\w\-])", text) is not None


def _render_turns(turns: list[Turn]) -> str:
    parts = []
    for t in turns:
        for m in t.messages:
            content = m.get("content") or ""
            if m.get("tool_calls"):
                content = (content + "\n" if content else "") + "Tool calls: " + json.dumps(
                    [c.get("function") for c in m["tool_calls"]], ensure_ascii=False)
            label = "Result" if m.get("role") == "tool" else ("Assistant" if m.get("role") == "assistant" else "Observation")
            parts.append(f"{label}: {content}")
    return "\n\n".join(parts)


def _native_calls(raw: list[dict[str, Any]] | None, step: int) -> list[ToolCall]:
    out = []
    for j, c in enumerate(raw or []):
        fn = c.get("function") if isinstance(c, dict) else None
        fn = fn if isinstance(fn, dict) else {}
        args = fn.get("arguments", "")
        out.append(ToolCall(str(fn.get("name") or ""), args if isinstance(args, (str, dict)) else json.dumps(args),
                            str(c.get("id") or f"call-s{step}-{j}") if isinstance(c, dict) else f"call-s{step}-{j}"))
    return out


def _args_text(c: ToolCall) -> str:
    return c.arguments if isinstance(c.arguments, str) else json.dumps(dict(c.arguments), ensure_ascii=False,
                                                                         default=str)


class ReactLoop:
    """One execution (see the module docstring)."""

    def __init__(self, node: PromptedNode, answer: Answer | None, cfg: Bound, sc: Scope, env: Env, idx: int, st: Tally,
                 calls: Calls, native: bool, messages: list[dict[str, Any]]):
        self.node, self.sc, self.env, self.idx, self.st, self.calls, self.cfg = node, sc, env, idx, st, calls, cfg
        self.answer = answer
        self.native = native
        self.p = cfg.params
        head = list(messages)
        section = protocol.native_instructions() if native else cfg.instructions
        if head and head[0].get("role") == "system":
            head[0] = {"role": "system", "content": f"{head[0]['content']}\n\n{section}"}
        else:
            head.insert(0, {"role": "system", "content": section})
        self.tr = Transcript(head)
        self.where = sc.prefix + node.key
        self.steps = 0
        self.tool_calls = 0
        self.docs: dict[str, None] = {}
        self.stop = "answer"
        task = sc.sh.task
        self.ctx = ToolContext(task=task, cache=TOOL_CACHE, tags={**sc.sh.tags, "node": self.where})
        meta = task.meta if task is not None else {}
        self.hops = list(meta.get("hops") or [])
        self.evidence = list(meta.get("evidence") or [])
        head_text = "\n".join(str(m.get("content") or "") for m in head)
        self.given = [d for d in self.evidence if _mentions(head_text, str(d))]
        """Evidence documents the prompt cites by id (handed over by an upstream agent)."""
        self.base_meta = node.sim_meta(sc, env)

    # ----- requests ------------------------------------------------------------------------------
    def meta(self, step: int, mode: str = "react", **extra: Any) -> dict[str, Any]:
        m = dict(self.base_meta["sim"])
        m.update(mode=mode, tools=list(self.cfg.tools), hops=self.hops, evidence=self.evidence, seen=self.seen(),
                 step=step, max_steps=self.p.max_steps, question=self.sc.question, **extra)
        return {"sim": m}

    def seen(self) -> list[str]:
        """What the simulator is told is in the context: the documents its observations (or a
        summary) still show, and the evidence documents the prompt itself cites by id — facts an
        upstream agent handed over (a searcher's ``[doc] fact`` notes)."""
        out = dict.fromkeys(self.given)
        out.update(dict.fromkeys(self.tr.seen()))
        return list(out)

    def request(self, final: bool) -> dict[str, Any]:
        if self.native:
            return {"tools": self.cfg.schemas, "tool_choice": "none" if final else "auto"}
        return {"stop": [*self.node.stop[:3], OBSERVATION_STOP]}

    async def model(self, messages: list[dict[str, Any]], meta: dict[str, Any], params: dict[str, Any] | None):
        return await self.calls.model(self.node, self.sc, messages, meta, self.idx, self.st, params)

    # ----- the context limit ---------------------------------------------------------------------
    async def fit(self, step: int) -> bool:
        """Bring the transcript within ``context_tokens`` (False: ``overflow: stop`` and it does not fit).
        The latest turn is always kept: the model must see the result of its last action."""
        tr, limit = self.tr, self.cfg.context_tokens
        if estimate_tokens(tr.messages()) <= limit:
            return True
        if self.p.overflow == "stop":
            return False
        dropped: list[Turn] = []
        while len(tr.turns) > 1 and estimate_tokens(tr.messages()) > limit:
            dropped.append(tr.turns.pop(0))
        if not dropped:
            return True
        tr.dropped += len(dropped)
        if self.p.overflow == "summarize":
            await self.summarize(dropped, step)
        else:
            tr.note = f"({tr.dropped} earlier step{'s' if tr.dropped > 1 else ''} dropped to fit the context.)"
        while len(tr.turns) > 1 and estimate_tokens(tr.messages()) > limit:  # the summary itself may not fit
            tr.turns.pop(0)
            tr.dropped += 1
        return True

    async def summarize(self, dropped: list[Turn], step: int) -> None:
        """One extra model call that condenses the dropped steps (and any earlier summary)."""
        tr = self.tr
        body = (f"Earlier summary:\n{tr.note}\n\n" if tr.note else "") + _render_turns(dropped)
        docs = list(dict.fromkeys(tr.note_docs + [d for t in dropped for d in t.docs]))
        messages = [{"role": "system", "content": SUMMARY_SYSTEM},
                    {"role": "user", "content": f"Question: {self.sc.question}\n\nNotes:\n{body}\n\n"
                                                "Write the summary."}]
        res = await self.model(messages, self.meta(step, "summarize", dropped=docs), None)
        if res.error is not None or not res.text.strip():
            tr.note = f"({tr.dropped} earlier steps dropped to fit the context.)"
            tr.note_docs = []
            return
        tr.note = f"Summary of {tr.dropped} earlier step{'s' if tr.dropped > 1 else ''}:\n{res.text.strip()}"
        tr.note_docs = [d for d in docs if _mentions(res.text, d)]

    # ----- tools ---------------------------------------------------------------------------------
    async def act(self, step: int, call_id: str, asked: list[ToolCall]) -> list[ToolResult]:
        cap = self.p.parallel_tools
        run, over = asked[:cap], asked[cap:]

        async def one(c: ToolCall) -> ToolResult:
            return await dispatch(c, self.cfg.tools, self.ctx)

        results = list(await asyncio.gather(*(one(c) for c in run)))
        for c in over:
            why = f"at most {cap} tool calls run per step; this one was not run"
            results.append(ToolResult(c, "refused", f"Error: {why}.", json.dumps(_args_text(c)), error=why))
        for pos, r in enumerate(results):
            emit(self.sc.sh, self.where, step, pos, call_id, r)
            trace(r, step, self.ctx.tags)
            for d in result_ids(r) or ():
                self.docs[d] = None
        self.tool_calls += len(results)
        return results

    def turn(self, text: str, asked: list[ToolCall], results: list[ToolResult]) -> Turn:
        docs = list(dict.fromkeys(d for r in results for d in (result_ids(r) or ())))
        if self.native:  # every call the model asked for gets its answer (a refused one too), ids matching
            calls = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _args_text(c)}}
                     for c in asked]
            msgs: list[dict[str, Any]] = [{"role": "assistant", "content": text or None, "tool_calls": calls}]
            msgs += [{"role": "tool", "tool_call_id": r.call.id, "content": r.text} for r in results]
            return Turn(msgs, docs)
        return Turn([{"role": "assistant", "content": text},
                     {"role": "user", "content": protocol.observation(results)}], docs)

    # ----- the loop ------------------------------------------------------------------------------
    def extract(self, text: str, data: Any) -> tuple[str, ...] | None:
        """The answers of a reply (None: the agent gives no answer of its own)."""
        a = self.answer
        return a.extract(self.sc, text, data) if a is not None else None

    def value(self, text: str, final: str | None, status: str = OK, error: str | None = None) -> Val:
        """The node's value; answers only from a final reply (a tool-asking one has none)."""
        answers = self.extract(text, None) if text and status == OK else None
        if not answers and final:
            answers = self.extract("Answer: " + final.splitlines()[0], None)
        data = {"steps": self.steps, "tool_calls": self.tool_calls, "docs_seen": list(self.docs), "stop": self.stop}
        return Val(text=text, answers=answers, data=data, status=status, error=error)

    async def run(self) -> Val:
        p, step, last = self.p, 0, ""
        while True:
            out_of_steps = step >= p.max_steps
            try:
                out_of_room = bool(self.tr.turns) and not await self.fit(step)
                final = out_of_steps or out_of_room
                messages = self.tr.messages()
                if final:
                    self.stop = "max_steps" if out_of_steps else "context"
                    why = "You have used all your steps" if out_of_steps else "Your notes are full"
                    messages.append({"role": "user", "content": f"{why}. Do not call a tool: reply now with your "
                                                                "best final answer as `Final Answer: <answer>`."})
                res = await self.model(messages, self.meta(step, final=final), self.request(final))
            except BudgetRefused:
                self.stop = "budget"
                return self.value(last, None, "budget_exhausted",
                                  f"budget exhausted: step {step + 1} of the ReAct loop not made")
            if res.error is not None:
                self.stop = "error"
                return self.value(last, None, "error", res.error)
            self.steps += 1
            text = last = res.text
            if self.native:
                asked, parsed_final = _native_calls(res.tool_calls, step), None
            else:
                parsed = protocol.parse(text, self.cfg.tools, id_prefix=f"call-s{step}-")
                asked, parsed_final = parsed.calls, parsed.final
            if final or not asked:
                if not final and parsed_final is None and not self.native and not self.extract(text, None):
                    self.tr.turns.append(Turn([{"role": "assistant", "content": text}, {
                        "role": "user", "content": "Your reply had no Action line and no Final Answer. Reply with "
                                                   "`Action: tool_name[argument]` or `Final Answer: <answer>`."}], []))
                    step += 1
                    continue
                return self.value(text, parsed_final)
            results = await self.act(step, res.call_id, asked)
            self.tr.turns.append(self.turn(text, asked, results))
            step += 1


__all__ = ["Bound", "OBSERVATION_STOP", "ReactLoop", "TOOL_CACHE", "Transcript", "Turn", "estimate_tokens"]
