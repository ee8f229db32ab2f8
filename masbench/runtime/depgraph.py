"""The dependency graph of a design's top-level nodes, in plain dicts: checking a design must not
import networkx (~0.15 s) for the three things it asks of a graph.

- :meth:`DepGraph.topological_order` — the order networkx's ``lexicographical_topological_sort``
  gives (ties broken by the key, then by the order nodes were added), or None on a cycle;
- :meth:`DepGraph.cycles` — only when there is one (a design that cannot run): networkx's
  ``simple_cycles`` over the same graph, rebuilt in the same insertion order, so the cycles
  reported are the ones networkx finds;
- :meth:`DepGraph.ancestors` — every node with a path to a node.

``tests/runtime/test_depgraph.py`` checks all three against networkx on random graphs.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

N = TypeVar("N", bound=Hashable)


class DepGraph(Generic[N]):
    """A directed graph: nodes and edges kept in the order they were added (as networkx's
    ``DiGraph`` keeps them)."""

    def __init__(self) -> None:
        self.succ: dict[N, dict[N, None]] = {}
        """Node → its successors, in the order the edges were added."""
        self.pred: dict[N, dict[N, None]] = {}
        """Node → its predecessors, in the order the edges were added."""
        self._log: list[tuple[N, ...]] = []
        """Every ``add_node`` (one item) and new ``add_edge`` (two), in order: replayed into networkx."""

    def add_node(self, n: N) -> None:
        if n not in self.succ:
            self.succ[n], self.pred[n] = {}, {}
            self._log.append((n,))

    def add_edge(self, u: N, v: N) -> None:
        self.add_node(u)
        self.add_node(v)
        if v not in self.succ[u]:
            self.succ[u][v] = None
            self.pred[v][u] = None
            self._log.append((u, v))

    def __contains__(self, n: object) -> bool:
        return n in self.succ

    def __iter__(self) -> Iterator[N]:
        return iter(self.succ)

    def __len__(self) -> int:
        return len(self.succ)

    def topological_order(self, key: Callable[[Any], Any]) -> list[N] | None:
        """Kahn's order, smallest ``key`` first among the ready nodes (then the earliest added):
        networkx's ``lexicographical_topological_sort``. None if the graph has a cycle."""
        ids = {n: i for i, n in enumerate(self.succ)}
        indegree = {n: len(p) for n, p in self.pred.items() if p}
        ready = [(key(n), ids[n], n) for n, p in self.pred.items() if not p]
        heapq.heapify(ready)
        out: list[N] = []
        while ready:
            _, _, n = heapq.heappop(ready)
            for child in self.succ[n]:
                indegree[child] -= 1
                if not indegree[child]:
                    del indegree[child]
                    heapq.heappush(ready, (key(child), ids[child], child))
            out.append(n)
        return None if indegree else out

    def ancestors(self, n: N) -> set[N]:
        """Every node with a path to ``n`` (``n`` excluded)."""
        seen: set[N] = set()
        todo = list(self.pred[n])
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(self.pred[m])
        seen.discard(n)  # on a cycle through n
        return seen

    def to_networkx(self) -> Any:
        """The same graph as a networkx ``DiGraph``, built in the same order (imports networkx)."""
        import networkx as nx

        g = nx.DiGraph()
        for item in self._log:
            if len(item) == 1:
                g.add_node(item[0])
            else:
                g.add_edge(*item)
        return g

    def cycles(self, limit: int) -> list[list[N]]:
        """The first ``limit`` cycles networkx's ``simple_cycles`` yields (imports networkx: only for
        a graph that has a cycle)."""
        import networkx as nx

        out: list[list[N]] = []
        for c in nx.simple_cycles(self.to_networkx()):
            out.append(c)
            if len(out) >= limit:
                break
        return out


__all__ = ["DepGraph"]
