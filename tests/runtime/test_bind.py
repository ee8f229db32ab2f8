"""The compiler (:mod:`masbench.runtime.bind`): every node of every bundled design compiles into
its own op's node class — frozen, slotted, carrying its op's fields and no bag of optional ones —
and the loop's stop condition lands on the body node it reads."""

from __future__ import annotations

import dataclasses

import pytest

from masbench.library import Library
from masbench.runtime import compile_design
from masbench.runtime.ops.agent import AgentNode
from masbench.runtime.ops.base import Node
from masbench.runtime.ops.design import DesignNode
from masbench.runtime.ops.loop import LoopNode
from masbench.runtime.ops.python import PythonNode
from masbench.runtime.ops.react import ReactNode
from masbench.runtime.ops.react_loop import Bound
from masbench.runtime.ops.route import RouteNode
from masbench.runtime.ops.select import SelectNode
from masbench.runtime.ops.vote import VoteNode
from masbench.spec import DesignSpec

LIB = Library()
NODE_OF = {"agent": AgentNode, "select": SelectNode, "react": ReactNode, "majority": VoteNode, "python": PythonNode,
           "design": DesignNode, "route": RouteNode, "loop": LoopNode}
BASE = {f.name for f in dataclasses.fields(Node)}


@pytest.mark.parametrize("name", LIB.names("design"))
def test_every_node_is_its_ops_frozen_node(name: str) -> None:
    cd = compile_design(name, LIB)
    infos = {i.key: i for i in cd.analysis.top.values()}
    infos.update({b.key: b for lp in cd.analysis.loops.values() for b in lp.body.values()})
    assert set(cd.nodes) == set(infos)
    for key, node in cd.nodes.items():
        info = infos[key]
        assert type(node) is NODE_OF[info.kind], key
        assert (node.key, node.name, node.loop, node.fan, node.order) == (key, info.name, info.loop, info.fan,
                                                                           info.order)
        assert node.row_op == (info.fan or info.kind) and node.into == info.spec.into
        assert (node.items is not None) == (info.fan is not None)
        assert not hasattr(node, "__dict__")  # slotted: no attribute outside its fields
        with pytest.raises(dataclasses.FrozenInstanceError):
            node.key = "x"  # type: ignore[misc]
        own = {f.name for f in dataclasses.fields(node)} - BASE
        assert "kwargs" not in own and "plan" not in own
        if isinstance(node, ReactNode):
            assert isinstance(node.cfg, Bound) and node.cfg.tools


def test_the_until_rule_is_on_the_body_node_it_reads_and_a_fanned_out_one_on_its_loop() -> None:
    d = DesignSpec.model_validate({
        "name": "u", "nodes": {"draft": {"agent": "cot-solver"}, "fix": {"loop": {
            "init": "draft", "max_rounds": 3, "until": "check contains APPROVED", "output": "redo",
            "nodes": {"check": {"agent": "cot-solver", "from": ["fix"]},
                      "redo": {"agent": "refiner", "from": ["fix", "check"]}}}}}, "output": "fix"})
    nodes = compile_design(d, LIB).nodes
    rule = nodes["fix.check"].until
    assert rule is not None and rule.loop == "fix" and rule.until.word == "APPROVED"
    assert rule.rx is not None and rule.rx.search("ok, approved.") and not rule.rx.search("disapproved")
    assert nodes["fix.redo"].until is None and nodes["draft"].until is None
    loop = nodes["fix"]
    assert isinstance(loop, LoopNode) and loop.fan_judge is None and (loop.max_rounds, loop.init) == (3, "draft")
    fanned = DesignSpec.model_validate({**d.model_dump(exclude_none=True, by_alias=True), "name": "u2"})
    fanned.nodes["fix"].loop.nodes["check"].repeat = 2  # type: ignore[union-attr]
    nodes = compile_design(fanned, LIB).nodes
    loop = nodes["fix"]
    assert isinstance(loop, LoopNode) and loop.fan_judge is not None and loop.fan_judge[0] == "fix.check"
    assert nodes["fix.check"].until is not None  # judged by the loop once all branches are in
