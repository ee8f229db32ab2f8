"""Prompt text a node builds from: labelled input blocks, the answers extracted from a reply's
text, and the simulator's view of the task (what a prompted node's messages and hints are made of,
:class:`~masbench.runtime.ops.prompted.PromptedNode`)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..text import extract_answers
from .scope import Env, Scope


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


__all__ = ["cited_evidence", "extract_text", "render_inputs", "sim_task"]
