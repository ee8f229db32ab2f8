"""The generators build their problems in :class:`~masbench.bench.taskgraph.TaskGraph` (no networkx):
every task they make is the task they made on networkx's ``DiGraph``, its stored DAG included.

The independent method: the same generators run again with networkx's ``DiGraph`` in place of
``TaskGraph`` and networkx's own ``node_link_data`` as ``to_json`` (what they used before), and each
task (id, question, answers, intermediates, skills, meta) must be equal, field by field."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import networkx as nx
import pytest

from masbench.bench import GENERATORS, dag, igsm, problem, smfr
from masbench.bench.taskgraph import TaskGraph

# Every generator that builds a graph, at two values each (a deeper / wider one has more nodes,
# edges with attributes, attacks, carried answers); smfr.paper is smfr's data at other settings.
CASES = [("masbench.arith", [1, 3]), ("masbench.depth", [1, 4]), ("masbench.breadth", [2, 3]),
         ("masbench.horizon", [1, 3]), ("masbench.parallel", [2, 3]), ("masbench.robustness", [1, 3]),
         ("masbench.igsm.depth", [2, 5]), ("masbench.igsm.breadth", [2, 4]), ("masbench.igsm.horizon", [2, 4]),
         ("masbench.igsm.parallel", [2, 3]), ("masbench.igsm.robustness", [2, 4]), ("smfr", [2, 4])]


def _tasks(name: str, values: list[int]) -> list[dict]:
    return [t.model_dump() for t in GENERATORS[name](values, 6, 3, "test")]


@pytest.mark.parametrize("name,values", CASES)
def test_generated_tasks_equal_the_ones_built_on_networkx(name, values, monkeypatch):
    ours = _tasks(name, values)
    for mod in (problem, igsm, smfr):
        monkeypatch.setattr(mod, "TaskGraph", nx.DiGraph)
    monkeypatch.setattr(dag, "to_json", lambda G: nx.node_link_data(G, edges="edges"))
    theirs = _tasks(name, values)
    assert len(ours) == len(theirs) == 6 * len(values)
    for a, b in zip(ours, theirs):
        assert a == b


def test_the_graph_answers_like_a_digraph_built_the_same_way():
    # A small graph with a node updated after it was added, an edge to a node not yet added (added
    # without attributes), an edge added twice (attributes merged) and graph attributes.
    steps = [("node", "a", {"v": 1}), ("node", "b", {"v": 2}), ("edge", "a", "c", {"as": "x"}),
             ("node", "a", {"w": 3}), ("edge", "b", "c", {}), ("edge", "a", "c", {"k": 1}), ("edge", "c", "d", {})]
    ours, theirs = TaskGraph(answers=["d"]), nx.DiGraph(answers=["d"])
    for g in (ours, theirs):
        for step in steps:
            if step[0] == "node":
                g.add_node(step[1], **step[2])
            else:
                g.add_edge(step[1], step[2], **step[3])
    assert list(ours.nodes) == list(theirs.nodes) == ["a", "b", "c", "d"]
    assert list(ours.nodes(data=True)) == list(theirs.nodes(data=True))
    assert list(ours.edges(data=True)) == list(theirs.edges(data=True))
    assert ours.edges["a", "c"] == theirs.edges["a", "c"] == {"as": "x", "k": 1}
    assert (ours.number_of_nodes(), ours.number_of_edges()) == (theirs.number_of_nodes(), theirs.number_of_edges()) == (4, 3)
    assert [ours.out_degree(n) for n in ours] == [theirs.out_degree(n) for n in theirs] == [1, 1, 1, 0]
    assert [ours.in_degree(n) for n in ours] == [theirs.in_degree(n) for n in theirs] == [0, 0, 2, 1]
    assert dag.to_json(ours) == nx.node_link_data(theirs, edges="edges")
    ours.nodes["a"]["wrong"] = 5  # the node view hands out the attribute dict itself, as networkx's
    assert dag.to_json(ours)["nodes"][0] == {"v": 1, "w": 3, "wrong": 5, "id": "a"}


def test_making_tasks_imports_no_networkx():
    """A run makes its tasks before its first call: no generator imports networkx (only reading a
    stored DAG back for its measures does, ``dag.from_json``)."""
    code = textwrap.dedent(f"""
        import sys
        from masbench.bench import GENERATORS
        for name, values in {CASES!r}:
            GENERATORS[name](values, 2, 0, "test")
        print("networkx" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
