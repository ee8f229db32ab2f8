"""The meta-designer's decomposition step: its settings, the meta-agent's reply parsed into
sub-tasks (the same safe parsing as every generated design), the sub-tasks turned into a design
(data: one ``design:`` node per sub-task, an aggregator when there are several), and the
completeness feedback (information dropped between sub-tasks; no gold needed)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ..spec import DesignRef
from ..spec.budget import Budget
from .check import RESERVED, DesignLimits, Rejected, load_data
from .common import config_from_params, short

TOO_HARD_NOTE = ('If this sub-task cannot be solved as stated (information is missing or it is too hard to do '
                 'in one go), reply with exactly "Answer: TOO_HARD".')
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,31}$")
_RESERVED_IDS = RESERVED | {"final"}
"""Sub-task ids that would clash with the runtime's reserved names or the aggregator node."""
_NUM = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?!\w|\.\d)")


@dataclass
class MetaDesignerConfig:
    """Settings of the meta-designer. ``from_params`` reads them from a suite's design params."""

    max_rounds: int = 3
    """Most decompose → run → feedback rounds."""
    max_subtasks: int = 4
    """Most sub-tasks per decomposition (more is a rejection, not a truncation)."""
    budget: Budget | None = None
    """Cap on the task's total spend: designer + verifier calls + every sub-run."""
    seed_blocks: list[str | DesignRef] = field(default_factory=lambda: [
        "cot", DesignRef(design="cot-sc", params={"k": 5}), "reflexion", "debate"])
    """Library designs run first on the whole task."""
    blocks: list[str] = field(default_factory=lambda: ["cot", "cot-sc", "reflexion", "debate"])
    """Blocks the meta-agent may assign to a sub-task."""
    block_params: dict[str, dict[str, Any]] = field(default_factory=lambda: {"cot-sc": {"k": 3},
                                                                            "reflexion": {"max_rounds": 2},
                                                                            "debate": {"rounds": 1}})
    """Params of a block when it solves a sub-task (sub-tasks are smaller: cheaper settings)."""
    default_block: str = "cot"
    """Block used when the meta-agent names one that is not offered (recorded as a repair)."""
    aggregator: str = "synthesizer"
    """Agent that combines several sub-task results into the answer."""
    model: str = "default"
    """Model alias of the meta-agent and the verifier."""
    max_tokens: int = 512
    """Meta-agent reply cap."""
    verify_max_tokens: int = 256
    """Verifier reply cap."""
    temperature: float = 0.7
    """Meta-agent temperature."""
    verify: bool = True
    """Pick the final answer with a self-verifier call (else: majority over the candidates)."""
    stop_when_solved: bool = True
    """End the rounds once a round gets no negative feedback."""
    context: bool | str = "auto"
    """Give each sub-task the original problem too: True, False, or ``auto`` (long problems only)."""
    context_chars: int = 1200
    """``auto`` context: problems longer than this are given to every sub-task."""
    limits: DesignLimits = field(default_factory=lambda: DesignLimits(max_nodes=16))
    """Limits on the per-round designs (and on the meta-agent's reply size)."""
    name: str = "meta-designer"
    """Label of the designer's calls and results."""

    @classmethod
    def from_params(cls, params: dict[str, Any] | None) -> "MetaDesignerConfig":
        p = dict(params or {})
        if "seed_blocks" in p:
            p["seed_blocks"] = [s if isinstance(s, str) else DesignRef.model_validate(s) for s in p["seed_blocks"]]
        return config_from_params(cls, p)


# --------------------------------------------------------------------------- decompositions


