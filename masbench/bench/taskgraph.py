"""The graph a generator builds a problem in: the part of networkx's ``DiGraph`` the generators use
(attribute dicts on the graph, its nodes and its edges, in insertion order), in plain dicts, so
making tasks does not import networkx (~0.15 s of a run's start-up) for a store of attributes.

:func:`masbench.bench.dag.to_json` writes it as networkx's ``node_link_data`` does, so a task's
``meta["dag"]`` is the same either way; :func:`masbench.bench.dag.from_json` reads it back as a
networkx graph for the measures. ``tests/bench/test_taskgraph.py`` checks both against networkx.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class NodeView:
    """``G.nodes``: iterate the names, ``G.nodes[n]`` is ``n``'s attribute dict (mutable, as in
    networkx), ``G.nodes(data=True)`` yields ``(name, attributes)``."""

    __slots__ = ("_nodes",)

    def __init__(self, nodes: dict[str, dict[str, Any]]):
        self._nodes = nodes

    def __iter__(self) -> Iterator[str]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, n: object) -> bool:
        return n in self._nodes

    def __getitem__(self, n: str) -> dict[str, Any]:
        return self._nodes[n]

    def __call__(self, data: bool = False) -> Iterator[Any]:
        return iter(self._nodes.items()) if data else iter(self._nodes)


class EdgeView:
    """``G.edges``: ``G.edges[u, v]`` is the edge's attribute dict; ``G.edges(data=True)`` yields
    ``(u, v, attributes)`` in networkx's order (by source in node order, then edge order)."""

    __slots__ = ("_succ",)

    def __init__(self, succ: dict[str, dict[str, dict[str, Any]]]):
        self._succ = succ

    def __getitem__(self, uv: tuple[str, str]) -> dict[str, Any]:
        u, v = uv
        return self._succ[u][v]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return ((u, v) for u, nbrs in self._succ.items() for v in nbrs)

    def __len__(self) -> int:
        return sum(len(nbrs) for nbrs in self._succ.values())

    def __call__(self, data: bool = False) -> Iterator[Any]:
        if not data:
            return iter(self)
        return ((u, v, d) for u, nbrs in self._succ.items() for v, d in nbrs.items())


class TaskGraph:
    """A directed graph with attribute dicts, networkx's ``DiGraph`` API for what the generators
    call: ``graph``, ``add_node``, ``add_edge``, ``nodes``, ``edges``, ``number_of_nodes``,
    ``number_of_edges``, ``in_degree``, ``out_degree``."""

    __slots__ = ("graph", "_nodes", "_succ", "_pred")

    def __init__(self, **graph: Any):
        self.graph: dict[str, Any] = dict(graph)
        """The graph's own attributes (``answers``, ``axis``, …)."""
        self._nodes: dict[str, dict[str, Any]] = {}
        self._succ: dict[str, dict[str, dict[str, Any]]] = {}
        self._pred: dict[str, dict[str, None]] = {}

    def add_node(self, n: str, **attrs: Any) -> None:
        """Add ``n`` (or update its attributes, if it is there)."""
        if n not in self._nodes:
            self._nodes[n], self._succ[n], self._pred[n] = {}, {}, {}
        self._nodes[n].update(attrs)

    def add_edge(self, u: str, v: str, **attrs: Any) -> None:
        """Add the edge ``u → v`` (and either node, without attributes, if it is missing); on an
        existing edge, update its attributes."""
        for n in (u, v):
            if n not in self._nodes:
                self.add_node(n)
        self._succ[u].setdefault(v, {}).update(attrs)
        self._pred[v][u] = None

    @property
    def nodes(self) -> NodeView:
        return NodeView(self._nodes)

    @property
    def edges(self) -> EdgeView:
        return EdgeView(self._succ)

    def __iter__(self) -> Iterator[str]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, n: object) -> bool:
        return n in self._nodes

    def number_of_nodes(self) -> int:
        return len(self._nodes)

    def number_of_edges(self) -> int:
        return len(self.edges)

    def out_degree(self, n: str) -> int:
        return len(self._succ[n])

    def in_degree(self, n: str) -> int:
        return len(self._pred[n])

    def is_directed(self) -> bool:
        return True

    def is_multigraph(self) -> bool:
        return False


__all__ = ["EdgeView", "NodeView", "TaskGraph"]
