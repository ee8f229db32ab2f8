"""What a node sends to its model: the messages (rendered templates, appended inputs, a JSON
hint), the simulator's hints, and the answers extracted from the reply."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..text import extract_answers, normalize_answer
from .plan import Plan
from .scope import Env, Scope
from .values import Val

_BLANKS = re.compile(r"\n\s*\n(?:\s*\n)+")


def render_inputs(inputs: list, env: Env) -> str:
    """Labelled inputs that have a value, as one text block."""
    parts = []
    for label, getter in inputs:
        t = getter(env)
        if t:
            parts.append(f"{label}:\n{t}")
    return "\n\n".join(parts)


def build_messages(plan: Plan, env: Env) -> list[dict[str, Any]]:
    """The chat messages of one call."""
    user = plan.prompt.render(env) if plan.prompt is not None else ""
    if plan.extra_inputs:
        block = render_inputs(plan.extra_inputs, env)
        if block:
            user = f"{user}\n\n{block}" if user else block
    if "\n\n\n" in user:
        user = _BLANKS.sub("\n\n", user)
    if plan.json_hint:
        user += plan.json_hint
    if plan.system is not None:
        return [{"role": "system", "content": plan.system.render(env)}, {"role": "user", "content": user}]
    return [{"role": "user", "content": user}]


def sim_meta(plan: Plan, sc: Scope, env: Env) -> dict[str, Any]:
    """What the simulator needs to answer like a model would (never sent to a real provider): the
    gold answers and skills, the task id (its latent difficulty), the agent (its reaction), and the
    answers the call is shown."""
    skills = sc.skills + plan.skills if plan.skills else sc.skills
    m: dict[str, Any] = {"gold": sc.gold, "skills": skills, "task": sim_task(sc), "agent": plan.agent_name}
    shown = shown_answers(plan, env)
    if shown:
        m["shown"] = shown
    if plan.judge:
        m["mode"] = "judge"
        cand = judged(plan, env)
        m["candidate"] = ",".join(cand.answers) if cand is not None and cand.answers else ""
        if plan.schema is not None:
            m["json"] = True
    elif plan.schema is not None:
        m["mode"] = "json"
        m["schema"] = plan.schema
        m["n_items"] = max(2, sc.n)
    else:
        m["mode"] = "answer"
    return {"sim": m}


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


def shown_answers(plan: Plan, env: Env) -> list[str]:
    """The answers a call sees: every answer among its ``from`` inputs (question excluded)."""
    out = []
    for name, vg in plan.input_vals:
        if name == "question":
            continue
        v = vg(env)
        if v is not None:
            out.extend(",".join(m.answers) for m in v.members() if m.answers)
    return out


def judged(plan: Plan, env: Env) -> Val | None:
    """The candidate a judge looks at: the first ``from`` input that has an answer."""
    for name, vg in plan.input_vals:
        if name == "question":
            continue
        v = vg(env)
        if v is None:
            continue
        for m in reversed(v.members()):
            if m.answers:
                return m
    return None


def extract(plan: Plan, sc: Scope, text: str, data: Any) -> tuple[str, ...] | None:
    """The normalized answers of a reply (from its structured field, else from its text)."""
    how = plan.how
    if how is None:
        return None
    if how == "json" and isinstance(data, dict) and plan.field in data:
        v = data[plan.field]
        vals = v if isinstance(v, list) else [v]
        if sc.n == 1 and len(vals) > 1:  # one list-valued answer (a tie of names): keep it whole
            vals = [", ".join(str(x) for x in vals)]
        out = tuple(normalize_answer(str(x)) for x in vals[: sc.n])
        return out or None
    return _extract_cached(text, sc.n, how, plan.field)


@lru_cache(maxsize=8192)
def _extract_cached(text: str, n: int, how: str, field: str | None) -> tuple[str, ...] | None:
    found = extract_answers(text, n, how, field)
    return tuple(found) if found else None


__all__ = ["build_messages", "extract", "judged", "render_inputs", "sim_meta"]
