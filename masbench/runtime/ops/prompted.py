"""What the ops that call an agent's model share (:mod:`.agent`, :mod:`.select`, :mod:`.react`):
the agent named by one key, its prompt and system templates (the node's ``prompt``/``system``
override them), a structured output and its JSON hint — compiled into a :class:`PromptedNode`,
which builds a call's messages and the simulator's hints — and the prompt text they are made of
(labelled input blocks, the answers in a reply's text, the simulator's view of the task)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...spec.agent import AgentSpec
from ...text import extract_answers, normalize_answer
from .. import links
from ..info import Checking, NodeInfo
from ..scope import Env, Scope
from ..template import Template
from ..values import Val
from .base import Binding, Getter, Node, Op

_BLANKS = re.compile(r"\n\s*\n(?:\s*\n)+")


def render_inputs(inputs: tuple | list, env: Env) -> str:
    """Labelled inputs that have a value, as one text block."""
    parts = []
    for label, getter in inputs:
        t = getter(env)
        if t:
            parts.append(f"{label}:\n{t}")
    return "\n\n".join(parts)


def cited_evidence(sc: Scope, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """For a task with gold evidence (a search task: ``meta["hops"]``), what the simulator needs to
    know which facts a call has in front of it: the hops and the evidence documents its messages
    cite by id (an upstream searcher's ``[doc] fact`` notes). Empty for every other task."""
    task = sc.sh.task
    hops = task.meta.get("hops") if task is not None else None
    if not hops:
        return {}
    evidence = [str(d) for d in task.meta.get("evidence") or []] if task is not None else []
    text = "\n".join(str(m.get("content") or "") for m in messages)
    return {"hops": hops, "evidence": evidence, "seen": [d for d in evidence if _cites(text, d)]}


def _cites(text: str, doc: str) -> bool:
    return re.search(rf"(?<![\w\-]){re.escape(doc)}(?![\w\-])", text) is not None


def sim_task(sc: Scope) -> str:
    """The task a simulated call belongs to (its id; the question when run outside a suite)."""
    return sc.sh.tags.get("task_id") or sc.question


@lru_cache(maxsize=8192)
def extract_text(text: str, n: int, how: str, field: str | None) -> tuple[str, ...] | None:
    """The normalized answers in a reply's text (``n`` of them), by the agent's extraction rule."""
    found = extract_answers(text, n, how, field)
    return tuple(found) if found else None


@dataclass(frozen=True, slots=True)
class Answer:
    """How a node's answer is extracted from its agent's reply."""

    how: str
    """``json`` (a structured field), else the agent's ``answer.extract`` rule."""
    field: str | None

    def extract(self, sc: Scope, text: str, data: Any) -> tuple[str, ...] | None:
        """The normalized answers of a reply (from its structured field, else from its text)."""
        if self.how == "json" and isinstance(data, dict) and self.field in data:
            v = data[self.field]
            vals = v if isinstance(v, list) else [v]
            if sc.n == 1 and len(vals) > 1:  # one list-valued answer (a tie of names): keep it whole
                vals = [", ".join(str(x) for x in vals)]
            out = tuple(normalize_answer(str(x)) for x in vals[: sc.n])
            return out or None
        return extract_text(text, sc.n, self.how, self.field)


def answer_of(info: NodeInfo) -> Answer | None:
    """How ``info``'s answer is extracted (None: its agent gives no answer of its own)."""
    a = info.agent
    if a is None:
        return None
    ans = a.answer
    if info.schema is not None:
        fld = ans.field or next((f for f in ("answer", "final", "result") if f in info.schema), None)
        return Answer("json", fld) if fld is not None else None
    return Answer(ans.extract, ans.field)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PromptedNode(Node):
    """A node that calls its agent's model with rendered templates."""

    agent: AgentSpec
    max_tokens: int
    temperature: float | None
    stop: tuple[str, ...]
    """The agent's stop sequences (empty: none sent)."""
    prompt: Template
    system: Template | None
    extra_inputs: tuple[tuple[str, Getter], ...]
    """Labelled ``from`` inputs appended after the prompt (those it does not mention)."""
    json_hint: str
    """Appended to the prompt when a schema is declared and the prompt does not ask for JSON."""
    inputs: tuple[tuple[str, Getter], ...]
    """The ``from`` inputs as values (name, getter): the answers the call is shown, the candidates."""
    skills: tuple[str, ...]
    """The agent's skill hints (the simulator's)."""
    judge: bool
    """The agent judges a candidate (the simulator answers as a judge)."""
    schema: dict[str, str] | None
    """The structured output's fields (None: free text)."""

    def messages(self, env: Env) -> list[dict[str, Any]]:
        """The chat messages of one call."""
        user = self.prompt.render(env)
        if self.extra_inputs:
            block = render_inputs(self.extra_inputs, env)
            if block:
                user = f"{user}\n\n{block}" if user else block
        if "\n\n\n" in user:
            user = _BLANKS.sub("\n\n", user)
        if self.json_hint:
            user += self.json_hint
        if self.system is not None:
            return [{"role": "system", "content": self.system.render(env)}, {"role": "user", "content": user}]
        return [{"role": "user", "content": user}]

    def sim_skills(self, sc: Scope) -> list[str]:
        """The task's skills and the agent's, as the simulator is told."""
        return sc.skills + list(self.skills) if self.skills else sc.skills

    def sim_meta(self, sc: Scope, env: Env) -> dict[str, Any]:
        """What the simulator needs to answer like a model would (never sent to a real provider):
        the gold answers and skills, the task id (its latent difficulty), the agent (its reaction),
        and the answers the call is shown."""
        m: dict[str, Any] = {"gold": sc.gold, "skills": self.sim_skills(sc), "task": sim_task(sc),
                             "agent": self.actor}
        shown = self.shown_answers(env)
        if shown:
            m["shown"] = shown
        if self.judge:
            m["mode"] = "judge"
            cand = self.judged(env)
            m["candidate"] = ",".join(cand.answers) if cand is not None and cand.answers else ""
            if self.schema is not None:
                m["json"] = True
        elif self.schema is not None:
            m["mode"] = "json"
            m["schema"] = self.schema
            m["n_items"] = max(2, sc.n)
        else:
            m["mode"] = "answer"
        return {"sim": m}

    def shown_answers(self, env: Env) -> list[str]:
        """The answers a call sees: every answer among its ``from`` inputs (question excluded)."""
        out = []
        for name, vg in self.inputs:
            if name == "question":
                continue
            v = vg(env)
            if v is not None:
                out.extend(",".join(m.answers) for m in v.members() if m.answers)
        return out

    def judged(self, env: Env) -> Val | None:
        """The candidate a judge looks at: the first ``from`` input that has an answer."""
        for name, vg in self.inputs:
            if name == "question":
                continue
            v = vg(env)
            if v is None:
                continue
            for m in reversed(v.members()):
                if m.answers:
                    return m
        return None


class PromptedOp(Op):
    """An op whose node calls its agent's model with the agent's (or the node's) templates."""

    agent_key: str = "agent"
    """The node key that names the agent."""
    prompted = True

    def check(self, an: Checking, info: NodeInfo) -> None:
        ref = getattr(info.spec, self.agent_key)
        if ref is None:
            an.at(info, (), f"a {info.kind} node needs `{self.agent_key}:` naming its agent")
            return
        info.agent = links.resolve_agent(an, info, ref, (self.agent_key,))

    def templates(self, info: NodeInfo) -> list[tuple[tuple, str | None]]:
        a: AgentSpec | None = info.agent
        out: list[tuple[tuple, str | None]] = []
        if info.spec.prompt is not None:
            out.append((("prompt",), info.spec.prompt))
        elif a is not None:
            out.append(((self.agent_key,), a.prompt))
        if info.spec.system is not None:
            out.append((("system",), info.spec.system))
        elif a is not None:
            out.append(((self.agent_key,), a.system))
        return out

    def extra_inputs(self, b: Binding, info: NodeInfo, referenced: set[str]) -> tuple[tuple[str, Getter], ...]:
        """The labelled inputs appended after the prompt: those its templates do not mention."""
        return b.unmentioned(info, referenced)

    def prompted_fields(self, b: Binding, info: NodeInfo) -> dict[str, Any]:
        """The :class:`PromptedNode` fields of ``info`` (with the base fields: keywords for the node)."""
        spec = info.spec
        a = info.agent
        assert a is not None  # the check resolved it (the design compiles only without problems)
        text = spec.prompt if spec.prompt is not None else a.prompt
        prompt = b.compile(info, text)
        referenced = set(prompt.names)
        system_text = spec.system if spec.system is not None else a.system
        system = b.compile(info, system_text) if system_text else None
        if system is not None:
            referenced |= system.names
        schema = info.schema
        json_hint = ""
        if schema is not None and "json" not in text.lower():
            json_hint = f"\n\nReply with only a JSON object with these fields: {fields_desc(schema)}."
        return dict(b.base(info), agent=a, max_tokens=spec.max_tokens or a.max_tokens,
                    temperature=spec.temperature if spec.temperature is not None else a.temperature,
                    stop=tuple(a.stop), prompt=prompt, system=system,
                    extra_inputs=() if "inputs" in referenced else self.extra_inputs(b, info, referenced),
                    json_hint=json_hint, inputs=b.input_vals(info), skills=tuple(a.skills), judge=bool(a.judge),
                    schema=schema)


def fields_desc(schema: dict[str, str] | None) -> str:
    """A schema's fields as a reply instruction names them: ``answer (str), steps (list)``."""
    return ", ".join(f"{k} ({t})" for k, t in (schema or {}).items())


__all__ = ["Answer", "PromptedNode", "PromptedOp", "answer_of", "cited_evidence", "extract_text", "fields_desc",
           "render_inputs", "sim_task"]
