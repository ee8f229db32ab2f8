"""Local copies of the runtime's graph-reading helpers (reserved names, template references,
what a node reads, sinks), over designs in plain-data (dict) form.

TEMPORARY: the runtime facade is getting exactly these names (issue 10, branch layerR); once that
lands, :mod:`masbench.design.check` imports them from ``masbench.runtime`` and this module goes.
Nothing but ``check.py`` imports it.
"""

from __future__ import annotations

import re
from typing import Any

RESERVED = frozenset({"question", "inputs", "item", "index", "candidates", "round", "history"})
"""Names a design may read without defining them (the runtime's reserved names)."""

_REF = re.compile(r"\{([A-Za-z_][A-Za-z0-9_\-]*)(?:\.([A-Za-z_][A-Za-z0-9_\-]*))?\}")
_ENTRY = re.compile(r"^\s*([A-Za-z_][\w\-]*)(?:\.([A-Za-z_][\w\-]*))?\s*$")


def template_refs(text: Any) -> set[str]:
    """Names a template references (``{name}`` / ``{name.field}``; ``{{``/``}}`` are literal)."""
    if not isinstance(text, str):
        return set()
    t = text.replace("{{", "").replace("}}", "")
    return {m.group(1) for m in _REF.finditer(t)}


def _from_list(node: dict) -> list:
    f = node.get("from")
    if f is None:
        return []
    return [f] if isinstance(f, str) else list(f) if isinstance(f, list) else []


def node_reads(node: dict, agents: dict | None = None) -> set[str]:
    """Every name a node (dict form) reads: ``from`` heads, ``map`` source, template references,
    a loop's ``init`` and whatever its body reads."""
    out: set[str] = set()
    for e in _from_list(node):
        m = _ENTRY.match(e) if isinstance(e, str) else None
        if m:
            out.add(m.group(1))
    mp = node.get("map")
    if isinstance(mp, str):
        m = _ENTRY.match(mp)
        if m:
            out.add(m.group(1))
        out |= template_refs(mp)
    for k in ("prompt", "system"):
        out |= template_refs(node.get(k))
    for k in ("agent", "select"):
        a = node.get(k)
        if isinstance(a, dict):
            out |= template_refs(a.get("prompt")) | template_refs(a.get("system"))
        elif isinstance(a, str) and agents and isinstance(agents.get(a), dict):
            out |= template_refs(agents[a].get("prompt")) | template_refs(agents[a].get("system"))
    lp = node.get("loop")
    if isinstance(lp, dict):
        if isinstance(lp.get("init"), str):
            out.add(lp["init"])
        body = lp.get("nodes") if isinstance(lp.get("nodes"), dict) else {}
        for b in body.values():
            if isinstance(b, dict):
                out |= node_reads(b, agents) - set(body)
    return out


def sinks(nodes: dict[str, Any], agents: dict | None = None) -> list[str]:
    """Top-level nodes nothing else reads (in YAML order)."""
    read: set[str] = set()
    for name, n in nodes.items():
        if isinstance(n, dict):
            read |= node_reads(n, agents) - {name}
    return [n for n in nodes if n not in read]


__all__ = ["RESERVED", "node_reads", "sinks", "template_refs"]
