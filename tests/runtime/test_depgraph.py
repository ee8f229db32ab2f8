"""The design checker's plain-dict graph answers as networkx does: the lexicographic topological
order (None exactly when networkx finds a cycle), the cycles reported, the ancestors — on
random graphs, with and without cycles, with ties in the key."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from masbench.runtime.depgraph import DepGraph


def _random_pair(rng: random.Random) -> tuple[DepGraph[str], nx.DiGraph]:
    """The same random graph built both ways, by the same calls in the same order (nodes named so
    that string order and insertion order disagree)."""
    n = rng.randint(1, 9)
    names = [f"n{rng.randint(0, 99)}" for _ in range(n)]
    ours: DepGraph[str] = DepGraph()
    theirs = nx.DiGraph()
    acyclic = rng.random() < 0.6
    for _ in range(rng.randint(0, 3 * n)):
        if rng.random() < 0.3:
            v = rng.choice(names)
            ours.add_node(v)
            theirs.add_node(v)
        else:
            i, j = rng.randrange(n), rng.randrange(n)
            if acyclic:
                i, j = sorted((i, j))
                if names[i] == names[j]:
                    continue
            ours.add_edge(names[i], names[j])
            theirs.add_edge(names[i], names[j])
    return ours, theirs


@pytest.mark.parametrize("seed", range(4))
def test_order_cycles_and_ancestors_match_networkx(seed):
    rng = random.Random(seed)
    cyclic = acyclic = 0
    for _ in range(1500):
        ours, theirs = _random_pair(rng)
        assert list(ours) == list(theirs)
        ranks = {v: rng.randint(0, 3) for v in theirs}  # ties: broken by insertion order in both
        try:
            expected = list(nx.lexicographical_topological_sort(theirs, key=ranks.__getitem__))
        except nx.NetworkXUnfeasible:
            expected = None
        assert ours.topological_order(key=ranks.__getitem__) == expected
        if expected is None:
            cyclic += 1
            assert ours.cycles(limit=5) == list(nx.simple_cycles(theirs))[:5]
        else:
            acyclic += 1
            assert ours.cycles(limit=5) == []
        for v in theirs:
            assert ours.ancestors(v) == nx.ancestors(theirs, v)
    assert cyclic > 100 and acyclic > 100  # both branches exercised


def test_a_small_graph_by_hand():
    g: DepGraph[str] = DepGraph()
    for u, v in [("a", "c"), ("b", "c"), ("c", "d")]:
        g.add_edge(u, v)
    g.add_node("e")
    assert g.topological_order(key={"a": 1, "b": 0, "c": 2, "d": 3, "e": 0}.__getitem__) == ["b", "e", "a", "c", "d"]
    assert g.ancestors("d") == {"a", "b", "c"}
    g.add_edge("d", "a")
    assert g.topological_order(key=lambda n: 0) is None
    [cycle] = g.cycles(limit=5)
    assert len(cycle) == 3 and "".join(cycle) in "acdacd"  # networkx picks where the cycle starts