def parse_decomposition(text: str, cfg: MetaDesignerConfig) -> tuple[list[dict[str, Any]], list[str]]:
    """Meta-agent reply → ``[{id, task, block, uses}]`` plus the repairs made. Same safe parsing
    as designs (size limit, no code blocks, no YAML tags/aliases). Raises :class:`Rejected`."""
    keys = ("subtasks", "sub_tasks", "sub-tasks", "steps", "tasks")
    data, _loc = load_data(text, cfg.limits, file="<meta-designer output>", expect=keys,
                           allow_list=True, what="decomposition")
    repairs: list[str] = []
    items: Any = None
    if isinstance(data, list):
        data = {"subtasks": data}
    if isinstance(data, dict) and len(data) == 1 and isinstance(next(iter(data.values())), dict) and not any(
            k in data for k in keys):
        data = next(iter(data.values()))
    if isinstance(data, dict):
        for k in keys:
            if k in data:
                items = data[k]
                break
    if items is None:
        raise Rejected("not a decomposition: expected {\"subtasks\": [...]}")
    if not isinstance(items, list) or not items:
        raise Rejected("subtasks must be a non-empty list")
    if len(items) > cfg.max_subtasks:
        raise Rejected(f"too many sub-tasks: {len(items)} > {cfg.max_subtasks}")
    out: list[dict[str, Any]] = []
    rename: dict[str, str] = {}
    for i, it in enumerate(items, 1):
        if isinstance(it, str):
            it = {"task": it}
        if not isinstance(it, dict):
            raise Rejected(f"sub-task {i} is not an object")
        task = next((it[k] for k in ("task", "question", "description", "text", "subtask") if
                     isinstance(it.get(k), str) and it[k].strip()), None)
        if task is None:
            raise Rejected(f"sub-task {i} has no task text")
        if len(task) > 2000:
            task = task[:2000]
            repairs.append(f"cut sub-task {i}'s text to 2000 characters")
        sid = it.get("id")
        sid = str(sid).strip() if isinstance(sid, (str, int)) else ""
        if not _ID.match(sid) or sid.lower() in _RESERVED_IDS or sid in [o["id"] for o in out]:
            new = f"s{i}"
            while new in [o["id"] for o in out]:
                new += "_"
            if sid:
                repairs.append(f"renamed sub-task id {sid!r} to {new!r}")
                rename[sid] = new
            sid = new
        block = it.get("block", it.get("method", it.get("agent")))
        if block is None:
            repairs.append(f"sub-task {sid}: no block given; used {cfg.default_block!r}")
            block = cfg.default_block
        elif not isinstance(block, str) or block not in cfg.blocks:
            repairs.append(f"sub-task {sid}: block {json.dumps(block, default=str)[:40]} is not offered; "
                           f"used {cfg.default_block!r}")
            block = cfg.default_block
        uses = it.get("uses", it.get("depends_on", it.get("deps", [])))
        if isinstance(uses, str):
            uses = [uses]
        if not isinstance(uses, list):
            uses = []
        out.append({"id": sid, "task": task.strip(), "block": block, "uses": [str(u) for u in uses]})
    ids = {o["id"] for o in out}
    g = nx.DiGraph()
    for o in out:
        g.add_node(o["id"])
        keep = []
        for u in o["uses"]:
            u = rename.get(u, u)
            if u not in ids or u == o["id"]:
                repairs.append(f"sub-task {o['id']}: dropped dangling dependency {u!r}")
                continue
            if u not in keep:
                keep.append(u)
                g.add_edge(u, o["id"])
        o["uses"] = keep
    if not nx.is_directed_acyclic_graph(g):
        cyc = nx.find_cycle(g)
        raise Rejected("cycle in sub-task dependencies: " + " → ".join(a for a, _ in cyc) + f" → {cyc[0][0]}")
    return out, repairs


def _esc(s: str) -> str:
    """Model text as a literal template (braces escaped: it can reference nothing)."""
    return s.replace("{", "{{").replace("}", "}}")


def decomposition_design(subtasks: list[dict[str, Any]], cfg: MetaDesignerConfig, *, title: str,
                         with_context: bool) -> dict[str, Any]:
    """A decomposition as design data: one ``design:`` node per sub-task (its block), reading the
    answers of the sub-tasks it uses; an aggregator over all of them when there are several."""
    nodes: dict[str, Any] = {}
    for st in subtasks:
        prompt = ""
        if with_context:
            prompt += "Original problem (for reference):\n{question}\n\nYour sub-task:\n"
        prompt += _esc(st["task"])
        if st["uses"]:
            prompt += "\n\nResults of earlier sub-tasks:\n" + "\n".join(f"- {u}: {{{u}.answer}}" for u in st["uses"])
        prompt += "\n\n" + TOO_HARD_NOTE
        node: dict[str, Any] = {"design": st["block"], "prompt": prompt}
        params = cfg.block_params.get(st["block"])
        if params:
            node["params"] = dict(params)
        nodes[st["id"]] = node
    if len(subtasks) > 1:
        lines = "\n".join(f"- {st['id']} ({_esc(short(st['task']))}): {{{st['id']}.answer}}" for st in subtasks)
        nodes["final"] = {"agent": cfg.aggregator, "from": [st["id"] for st in subtasks],
                          "prompt": "{question}\n\nResults of the sub-tasks:\n" + lines +
                                    "\n\nUse these results to answer the original problem. Think step by step. "
                                    "End with \"Answer: <final answer>\"."}
        output = "final"
    else:
        output = subtasks[0]["id"]
    return {"name": title, "description": "meta-designer decomposition", "nodes": nodes, "output": output}


def completeness(question: str, subtasks: list[dict[str, Any]], with_context: bool) -> list[str]:
    """Information dropped between sub-tasks (no gold needed)."""
    out: list[str] = []
    if not with_context:
        qn = list(dict.fromkeys(_NUM.findall(question)))
        if len(qn) <= 24:
            carried = set()
            for st in subtasks:
                carried |= set(_NUM.findall(st["task"]))
            missing = [x for x in qn if x not in carried]
            if missing:
                out.append("numbers of the problem that no sub-task carries (information dropped): " +
                           ", ".join(missing[:10]))
    return out


__all__ = ["MetaDesignerConfig", "TOO_HARD_NOTE", "completeness", "decomposition_design", "parse_decomposition"]
