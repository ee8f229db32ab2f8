"""What designers are told: the block library (agents and designs by name, with a line each),
the schema in a few lines, and the rules. Everything here is text; nothing is executed."""

from __future__ import annotations

import json
from typing import Any

import yaml

from ..library import Library
from ..spec.problems import SpecError
from .check import DesignLimits


def _first_line(s: str | None, n: int = 90) -> str:
    if not s:
        return ""
    s = " ".join(s.split())
    for stop in (". ", " - ", "; "):
        i = s.find(stop)
        if 0 < i < n:
            return s[:i]
    return s[:n].rstrip() + ("…" if len(s) > n else "")


def catalog(library: Library, agents: list[str] | None = None, designs: list[str] | None = None
            ) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(agents, designs): ``(name, one line, extra)`` each. ``extra`` is an agent's structured
    output fields or a design's params. Generated designs are left out (blocks come from the
    library), as are specs that do not load."""
    out_a: list[tuple[str, str, str]] = []
    for name in agents if agents is not None else library.names("agent"):
        try:
            a = library.agent(name)
        except SpecError:
            continue
        extra = ""
        if a.output is not None:
            extra = "returns JSON {" + ", ".join(f"{k}: {t}" for k, t in a.output.json_.items()) + "}"
        out_a.append((name, _first_line(a.description), extra))
    out_d: list[tuple[str, str, str]] = []
    for name in designs if designs is not None else library.names("design"):
        if name.startswith("__"):
            continue
        try:
            d = library.design(name)
        except SpecError:
            continue
        if d.kind == "generated":
            continue
        extra = ", ".join(f"{k}={json.dumps(v)}" for k, v in d.params.items())
        out_d.append((name, _first_line(d.description), extra))
    return out_a, out_d


def catalog_text(library: Library, agents: list[str] | None = None, designs: list[str] | None = None) -> str:
    a, d = catalog(library, agents, designs)
    lines = ["Agents (use with `agent:`, `select:` or `repeat`/`map`):"]
    lines += [f"- {n}: {desc}" + (f" [{x}]" if x else "") for n, desc, x in a]
    lines.append("Blocks (library designs; call one as a sub-agent with `design:`, params in `params:`):")
    lines += [f"- {n}: {desc}" + (f" [params {x}]" if x else "") for n, desc, x in d]
    return "\n".join(lines)


SCHEMA = """Write the design as YAML in this schema (data only: no code, no shell commands):
name: short-name
description: one sentence
nodes:
  NODE_NAME: one of
    {{agent: AGENT}}                           one model call
    {{agent: AGENT, repeat: K}}                K independent calls in parallel (K <= {max_repeat})
    {{agent: AGENT, map: NODE.FIELD}}          one call per item of a list field of another node
    {{op: majority, from: [NODE, ...]}}        majority vote over their answers (no model call)
    {{select: selector, from: [NODE, ...]}}    an agent picks the best candidate
    {{design: BLOCK}}                          a library block as a sub-agent
    {{python: FUNC, from: NODE}}               FUNC is one of: {python}
  `from: [NODE, ...]` makes a node read other nodes' outputs (every node sees the task).
