"""The simulator's tool-using policy: what a ``sim/…`` model does in one ReAct step (request
metadata ``{"sim": {"mode": "react", ...}}``, sent by the ``react`` op) and how it summarises
dropped steps (``mode: "summarize"``). SIMULATED, like everything the simulator says.

The op tells it, per step: ``tools`` (the allowed names), ``hops`` (the task's
``[{"query", "doc", "fact", "answer"}]``, in order; may be empty), ``seen`` (the documents whose
text is still in the context — after truncation, so a small context makes it forget), ``step``
(0-based), ``max_steps`` and ``final`` (the op asks for the answer now), plus the usual ``gold`` / ``skills`` / ``task`` / ``agent`` and the
``question``. The policy (parameters: the profile's ``tools`` block, :class:`~masbench.spec.sim.SimTools`):

1. every hop's document is in ``seen`` (or the task has no hops) → **answer**: correct with the
   probability the profile gives a plain answer on this task (:meth:`SimModel.p_correct`, latent
   difficulty included), else a wrong answer (the task's ``distractors`` if the metadata has them,
   else the model's per-task wrong answers); the reply cites the facts it found (``Notes:`` then
   ``[doc] fact`` per evidence document seen — what an agent reading it downstream then knows) and
   says ``DONE`` (every hop found: what a chain of searchers stops on);
2. the last step (``step >= max_steps - 1``, or ``final``: the op asks for the answer now), or no
   ``search`` / ``read_document`` tool → **guess**: correct with
   probability ``tools.guess``, else wrong as above, citing the facts it did find (no ``DONE``);
3. otherwise **act** for the first hop whose document is not in ``seen``: with probability
   ``tools.search`` (the retrieval competence; default the accuracy for skill ``search``) a search
   with the hop's ideal ``query``; else, with probability ``tools.read`` and a document seen, a
   ``read_document`` of one of them (an unproductive step), else a vague search (some words of
   the question).

Replies use the text protocol (``Action: search[…]`` / ``Final Answer: …``), or native
``tool_calls`` when the request carries ``tools``. Every draw is seeded by the request (model,
messages, sample index) and the step, like every other simulator draw.

A summary (``mode: "summarize"``, ``dropped``: the documents of the dropped steps) names, in
brackets, each dropped evidence document with probability ``tools.summary_recall``; the op keeps
the named ones as seen.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .latent import SimModel, lookup

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_STOP = frozenset("a an and are as at be by did do does for from has have how in is it its of on or "
                  "the this that to was were what when where which who whom whose why with".split())


@dataclass(slots=True)
class Step:
    """One simulated ReAct reply."""

    text: str
    """The reply text (a thought and an action or final answer, in the text protocol)."""
    tool_calls: list[dict[str, Any]] | None = None
    """Native tool calls (OpenAI shape), when the request carried tools."""


def retrieval_competence(m: SimModel) -> float:
    """P(a search for the next hop uses its ideal query): ``tools.search``, else the accuracy for
    skill ``search``, else the profile's default accuracy."""
    p = m.profile
    if p.tool_policy.search is not None:
        return p.tool_policy.search
    v = lookup(p.accuracy, "search")
    return v if v is not None else p.accuracy.get("default", 0.5)


def _hops(meta: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [h for h in meta.get("hops") or [] if isinstance(h, Mapping) and h.get("doc") is not None]


def _vague(question: str, rng: random.Random) -> str:
    words = [w for w in _WORD.findall(question) if w.lower() not in _STOP]
    if len(words) > 5:
        keep = sorted(rng.sample(range(len(words)), 5))
        words = [words[i] for i in keep]
    return " ".join(words) or question.strip()[:60] or "information"


def _wrong(m: SimModel, task: str, gold: list[str], meta: Mapping[str, Any], rng: random.Random) -> list[str]:
    distractors = [str(d) for d in meta.get("distractors") or [] if str(d).strip()]
    if distractors:
        return [rng.choice(distractors)]
    return m.draw_wrong(task, gold, rng)


def _final(answers: Sequence[str], why: str, notes: Sequence[Mapping[str, Any]] = (), done: bool = False) -> Step:
    """A final reply: the thought, the facts found (``[doc] fact`` per evidence document seen, so
    an agent reading this reply downstream has them), ``DONE`` when every hop was found, the answer."""
    cited = "".join(f"[{h['doc']}] {h.get('fact') or ''}".rstrip() + "\n" for h in notes)
    body = (f"Notes:\n{cited}" if cited else "") + ("DONE\n" if done else "")
    return Step(f"Thought: {why}\n{body}Final Answer: {', '.join(answers)}")


def _act(name: str, key: str, value: str, why: str, step: int, native: bool) -> Step:
    if native:
        call = {"id": f"call_{step}_0", "type": "function",
                "function": {"name": name, "arguments": json.dumps({key: value})}}
        return Step(f"Thought: {why}", [call])
    return Step(f"Thought: {why}\nAction: {name}[{value}]")


def react_step(m: SimModel, task: str, meta: Mapping[str, Any], gold: list[str], skills: list[str],
               rng: random.Random, native: bool) -> Step:
    """One ReAct step of a simulated model (see the module docstring)."""
    pol = m.profile.tool_policy
    tools = set(meta.get("tools") or [])
    seen = {str(d) for d in meta.get("seen") or []}
    hops = _hops(meta)
    step = int(meta.get("step") or 0)
    max_steps = int(meta.get("max_steps") or 1)
    missing = [h for h in hops if str(h["doc"]) not in seen]
    found = [h for h in hops if str(h["doc"]) in seen]
    u = rng.random()
    if not missing:
        ok = u < m.p_correct(task, skills)
        return _final(gold if ok else _wrong(m, task, gold, meta, rng), "I have found what I need.", found,
                      done=bool(hops))
    if step >= max_steps - 1 or meta.get("final") or not ({"search", "read_document"} & tools):
        ok = u < pol.guess
        return _final(gold if ok else _wrong(m, task, gold, meta, rng), "I must answer with what I have.", found)
    hop = missing[0]
    if "search" in tools and u < retrieval_competence(m):
        return _act("search", "query", str(hop.get("query") or ""), "I need the next fact; let me search for it.",
                    step, native)
    if "read_document" in tools and seen and (rng.random() < pol.read or "search" not in tools):
        doc = rng.choice(sorted(seen))
        return _act("read_document", "doc_id", doc, "Let me read one of the documents I found.", step, native)
    if "search" not in tools:
        ok = u < pol.guess
        return _final(gold if ok else _wrong(m, task, gold, meta, rng), "I cannot search; I must answer.")
    question = str(meta.get("question") or "")
    return _act("search", "query", _vague(question, rng), "Let me search for the question.", step, native)


def summary_text(m: SimModel, meta: Mapping[str, Any], rng: random.Random) -> str:
    """A simulated summary of dropped steps: names each dropped evidence document, in brackets,
    with probability ``tools.summary_recall``."""
    facts = {str(h["doc"]): str(h.get("fact") or "") for h in _hops(meta)}
    evidence = set(facts) | {str(d) for d in meta.get("evidence") or []}
    dropped = [str(d) for d in meta.get("dropped") or []]
    kept = [d for d in dropped if d in evidence and rng.random() < m.profile.tool_policy.summary_recall]
    if not kept:
        return "Summary: the earlier steps found nothing that answers the question."
    return "Summary of the earlier steps:\n" + "\n".join(f"[{d}] {facts.get(d, '')}".rstrip() for d in kept)


__all__ = ["Step", "react_step", "retrieval_competence", "summary_text"]
