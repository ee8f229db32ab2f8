"""The op registry seam, from outside the package: the built-ins are listed, an unknown kind is
named with the known ones, and a toy op defined here — registered through the public API, no file
under masbench/ edited — checks, runs inside a design on a sim/ model (its node row says its
kind), weighs in the topology and renders."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from masbench.bench.types import TaskInstance
from masbench.design.topology import structure
from masbench.library import Library
from masbench.llm import Gateway
from masbench.runtime import OPS, Op, RunContext, check_design, run_design
from masbench.runtime.ops.base import Binding, Calls, Getter, Node, Weigher
from masbench.runtime.render import graph, mermaid
from masbench.runtime.values import Val
from masbench.spec import DesignSpec
from masbench.spec.design import NodeSpec
from masbench.spec.model import ModelSpec
from masbench.spec.problems import SpecError
from masbench.text import normalize_answer

BUILTINS = ["agent", "majority", "select", "loop", "python", "design"]
TASK = TaskInstance(id="t1", source="unit", question="What is 20 + 22?", answers=["42"], skills=["arith.add"])


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class OffsetNode(Node):
    """A compiled offset node: its input (name and getter) and the offset."""

    source: str
    get: Getter
    add: int

    async def run(self, sc, env, i, st, calls: Calls):
        n = int(self.get(env).answers[0]) + self.add
        return Val(text=f"{self.source} + {self.add} = {n}", answers=(normalize_answer(str(n)),))


class Offset(Op):
    """Toy op: the first input's answer plus ``params.add`` (no model call)."""

    color = "#abcdef"
    shape = ('[("', '")]')

    def check(self, an, info) -> None:
        if not isinstance(info.spec.params.get("add"), int):
            an.at(info, ("params",), "an offset node needs an integer `params.add`")

    def compile(self, b: Binding, info) -> OffsetNode:
        name, vg = next((n, g) for n, g in b.input_vals(info) if n != "question")
        return OffsetNode(**b.base(info), source=name, get=vg, add=b.node_params(info)["add"])

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        return 0

    def label(self, info) -> str:
        return f"offset +{info.spec.params.get('add')}"


@pytest.fixture
def offset_op():
    OPS.add("offset", Offset())
    yield
    OPS.remove("offset")


def design(**node) -> DesignSpec:
    return DesignSpec.model_validate({
        "name": "toy-offset",
        "nodes": {"solve": {"agent": "cot-solver"}, "shift": {"kind": "offset", "from": "solve", **node}},
        "output": "shift"})


def test_registry_lists_the_builtins() -> None:
    assert OPS.names()[:6] == BUILTINS
    for k in BUILTINS:
        assert isinstance(OPS[k], Op)


def test_builtin_keys_still_name_their_op() -> None:
    kinds = {k: NodeSpec.model_validate(d).kind for k, d in {
        "agent": {"agent": "a"}, "majority": {"op": "majority"}, "select": {"select": "a"},
        "python": {"python": "identity"}, "design": {"design": "cot"},
        "explicit": {"kind": "majority", "op": "majority"}}.items()}
    assert kinds == {"agent": "agent", "majority": "majority", "select": "select", "python": "python",
                     "design": "design", "explicit": "majority"}
    with pytest.raises(ValueError, match="exactly one of agent, op, select, loop, python, design"):
        NodeSpec.model_validate({"agent": "a", "python": "identity"})


async def test_unknown_kind_names_the_known_ones() -> None:
    spec = design(params={"add": 1})
    problems = check_design(spec, None, Library())
    msg = next(p.message for p in problems if "offset" in p.message)
    assert "unknown op 'offset'" in msg
    for k in BUILTINS:
        assert k in msg
    gw = Gateway({"default": ModelSpec(id="sim/medium")})
    with pytest.raises(SpecError):
        await run_design(spec, TASK, RunContext(gateway=gw, library=Library()))


def test_explicit_kind_rejects_keys_of_another_op() -> None:
    spec = DesignSpec.model_validate({"name": "x", "nodes": {"a": {"kind": "majority", "python": "identity",
                                                                   "from": "question"}}, "output": "a"})
    assert any("`python:` does not apply to a majority node" in p.message
               for p in check_design(spec, None, Library()))


@pytest.mark.slow
def test_toy_op_checks_its_own_fields(offset_op) -> None:
    assert check_design(design(params={"add": 1}), None, Library()) == []
    problems = check_design(design(params={"add": "x"}), None, Library())
    assert any("needs an integer `params.add`" in p.message for p in problems)
    problems = check_design(design(params={"add": 1}, repeat=2), None, Library())
    assert any("repeat applies to agent, design or react nodes only" in p.message for p in problems)


async def test_toy_op_runs_in_a_design_on_sim(offset_op) -> None:
    rows: list[dict] = []
    calls: list[dict] = []
    gw = Gateway({"default": ModelSpec(id="sim/medium")}, sink=calls.append)
    ctx = RunContext(gateway=gw, library=Library(), node_sink=rows.append,
                     tags={"run_id": "r1", "design": "toy-offset", "task_id": "t1", "seed": 0})
    res = await run_design(design(params={"add": 5}), TASK, ctx)
    solved = next(r for r in rows if r["node"] == "solve")
    shift = next(r for r in rows if r["node"] == "shift")
    assert shift["op"] == "offset" and shift["status"] == "ok" and shift["calls"] == 0
    assert solved["op"] == "agent" and solved["calls"] == 1 and len(calls) == 1
    assert res.answers == [str(int(solved["output"]) + 5)]
    assert res.calls == 1


async def test_toy_op_from_yaml_through_the_library(offset_op, tmp_path) -> None:
    path = tmp_path / "toy.yaml"
    path.write_text("name: toy-yaml\nnodes:\n  solve: {agent: cot-solver}\n"
                    "  shift:\n    kind: offset\n    from: solve\n    params: {add: 0}\noutput: shift\n")
    lib = Library()
    loaded = lib.load_path(path, "design")
    gw = Gateway({"default": ModelSpec(id="sim/medium")})
    rows: list[dict] = []
    res = await run_design(loaded.spec, TASK, RunContext(gateway=gw, library=lib, node_sink=rows.append))
    assert [r["op"] for r in rows] == ["agent", "offset"]
    assert res.answers == [next(r for r in rows if r["node"] == "solve")["output"]]


def test_toy_op_in_topology_and_render(offset_op) -> None:
    spec = design(params={"add": 2})
    lib = Library()
    st = structure(spec, lib)
    assert st["ops"] == {"agent": 1, "offset": 1}
    assert st["sequential_depth"] == 1 and st["nodes"] == 2
    text = mermaid(spec, lib)
    assert 'shift[("shift<br/>offset +2")]' in text
    assert "style shift fill:#abcdef" in text and "solve --> shift" in text
    g = graph(spec, lib)
    assert g.nodes["shift"]["kind"] == "offset" and g.nodes["shift"]["color"] == "#abcdef"
