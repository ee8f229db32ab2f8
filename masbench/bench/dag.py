"""Dependency DAGs of generated problems: evaluation, axis measurement, JSON round-trip.

Conventions (a MASBench problem is a DAG of quantities):

- A node is a quantity. ``kind="given"`` nodes state their value in the text; ``kind="derived"``
  nodes are sub-tasks, each ONE operation (``op``) on its parents (``args``, in order) and an
  optional constant (``const``).
- An edge ``u → v`` means sub-task ``v`` uses ``u``'s value. Sources are given, sinks are answers
  (``G.graph["answers"]``, in answer order).
- Axis measures (all plain networkx):
  depth = longest path in edges (= operations on the longest chain to an answer);
  breadth = maximum in-degree; parallel = weakly connected components;
  horizon = derived nodes whose answer is carried forward (out-degree > 0);
  robustness = nodes carrying an attack (``wrong`` set).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # networkx (~0.15 s to import): only the measures of a graph read back (from_json) use it
    import networkx as nx

    from .taskgraph import TaskGraph

OPS: dict[str, Callable[[list[int], int | None], int]] = {
    "add": lambda a, c: a[0] + (c or 0),
    "sub": lambda a, c: a[0] - (c or 0),
    "mul": lambda a, c: a[0] * (c or 1),
    "half": lambda a, c: a[0] // 2,
    "sum": lambda a, c: sum(a) + (c or 0),
    "diff": lambda a, c: a[0] - a[1],
}
"""Operation name → ``fn(parent_values, const)``. Every op is exact on the integers it is given."""


def apply_op(op: str, args: list[int], const: int | None = None) -> int:
    """Value of one sub-task from its parents' values."""
    if op == "half" and args[0] % 2:
        raise ValueError(f"half of an odd number ({args[0]})")
    return OPS[op](args, const)


def evaluate(G: nx.DiGraph) -> dict[str, int]:
    """Recompute every node's value from the given values and the ops (topological order)."""
    import networkx as nx

    values: dict[str, int] = {}
    for node in nx.topological_sort(G):
        data = G.nodes[node]
        if data["kind"] == "given":
            values[node] = int(data["value"])
        else:
            values[node] = apply_op(data["op"], [values[a] for a in data["args"]], data.get("const"))
    return values


def depth(G: nx.DiGraph) -> int:
    """Operations on the longest dependency chain (edges on the longest path)."""
    import networkx as nx
    return nx.dag_longest_path_length(G) if G.number_of_nodes() else 0


def breadth(G: nx.DiGraph) -> int:
    """Maximum in-degree: the most dependencies of one sub-task."""
    return max((d for _, d in G.in_degree()), default=0)


def parallel(G: nx.DiGraph) -> int:
    """Number of independent (weakly connected) components."""
    import networkx as nx
    return nx.number_weakly_connected_components(G) if G.number_of_nodes() else 0


def horizon(G: nx.DiGraph) -> int:
    """Intermediate sub-task answers carried forward into later sub-tasks."""
    return sum(1 for n, d in G.nodes(data=True) if d["kind"] == "derived" and G.out_degree(n) > 0)


def robustness(G: nx.DiGraph) -> int:
    """Sub-tasks carrying an attack (a wrong-value note)."""
    return sum(1 for _, d in G.nodes(data=True) if d.get("wrong") is not None)


MEASURES: dict[str, Callable[[nx.DiGraph], int]] = {
    "depth": depth, "breadth": breadth, "parallel": parallel, "horizon": horizon, "robustness": robustness,
}
"""Axis name → measure."""


def measure(G: nx.DiGraph, axis: str) -> int:
    """The value of one axis on a DAG."""
    return MEASURES[axis](G)


def stats(G: nx.DiGraph) -> dict[str, int]:
    """Size and every axis measure of a DAG."""
    out = {"nodes": G.number_of_nodes(), "edges": G.number_of_edges(),
           "subtasks": sum(1 for _, d in G.nodes(data=True) if d.get("kind") == "derived")}
    out.update({axis: fn(G) for axis, fn in MEASURES.items()})
    return out


def to_json(G: TaskGraph | nx.DiGraph) -> dict[str, Any]:
    """Node-link JSON (``edges`` key) of a DAG, JSON-serializable: what networkx's
    ``node_link_data(G, edges="edges")`` returns (the graph's attribute dict itself, a copy of each
    node's attributes with its ``id``, of each edge's with ``source`` and ``target``), written here
    so a generator's :class:`~masbench.bench.taskgraph.TaskGraph` needs no networkx."""
    return {"directed": True, "multigraph": False, "graph": G.graph,
            "nodes": [{**G.nodes[n], "id": n} for n in G],
            "edges": [{**d, "source": u, "target": v} for u, v, d in G.edges(data=True)]}


def from_json(data: dict[str, Any]) -> nx.DiGraph:
    """The DAG back from :func:`to_json` output."""
    import networkx as nx
    return nx.node_link_graph(data, directed=True, multigraph=False, edges="edges")
