"""The straight-line shape (:func:`masbench.runtime.chain.straight`, :func:`~masbench.runtime.chain.chain_of`);
that the chain runs every bundled design like langgraph does is tests/runtime/test_compiled.py."""

from __future__ import annotations

from masbench.library import Library
from masbench.runtime.chain import chain_of, straight

LIB = Library()


class _I:
    def __init__(self, name: str, deps: set[str]):
        self.name, self.deps = name, deps


def test_straight_orders_by_depth_and_rejects_two_nodes_at_one_depth() -> None:
    # a → b → c, with c also reading a: one node per depth, depth order
    got = straight([_I("c", {"a", "b"}), _I("a", set()), _I("b", {"a"})])  # type: ignore[list-item]
    assert got is not None and [i.name for i in got] == ["a", "b", "c"]
    # a → b, a → c: b and c share depth 1 (they run in parallel in the graph)
    assert straight([_I("a", set()), _I("b", {"a"}), _I("c", {"a"})]) is None  # type: ignore[list-item]
    # two roots
    assert straight([_I("a", set()), _I("b", set())]) is None  # type: ignore[list-item]
    # a dependency outside the group (a loop body reading a top-level node) is ignored
    got = straight([_I("x", {"top"}), _I("y", {"x", "top"})])  # type: ignore[list-item]
    assert got is not None and [i.name for i in got] == ["x", "y"]


def test_a_design_writing_a_channel_runs_on_the_graph() -> None:
    from masbench.runtime.design_analysis import Analysis
    from masbench.runtime.compiled import CompiledDesign
    from masbench.spec import DesignSpec

    d = DesignSpec.model_validate({
        "name": "chan", "agents": {"a": {"name": "a", "model": "default", "prompt": "{question}"}},
        "nodes": {"x": {"agent": "a", "into": "pool"}, "v": {"op": "majority", "from": "pool"}}, "output": "v"})
    an = Analysis(d, None, LIB, None)
    assert an.problems == []
    cd = CompiledDesign(d, LIB)
    assert chain_of(an, cd.nodes) is None and cd.chain is None and cd.schedulers == ("graph",)
