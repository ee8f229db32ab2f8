"""Build the langgraph ``StateGraph`` of a design from its compiled nodes.

Graph shape (one langgraph node per design node, plus):
- a fan-out node (``repeat``/``map``) is fanned out with ``Send`` — one branch per sample / item —
  from its single upstream node, or from a ``<node>#send`` dispatcher when it waits on several;
  branches append ``(round, index, value)`` to a list-reducer key, so parallel writes are safe;
- a loop ``L`` becomes ``L#round`` (the round controller: start a round or exit), its body nodes
  ``L.<name>`` (inlined; the body's sinks lead back to ``L#round``), and ``L`` (the exit node,
  which writes the loop's value). That back edge is the only cycle, and it is bounded;
- several upstream nodes join with a waiting edge (``add_edge([a, b], c)``).

Each langgraph node calls the same step the other schedulers run (:mod:`.steps`, the loop node's
round and exit) with the run's scope, which langgraph passes as its runtime context.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Callable, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from .design_analysis import Analysis
from .info import LoopInfo
from .ops.base import Node
from .ops.loop import LoopNode
from .scope import Br, Scope
from .steps import branch, branches, single


def recursion_bound(an: Analysis) -> int:
    """A langgraph recursion limit no valid run of the design can reach."""
    n = 2 * len(an.top) + 4
    for lp in an.loops.values():
        n += (lp.max_rounds + 1) * (2 * len(lp.body) + 2)
    return 2 * n + 10


def sends(node: Node, state: dict, sc: Scope) -> list[Send]:
    """The branches of a fan-out this round, as ``Send`` s (see :func:`~masbench.runtime.steps.branches`)."""
    key = node.key
    return [Send(key, br) for br in branches(node, state, sc)]


def _named(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    fn.__name__ = name
    return fn


def _single(node: Node) -> Callable[..., Any]:
    async def step(state: dict, runtime: Runtime[Any]) -> dict:
        return await single(node, state, runtime.context)
    return _named(step, node.key)


def _branch(node: Node) -> Callable[..., Any]:
    async def step(br: Br, runtime: Runtime[Any]) -> dict:
        return await branch(node, br, runtime.context)
    return _named(step, node.key)


def _round(loop: LoopNode) -> Callable[..., Any]:
    async def step(state: dict, runtime: Runtime[Any]) -> dict:
        return await loop.round(state, runtime.context)
    return _named(step, f"{loop.key}#round")


def _exit(loop: LoopNode) -> Callable[..., Any]:
    async def step(state: dict, runtime: Runtime[Any]) -> dict:
        return await loop.exit(state, runtime.context)
    return _named(step, loop.key)


class GraphBuilder:
    """Wires one design's nodes into a compiled langgraph graph."""

    def __init__(self, an: Analysis, nodes: dict[str, Node], output: str):
        self.an = an
        self.nodes = nodes
        self.output = output
        fields: dict[str, Any] = {key: Annotated[list, operator.add] if n.fan else Any for key, n in nodes.items()}
        for ch in an.channels:
            fields[ch] = Annotated[list, operator.add]
        # the fields are built at run time, but the functional TypedDict form is typed for a dict literal only
        State = TypedDict("State", fields)  # pyright: ignore[reportArgumentType]  # see above
        self.g: StateGraph[Any, Any, Any, Any] = StateGraph(State)
        self.fan_nodes = {k for k, n in nodes.items() if n.fan}

    def build(self):
        an, g = self.an, self.g
        for key, n in self.nodes.items():
            if key in an.loops:  # a node with a sub-graph: its round controller, body and exit
                assert isinstance(n, LoopNode)
                g.add_node(key, _exit(n))
                g.add_node(f"{key}#round", _round(n))
            elif n.fan:
                g.add_node(key, _branch(n))
            else:
                g.add_node(key, _single(n))
        for name in an.order:
            n = self.nodes[name]
            srcs = sorted(d for d in an.top[name].deps if d in an.top)
            if name in an.loops:
                self._edges(srcs, f"{name}#round")
                self._wire_loop(an.loops[name])
            elif n.fan:
                self._fan_edges(n, srcs)
            else:
                self._edges(srcs, name)
        g.add_edge(self.output, END)
        return g.compile()

    def _edges(self, srcs: list[str], target: str) -> None:
        if not srcs:
            self.g.add_edge(START, target)
        elif len(srcs) == 1:
            self.g.add_edge(srcs[0], target)
        else:
            self.g.add_edge(srcs, target)

    def _fan_edges(self, n: Node, srcs: list[str]) -> None:
        def route(state: dict, runtime: Runtime[Any]) -> list[Send]:
            return sends(n, state, runtime.context)
        route.__name__ = f"send:{n.key}"
        if not srcs:
            self.g.add_conditional_edges(START, route, [n.key])
        elif len(srcs) == 1 and srcs[0] not in self.fan_nodes:
            self.g.add_conditional_edges(srcs[0], route, [n.key])
        else:
            disp = f"{n.key}#send"

            async def dispatch(state: object) -> dict:
                return {}
            self.g.add_node(disp, dispatch)
            self._edges(srcs, disp)
            self.g.add_conditional_edges(disp, route, [n.key])

    def _wire_loop(self, lp: LoopInfo) -> None:
        ctrl = f"{lp.name}#round"
        roots = [b for b in lp.body.values() if not b.deps]
        plain = [b.key for b in roots if b.fan is None]
        fans = [self.nodes[b.key] for b in roots if b.fan is not None]
        exit_key = lp.name

        def route(state: dict, runtime: Runtime[Any]) -> list:
            sc: Scope = runtime.context
            if not sc.go.get(exit_key):
                return [exit_key]
            out: list = list(plain)
            for fn in fans:
                out.extend(sends(fn, state, sc))
            return out
        route.__name__ = f"round:{lp.name}"
        self.g.add_conditional_edges(ctrl, route, plain + [f.key for f in fans] + [exit_key])
        readers: set[str] = set()
        for b in lp.body.values():
            readers |= b.deps
            if not b.deps:
                continue
            srcs = sorted(lp.body[d].key for d in b.deps)
            if b.fan is not None:
                self._fan_edges(self.nodes[b.key], srcs)
            else:
                self._edges(srcs, b.key)
        self._edges(sorted(b.key for b in lp.body.values() if b.name not in readers), ctrl)


def build_graph(an: Analysis, nodes: dict[str, Node], output: str):
    """The compiled langgraph graph of a design's nodes."""
    return GraphBuilder(an, nodes, output).build()


__all__ = ["build_graph", "recursion_bound", "sends"]
