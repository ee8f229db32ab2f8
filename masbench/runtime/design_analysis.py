"""Static analysis of a design, before anything runs: resolve agents and references, build the
dependency graph (:mod:`.depgraph`), and report every problem at its place in the YAML.

Caught: unknown agents, nodes, references, fields, params, python functions and sub-designs;
cycles other than declared loops; nodes whose value never reaches the output; a missing or
ambiguous output; parallel writes into a channel with no reducer; bad repeat / map / loop
settings. Each node is compiled from the same analysis, so what validates is what runs.

The pass is split by concern: per-node settings (:mod:`.node_check`, which runs each node's op
check, :mod:`.ops`), sub-graphs such as loop bodies (the op's ``body``), agents and sub-designs
(:mod:`.links`), references between nodes (:mod:`.refs`); this module holds the state, the graph
and the output checks.
"""

from __future__ import annotations

from typing import Any

from ..library import Library
from ..spec.design import DesignSpec, NodeSpec
from ..spec.problems import Problem, field_name
from ..spec.yamlpos import Located
from . import refs
from .depgraph import DepGraph
from .info import LoopInfo, NodeInfo
from .node_check import check_node
from .ops import op_of
from .reads import RESERVED


class Analysis:
    """The resolved design. ``problems`` is empty when the design is valid."""

    def __init__(self, design: DesignSpec, located: Located | None, library: Library,
                 params: dict[str, Any] | None = None):
        self.design = design
        self.located = located
        self.library = library
        self.params: dict[str, Any] = {**design.params, **(params or {})}
        self.problems: list[Problem] = []
        self.top: dict[str, NodeInfo] = {}
        self.loops: dict[str, LoopInfo] = {}
        self.channels: dict[str, list[str]] = {}
        self.graph: DepGraph[str] = DepGraph()
        self.order: list[str] = []
        if params:
            for p in params:
                if p not in design.params:
                    self.problem((), "params", f"unknown param {p!r} (design {design.name!r} has: "
                                               f"{', '.join(design.params) or 'none'})")
        self._run()

    # ----- problems ------------------------------------------------------------------------------
    def problem(self, path: tuple, field: str | tuple, msg: str) -> None:
        """Record a problem positioned at ``path``, named ``field`` (deduplicated)."""
        fname = field if isinstance(field, str) else field_name(field)
        if self.located is not None:
            line, col = self.located.locate(path)
            file = self.located.file
        else:
            line, col, file = 1, 1, f"<design {self.design.name}>"
        p = Problem(file, line, col, fname, msg)
        if p not in self.problems:
            self.problems.append(p)

    def at(self, info: NodeInfo, sub: tuple, msg: str) -> None:
        """A problem with a node, positioned at its key ``sub`` (named by the node)."""
        self.problem(info.base + sub, info.base, msg)

    def ref_at(self, info: NodeInfo, sub: tuple, msg: str) -> None:
        """A problem with a name a node refers to in the library (agent, sub-design): in a file it
        names the exact key (``nodes.s.agent``); in memory, the node."""
        self.problem(info.base + sub, info.base + sub if self.located is not None else info.base, msg)

    def node(self, name: str, spec: NodeSpec, path: tuple, loop: str | None, order: int) -> NodeInfo:
        """Check one node (a top-level node, or a body node for its op's sub-graph)."""
        return check_node(self, name, spec, path, loop, order)

    # ----- the pass ------------------------------------------------------------------------------
    def _run(self) -> None:
        d = self.design
        for p in self.params:
            if p in RESERVED:
                self.problem(("params", p), ("params", p), f"param name {p!r} is reserved in templates")
            elif p in d.nodes:
                self.problem(("params", p), ("params", p), f"ambiguous reference: {p!r} is both a param and a node")
        for i, (name, spec) in enumerate(d.nodes.items()):
            self.top[name] = self.node(name, spec, ("nodes", name), None, i)
        for info in self.top.values():
            body = op_of(info.kind).body(self, info)
            if body is not None:
                self.loops[info.name] = body
        self._channels()
        for info in self.top.values():
            refs.resolve(self, info)
        for lp in self.loops.values():
            for b in lp.body.values():
                refs.resolve(self, b)
            refs.check_body(self, lp)
        self._graph()
        self._output()

    def _channels(self) -> None:
        d = self.design
        for name, info in self.top.items():
            if info.spec.into is not None:
                self.channels.setdefault(info.spec.into, []).append(name)
        for ch, writers in self.channels.items():
            info = self.top[writers[0]]
            if ch in d.nodes or ch in self.params or ch in RESERVED:
                self.at(info, ("into",), f"channel name {ch!r} clashes with a node, param or reserved name")
                continue
            if len(writers) > 1 and ch not in d.reducers:
                for w in writers:
                    self.at(self.top[w], ("into",), f"parallel writes: channel {ch!r} is written by "
                            f"{', '.join(writers)} with no reducer (declare `reducers: {{{ch}: append}}`)")
        for ch in d.reducers:
            if ch not in self.channels:
                self.problem(("reducers", ch), ("reducers", ch), f"reducer for {ch!r}, which no node writes "
                                                                f"(`into: {ch}`)")

    # ----- graph ---------------------------------------------------------------------------------
    def _graph(self) -> None:
        g = self.graph
        for name, info in self.top.items():
            g.add_node(name)
            deps = set(info.deps)
            if name in self.loops:
                lp = self.loops[name]
                for b in lp.body.values():
                    deps |= b.ext
                if lp.init:
                    deps.add(lp.init)
                deps.discard(name)
                info.deps = deps
            for dep in deps:
                if dep in self.top:
                    g.add_edge(dep, name)
        order = g.topological_order(key=lambda n: self.top[n].order)
        cycles = g.cycles(limit=5) if order is None else []
        for c in cycles:
            i = c.index(min(c))
            c = c[i:] + c[:i]
            self.at(self.top[c[0]], (), "cycle: " + " → ".join(c + [c[0]]) + " (only declared `loop:` nodes may repeat)")
        self.order = list(self.top) if order is None else order

    def _output(self) -> None:
        out = self.design.output
        if out not in self.top:
            if out in self.channels:
                if len(self.channels[out]) > 1:
                    self.problem(("output",), "output", f"ambiguous output: channel {out!r} has several writers "
                                 f"({', '.join(self.channels[out])}); add a vote or select node and name it")
                    return
                out = self.channels[out][0]
            else:
                where = next((L for L, lp in self.loops.items() if out in lp.body), None)
                msg = (f"output {out!r} is inside loop {where!r}; name the loop ({where!r}) instead" if where else
                       f"missing output: no node named {out!r} (nodes: {', '.join(self.top)})")
                self.problem(("output",), "output", msg)
                return
        live = self.graph.ancestors(out) | {out}
        for name, info in self.top.items():
            if name not in live:
                self.at(info, (), f"unreachable: {name!r} never reaches the output {out!r} (nothing downstream "
                                  "reads it; an extra final node makes the output ambiguous)")


def check_design(design: DesignSpec, located: Located | None, library: Library) -> list[Problem]:
    """Every problem with a design's graph and references — unknown agents and sub-designs
    included — each at its place in the YAML (``FILE:LINE:COL: nodes.<node>: message``). Empty
    when the design can run. The one check of a design: the library's load-time check for kind
    ``design`` (:data:`masbench.registry.CHECKS`), run by the designers on generated designs; a
    design compiles only if it passes."""
    return Analysis(design, located, library).problems


__all__ = ["Analysis", "check_design"]
