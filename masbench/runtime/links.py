"""Names a design refers to in the library: agents (of agent and select nodes) and sub-designs
(unknown, invalid, calling themselves, cycles through other designs, unknown sub-design params).

The only place these are checked — the library's load-time check for designs is
:func:`masbench.runtime.design_analysis.check_design`, which runs this — so each problem is reported once.
"""

from __future__ import annotations

from typing import Any

from ..library import Library
from ..spec.agent import AgentSpec
from ..spec.design import DesignSpec
from ..spec.problems import SpecError
from .info import Checking, NodeInfo


def resolve_agent(an: Checking, info: NodeInfo, ref: str | AgentSpec | None, sub: tuple) -> AgentSpec | None:
    """The agent a node names (inline, this design's ``agents``, or the library), else None and a problem."""
    if ref is None or isinstance(ref, AgentSpec):
        return ref
    if ref in an.design.agents:
        return an.design.agents[ref]
    lib = an.library
    if lib is None or not lib.has("agent", ref):
        an.ref_at(info, sub, f"unknown agent {ref!r} (not in this design's agents nor in any agents/ folder)")
        return None
    try:
        return lib.agent(ref)
    except SpecError as exc:
        an.ref_at(info, sub, f"agent {ref!r} is invalid: {exc.problems[0]}")
        return None


def unchecked_design(library: Library, name: str) -> DesignSpec:
    """A design's spec, schema-validated but *not* checked: checking it from inside another
    design's check would re-enter that check on a cycle of sub-designs (A → B → A)."""
    return library.typed("design", name, DesignSpec, check=False)


def check_subdesign(an: Checking, info: NodeInfo, name: str, params: dict | None = None) -> None:
    """A ``design:`` node's sub-design ``name`` exists, is valid, does not (eventually) call this
    design, and has the params the node passes (``params``, default the node's)."""
    me = an.design.name
    if name == me:
        an.ref_at(info, ("design",), "a design cannot call itself")
        return
    lib = an.library
    if lib is None or not lib.has("design", name):
        an.ref_at(info, ("design",), f"unknown design {name!r}")
        return
    seen: set[str] = set()
    stack: list[tuple[str, list[str]]] = [(name, [name])]
    while stack:  # does `name` (eventually) call this design? (unchecked specs: see unchecked_design)
        cur, chain = stack.pop()
        if cur in seen:
            continue
        seen.add(cur)
        try:
            spec = unchecked_design(lib, cur)
        except SpecError:
            an.ref_at(info, ("design",), f"design {cur!r} is invalid")
            return
        for v in spec.walk():
            sub = v.node.design
            if sub is None:
                continue
            if sub == me:
                an.at(info, ("design",), "cycle of sub-designs: " + " → ".join([me] + chain + [sub]))
                return
            stack.append((sub, chain + [sub]))
    # No cycle leads back here, so checking the sub-design cannot re-enter this check.
    try:
        sub_spec = lib.design(name)
    except SpecError as exc:
        an.ref_at(info, ("design",), f"design {name!r} is invalid: {exc.problems[0]}")
        return
    for p in info.spec.params if params is None else params:
        if p not in sub_spec.params:
            an.at(info, ("params", p), f"design {name!r} has no param {p!r} (has: "
                                       f"{', '.join(sub_spec.params) or 'none'})")


__all__ = ["check_subdesign", "resolve_agent", "unchecked_design"]