output: NODE_NAME                            the node whose answer is the final answer
Rules: at most {max_nodes} nodes; no cycles; every node must lead to the output."""

EXAMPLE = """Example (one possible shape; design your own for these tasks):
```yaml
name: plan-solve-combine
description: plan sub-tasks, solve each in parallel, combine the results
nodes:
  plan: {agent: planner}
  work: {agent: worker, map: plan.subtasks}
  combine: {agent: synthesizer, from: [plan, work]}
output: combine
```"""


def holistic_messages(library: Library, examples: list[str], limits: DesignLimits, *, agents: list[str] | None = None,
                      designs: list[str] | None = None, description: str | None = None,
                      example_chars: int = 700) -> list[dict[str, str]]:
    """The one-shot designer's prompt: task examples (never their answers), the block library,
    the schema and the rules."""
    ex = []
    for i, q in enumerate(examples, 1):
        q = q.strip()
        if len(q) > example_chars:
            q = q[:example_chars] + " […]"
        ex.append(f"Example task {i}:\n{q}")
    parts = ["Design a multi-agent system (MAS) that solves tasks like these."]
    if description:
        parts.append(f"Task family: {description.strip()}")
    parts += ex
    parts.append(catalog_text(library, agents, designs))
    parts.append(SCHEMA.format(max_repeat=limits.max_repeat, max_nodes=min(limits.max_nodes, 12),
                               python=", ".join(sorted(limits.python_allow))))
    parts.append(EXAMPLE)
    parts.append("Reply with one ```yaml block and nothing else.")
    return [{"role": "system", "content": "You design multi-agent systems as YAML data. You never write code."},
            {"role": "user", "content": "\n\n".join(parts)}]


# --------------------------------------------------------------------------- meta-designer

BLOCK_HELP = {
    "cot": "one careful step-by-step solver (1 call)",
    "cot-sc": "several independent solvers and a majority vote",
    "reflexion": "solve, get critiqued, retry with the feedback",
    "debate": "several debaters argue over rounds, then a judge decides",
    "self-refine": "draft, critique, revise",
}


def decompose_messages(question: str, blocks: list[str], max_subtasks: int, *, seen: list[tuple[str, str]],
                       feedback: list[str], failed: list[str], previous: dict | None,
                       question_chars: int = 4000) -> list[dict[str, str]]:
    """The meta-designer's per-round prompt: the problem, the answers so far (no gold), the
    feedback on the last round, the memory of failed answers, and the output format."""
    q = question.strip()
    if len(q) > question_chars:
        q = q[:question_chars] + " […]"
    parts = [f"Problem:\n{q}"]
    if seen:
        parts.append("Answers so far (method → answer):\n" + "\n".join(f"- {s} → {a or '(none)'}" for s, a in seen))
    if previous:
        parts.append("Your previous decomposition:\n" + json.dumps(previous, ensure_ascii=False)[:1500])
    if feedback:
        parts.append("Feedback on it:\n" + "\n".join(f"- {f}" for f in feedback))
    if failed:
        parts.append("Answers judged unreliable so far (do not just repeat them):\n" +
                     "\n".join(f"- {a}" for a in failed))
    helps = "\n".join(f"- {b}: {BLOCK_HELP.get(b, 'a library design')}" for b in blocks)
    parts.append(
        f"Split the problem into at most {max_subtasks} sub-tasks and give each one a block:\n{helps}\n"
        "Each sub-task must be self-contained: copy into it every number and fact it needs from the problem. "
        "A sub-task may use the results of earlier ones: list their ids in \"uses\". "
        "If a sub-task was answered TOO_HARD, split it further.\n"
        "Reply with only a JSON object, for example:\n"
        '{"subtasks": [{"id": "s1", "task": "...", "block": "cot", "uses": []}, '
        '{"id": "s2", "task": "...", "block": "cot-sc", "uses": ["s1"]}]}')
    return [{"role": "system", "content": "You are a meta-designer: you split problems into sub-tasks and assign "
                                          "a solving method to each. You reply with JSON data only."},
            {"role": "user", "content": "\n\n".join(parts)}]


def verify_messages(question: str, candidates: list[tuple[str, str]], *, text_chars: int = 600,
                    question_chars: int = 4000) -> list[dict[str, str]]:
    """The self-verifier's prompt: the problem and numbered candidates (their sources are not
    shown, so a name like "cot" cannot sway the choice)."""
    q = question.strip()
    if len(q) > question_chars:
        q = q[:question_chars] + " […]"
    blocks = []
    for i, (answer, text) in enumerate(candidates, 1):
        t = " ".join((text or "").split())
        if len(t) > text_chars:
            t = "…" + t[-text_chars:]
        blocks.append(f"Candidate {i} (answer: {answer or 'none'}):\n{t}")
    user = (f"Problem:\n{q}\n\n" + "\n\n".join(blocks) +
            "\n\nCheck each candidate against the problem. Which one is most likely correct? "
            "End with \"Choice: <candidate number>\".")
    return [{"role": "system", "content": "You are a careful verifier who compares candidate solutions."},
            {"role": "user", "content": user}]


WRONG_DESIGNS = ["```python\ndef forward(self, task):\n    return self.cot(task)\n```",
                 "I would let three agents debate and then take a vote."]


def sim_design_hints(library: Library, role: str, *, designs: list[str] | None = None, question: str | None = None,
                     blocks: list[str] | None = None) -> dict[str, Any]:
    """Request metadata for *simulated* designer models (never shown to real ones): valid replies
    (``candidates``) and invalid ones (``wrong``), so a ``sim/…`` model answers a designer call
    with a valid design with its accuracy, else with an invalid one."""
    if role == "holistic":
        names = [n for n in (designs or ["cot-sc", "planner-workers", "decompose-calculator-aggregate"])
                 if library.has("design", n)][:3]
        cands = []
        for n in names:
            try:
                d = library.design(n)
            except SpecError:
                continue
            data = d.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)
            data.pop("source", None)
            data["name"] = f"like-{n}"
            cands.append("```yaml\n" + yaml.safe_dump(data, sort_keys=False) + "```")
        return {"candidates": cands, "wrong": WRONG_DESIGNS}
    q = (question or "Solve the problem.")[:2000]
    bl = [b for b in (blocks or ["cot-sc"]) if b != "cot"] or ["cot"]
    cands = [json.dumps({"subtasks": [{"id": "s1", "task": q, "block": b}]}) for b in bl[:2]]
    return {"candidates": cands, "wrong": ["Let me think about this problem step by step."]}


__all__ = ["BLOCK_HELP", "WRONG_DESIGNS", "sim_design_hints", "catalog", "catalog_text", "decompose_messages", "holistic_messages", "verify_messages"]
