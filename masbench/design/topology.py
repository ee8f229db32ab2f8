"""What a design's graph is, from the spec alone (no store, no run): its structure (nodes, depth,
sequential depth, widest fan-out, ops, agents) and whether it *collapses* to something degenerate
— a single call (the MaAS failure mode), one library block, or "the same agent k times, then a
vote" (CoT-SC, the AFlow failure mode), also when wrapped in a sub-design, behind pass-through
nodes, or followed by a single restating call. Read-only diagnostics over a run's store build on
these (:mod:`masbench.analysis`).

What a node contributes is its op's (:class:`masbench.runtime.Op`): how many sequential calls it
makes (``weight``), whether it is one model call (``signature``), a sub-design (``sub_design``), a
vote or selector (``aggregates``) or a pass-through (``passthrough``)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import networkx as nx

from ..library import Library
from ..runtime.ops import op_of
from ..spec.design import DesignSpec, NodeSpec
from ..spec.problems import SpecError
from .check import node_reads, spec_data

SINGLE_CALL = "single call"


def resolve_param(v: Any, params: dict) -> Any:
    """A ``repeat``/``map``/``max_rounds`` value with a ``{param}`` filled in (ints parsed)."""
    if isinstance(v, str):
        t = v.strip()
        if t.startswith("{") and t.endswith("}") and t[1:-1] in params:
            return params[t[1:-1]]
        try:
            return int(t)
        except ValueError:
            return v
    return v


def top_graph(spec: DesignSpec) -> nx.DiGraph:
    """Top-level dependency graph (edges: what a node reads → the node)."""
    data = spec_data(spec)
    nodes = data["nodes"]
    agents = data.get("agents") or {}
    channels: dict[str, list[str]] = {}
    for n, d in nodes.items():
        if isinstance(d.get("into"), str):
            channels.setdefault(d["into"], []).append(n)
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for n, d in nodes.items():
        for r in node_reads(d, agents):
            for src in channels.get(r, [r]):
                if src in nodes and src != n:
                    g.add_edge(src, n)
    return g


class _Weigh:
    """What an op's ``weight`` may ask (:class:`masbench.runtime.ops.Weigher`): params, sub-designs
    (through the library) and sub-graphs."""

    def __init__(self, library: Library, params: dict, seen: tuple[str, ...]):
        self.library = library
        self.params = params
        self.seen = seen

    def param(self, value: Any) -> Any:
        return resolve_param(value, self.params)

    def design(self, name: str, params: dict[str, Any]) -> int:
        if name in self.seen:
            return 1
        try:
            sub = self.library.design(name)
        except SpecError:
            return 1
        return structure(sub, self.library, {**sub.params, **params}, self.seen + (name,))["sequential_depth"]

    def body(self, nodes: dict[str, NodeSpec], output: str) -> int:
        g = top_graph(DesignSpec(name="body", nodes=nodes, output=output))
        w = {n: _stage_weight(b, self.library, self.params, self.seen) for n, b in nodes.items()}
        return _heaviest(g, w) if nx.is_directed_acyclic_graph(g) else sum(w.values())


def _stage_weight(node: NodeSpec, library: Library, params: dict, seen: tuple[str, ...]) -> int:
    """Sequential model calls of one node (its op's ``weight``)."""
    return op_of(node.kind).weight(node, _Weigh(library, params, seen))


def _heaviest(g: nx.DiGraph, w: dict[str, int]) -> int:
    """Largest total node weight along a path of a DAG (dynamic programming, linear time)."""
    best: dict[str, int] = {}
    for n in nx.topological_sort(g):
        best[n] = w.get(n, 0) + max((best[p] for p in g.predecessors(n)), default=0)
    return max(best.values(), default=0)


def structure(spec: DesignSpec, library: Library, params: dict | None = None, _seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """Node count, depth, sequential depth, widest fan-out, ops and agents of a design."""
    params = {**spec.params, **(params or {})}
    g = top_graph(spec)
    n_nodes = sum(1 for _ in spec.walk())
    depth = (nx.dag_longest_path_length(g) + 1) if nx.is_directed_acyclic_graph(g) and len(g) else len(g)
    weights = {n: _stage_weight(d, library, params, _seen + (spec.name,)) for n, d in spec.nodes.items()}
    seq = 0
    if nx.is_directed_acyclic_graph(g):
        seq = _heaviest(g, weights)
    ops: Counter = Counter()
    agents: set[str] = set()
    fan = 1
    for visit in spec.walk():
        n = visit.node
        ops[n.kind] += 1
        if isinstance(n.agent, str):
            agents.add(n.agent)
        if n.select:
            agents.add(n.select)
        if n.repeat is not None:
            k = resolve_param(n.repeat, params)
            fan = max(fan, k if isinstance(k, int) else 1)
        if n.map is not None:
            v = resolve_param(n.map, params)
            fan = max(fan, len(v) if isinstance(v, list) else 2)
    return {"nodes": n_nodes, "depth": depth, "sequential_depth": seq, "max_fanout": fan, "ops": dict(ops),
            "agents": sorted(agents)}


def _passthrough(n: NodeSpec) -> bool:
    return op_of(n.kind).passthrough(n)


def _sampler(name: str, n: NodeSpec, spec: DesignSpec, library: Library) -> tuple[Any, int] | None:
    """(signature, samples) if the node is "the same call from the question" k times."""
    if n.map is not None:
        return None
    reads = node_reads(spec_data(spec)["nodes"][name], spec_data(spec).get("agents") or {})
    if reads - {"question"} - set(spec.params):
        return None
    k = resolve_param(n.repeat, {**spec.params}) if n.repeat is not None else 1
    k = k if isinstance(k, int) else 1
    op = op_of(n.kind)
    sig = op.signature(n)
    if sig is not None:
        return (sig, k)
    sub_name = op.sub_design(n)
    if sub_name is not None:
        try:
            sub = library.design(sub_name)
        except SpecError:
            return None
        c = collapse(sub, library, {**sub.params, **n.params})
        if c == SINGLE_CALL:
            return (("design", sub_name, json.dumps(n.params, sort_keys=True, default=str)), k)
        if c and c.startswith("cot-sc(k=") and k == 1:
            return (("design", sub_name, json.dumps(n.params, sort_keys=True, default=str)), int(c[9:-1]))
    return None


def collapse(spec: DesignSpec, library: Library, params: dict | None = None) -> str | None:
    """What the design effectively is, if it is a degenerate MAS: ``single call``,
    ``cot-sc(k=K)`` (the same call K times from the question, then a vote or a selector; ``+wrapper``
    if one more call merely restates it), or ``block:<name>`` (it only calls one library block).
    None: a real multi-agent structure."""
    spec = spec if not params else spec.model_copy(update={"params": {**spec.params, **params}})
    nodes = dict(spec.nodes)
    # drop pass-through nodes (identity python with one input)
    out = spec.output
    while out in nodes and _passthrough(nodes[out]):
        out = [x for x in nodes[out].inputs if x != "question"][0]
    nodes = {k: v for k, v in nodes.items() if not _passthrough(v)}
    if out not in nodes:
        return None
    sub = spec.model_copy(update={"nodes": nodes, "output": out})
    live = nx.ancestors(top_graph(sub), out) | {out}
    nodes = {k: v for k, v in nodes.items() if k in live}
    sub = sub.model_copy(update={"nodes": nodes})
    if len(nodes) == 1:
        n = nodes[out]
        op = op_of(n.kind)
        name = op.sub_design(n)
        if op.signature(n) is not None and n.map is None:
            k = resolve_param(n.repeat, spec.params) if n.repeat is not None else 1
            if not node_reads(spec_data(sub)["nodes"][out]) - {"question"} - set(spec.params):
                return SINGLE_CALL if k == 1 else f"cot-sc(k={k})"
            return None
        if name is not None:
            s = _sampler(out, n, sub, library)
            if s is not None:
                return SINGLE_CALL if s[1] == 1 else f"cot-sc(k={s[1]})"
            try:
                inner = collapse(library.design(name), library, n.params or None)
            except SpecError:
                inner = None
            return inner or f"block:{name}"
        return None
    o = nodes[out]
    oop = op_of(o.kind)
    if oop.aggregates(o):
        srcs = [x for x in o.inputs if x != "question"]
        if srcs and set(nodes) == set(srcs) | {out}:
            found = [_sampler(s, nodes[s], sub, library) for s in srcs]
            sigs = [s for s in found if s is not None]
            if len(sigs) == len(found) and len({s[0] for s in sigs}) == 1:
                k = sum(s[1] for s in sigs)
                if k >= 2:
                    return f"cot-sc(k={k})"
    # a single restating call after a collapsed core
    if oop.signature(o) is not None and o.map is None and o.repeat is None:
        ins = [x for x in (node_reads(spec_data(sub)["nodes"][out], spec_data(sub).get("agents") or {}))
               if x in nodes and x != out]
        if len(ins) == 1:
            core = sub.model_copy(update={"nodes": {k: v for k, v in nodes.items() if k != out}, "output": ins[0]})
            c = collapse(core, library)
            if c is not None and c != SINGLE_CALL and not c.endswith("+wrapper"):
                return c + "+wrapper"
    return None


__all__ = ["SINGLE_CALL", "collapse", "resolve_param", "structure", "top_graph"]
