"""What a node reads, by name: the one reader of a design's references, shared by the runtime's
checker and the design package (repairs, diagnostics) so both agree on which names a node uses.

Works on raw YAML data (a generated design before it validates) and on specs alike.
"""

from __future__ import annotations

import re
from typing import Any

from ..spec.agent import AgentSpec
from ..spec.design import NodeSpec
from .template import refs

RESERVED = frozenset({"question", "inputs", "item", "index", "candidates", "round", "history"})
"""Names with a built-in meaning in templates; nodes, params and channels may not use them."""

_ENTRY = re.compile(r"^\s*([A-Za-z_][\w\-]*)(?:\.([A-Za-z_][\w\-]*))?\s*$")


def template_refs(text: Any) -> set[str]:
    """Names a template references (``{name}`` / ``{name.field}``; ``{{``/``}}`` are literal)."""
    if not isinstance(text, str):
        return set()
    return {name for name, _ in refs(text)}


def _data(node: NodeSpec | dict) -> dict:
    return node.model_dump(by_alias=True, exclude_none=True) if isinstance(node, NodeSpec) else node


def _agent_texts(a: Any) -> set[str]:
    if isinstance(a, AgentSpec):
        return template_refs(a.prompt) | template_refs(a.system)
    if isinstance(a, dict):
        return template_refs(a.get("prompt")) | template_refs(a.get("system"))
    return set()


def node_reads(node: NodeSpec | dict, agents: dict | None = None) -> set[str]:
    """Every name a node reads: ``from`` heads, ``map`` source, template references (its own and
    its agent's, when the agent is inline or in ``agents``), a loop's ``init`` and whatever its
    body reads from outside the body."""
    n = _data(node)
    out: set[str] = set()
    f = n.get("from")
    for e in [f] if isinstance(f, str) else f if isinstance(f, list) else []:
        m = _ENTRY.match(e) if isinstance(e, str) else None
        if m:
            out.add(m.group(1))
    mp = n.get("map")
    if isinstance(mp, str):
        m = _ENTRY.match(mp)
        if m:
            out.add(m.group(1))
        out |= template_refs(mp)
    for k in ("prompt", "system"):
        out |= template_refs(n.get(k))
    for k in ("agent", "select"):
        a = n.get(k)
        out |= _agent_texts(agents.get(a) if isinstance(a, str) and agents else a)
    lp = n.get("loop")
    if isinstance(lp, dict):
        if isinstance(lp.get("init"), str):
            out.add(lp["init"])
        nodes = lp.get("nodes")
        body: dict = nodes if isinstance(nodes, dict) else {}
        for b in body.values():
            if isinstance(b, (dict, NodeSpec)):
                out |= node_reads(b, agents) - set(body)
    return out


def sinks(nodes: dict, agents: dict | None = None) -> list[str]:
    """Top-level nodes nothing else reads (in YAML order)."""
    read: set[str] = set()
    for name, n in nodes.items():
        if isinstance(n, (dict, NodeSpec)):
            read |= node_reads(n, agents) - {name}
    return [n for n in nodes if n not in read]


__all__ = ["RESERVED", "node_reads", "sinks", "template_refs"]
