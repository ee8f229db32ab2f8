"""The one design check (check_design): library references reported once, at their key; sub-design
cycles found without the check re-entering itself; the shared name reader; the select parser;
structured-output coercion; and the runtime's import shape."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from masbench.library import Library
from masbench.runtime import RESERVED, check_design, node_reads, sinks, template_refs
from masbench.runtime.structured import parse_structured
from masbench.spec import DesignSpec
from masbench.spec.problems import SpecError
from masbench.spec.yamlpos import load_yaml_file
from masbench.text import parse_choice

RUNTIME = Path(__file__).resolve().parents[2] / "masbench" / "runtime"


def located(tmp_path: Path, text: str):
    f = tmp_path / "d.yaml"
    f.write_text(text)
    loc = load_yaml_file(f)
    return DesignSpec.model_validate(loc.data), loc


def test_unknown_agents_are_reported_once_at_their_key(tmp_path: Path) -> None:
    spec, loc = located(tmp_path, "name: d\nnodes:\n  a: {agent: ghost}\n  v: {select: nobody, from: [a]}\n"
                                  "output: v\n")
    probs = check_design(spec, loc, Library())
    refs = [p for p in probs if "unknown agent" in p.message]
    assert [(p.line, p.field, p.message) for p in refs] == [
        (3, "nodes.a.agent", "unknown agent 'ghost' (not in this design's agents nor in any agents/ folder)"),
        (4, "nodes.v.select", "unknown agent 'nobody' (not in this design's agents nor in any agents/ folder)")]
    assert len(probs) == len(set(probs))


class CheckingLibrary(Library):
    """A library whose checked loads run check_design (as the lead's library will) and whose
    unchecked loads do not: a cycle of sub-designs must be found without infinite re-entry."""

    def __init__(self, designs: dict[str, DesignSpec]):
        super().__init__(include_cwd=False)
        self.designs = designs
        self.checked: list[str] = []

    def has(self, kind: str, name: str) -> bool:
        return kind == "design" and name in self.designs or super().has(kind, name)

    def get(self, kind: str, name: str, check: bool = True):
        if kind != "design" or name not in self.designs:
            return super().get(kind, name)
        spec = self.designs[name]
        if check:
            self.checked.append(name)
            assert self.checked.count(name) < 5, f"the check re-entered itself: {self.checked}"
            probs = check_design(spec, None, self)
            if probs:
                raise SpecError(probs)
        return type("Loaded", (), {"spec": spec})()


def design(name: str, *subs: str) -> DesignSpec:
    nodes = {f"s{i}": {"design": s} for i, s in enumerate(subs)} or {"a": {"agent": "cot-solver"}}
    if len(nodes) > 1:
        nodes["v"] = {"op": "majority", "from": list(nodes)}
    return DesignSpec.model_validate({"name": name, "nodes": nodes, "output": "v" if len(nodes) > 1 else next(iter(nodes))})


def test_sub_design_cycles_are_found_without_reentering_the_check() -> None:
    lib = CheckingLibrary({"a": design("a", "b"), "b": design("b", "c"), "c": design("c", "a"), "leaf": design("leaf")})
    probs = check_design(lib.designs["a"], None, lib)
    assert [p.message for p in probs] == ["cycle of sub-designs: a → b → c → a"]
    assert lib.checked == []  # the walk used unchecked specs only
    ok = CheckingLibrary({"top": design("top", "mid", "leaf"), "mid": design("mid", "leaf"), "leaf": design("leaf")})
    assert check_design(ok.designs["top"], None, ok) == []
    assert sorted(set(ok.checked)) == ["leaf", "mid"]  # direct sub-designs are checked, once each level
    bad = CheckingLibrary({"top": design("top", "mid"), "mid": design("mid", "x", "y"), "x": design("x", "y"),
                           "y": design("y", "x")})
    msgs = [p.message for p in check_design(bad.designs["top"], None, bad)]
    assert len(msgs) == 1 and msgs[0].startswith("design 'mid' is invalid: ") and "cycle of sub-designs" in msgs[0]


def test_node_reads_and_sinks_read_specs_and_raw_data_alike() -> None:
    raw = {"name": "t", "agents": {"w": {"prompt": "{plan.steps} {k}"}},
           "nodes": {"plan": {"agent": "cot-solver"}, "work": {"agent": "w", "map": "plan.steps"},
                     "fix": {"loop": {"init": "work", "nodes": {"c": {"agent": "cot-solver", "prompt": "{fix} {c}"}},
                                      "output": "c"}}, "out": {"op": "majority", "from": ["fix", "question"]}},
           "output": "out"}
    spec = DesignSpec.model_validate(raw)
    for nodes, agents in ((raw["nodes"], raw["agents"]), (spec.nodes, spec.agents)):
        assert node_reads(nodes["work"], agents) == {"plan", "k"}
        assert node_reads(nodes["fix"], agents) == {"work", "fix"}
        assert node_reads(nodes["out"], agents) == {"fix", "question"}
        assert sinks(nodes, agents) == ["out"]
    assert template_refs("{a} {{b}} {c.d} {not a ref}") == {"a", "c"}
    assert "question" in RESERVED and "history" in RESERVED


@pytest.mark.parametrize("text,n,want", [("Choice: 2", 3, 1), ("choice #**3**", 3, 2), ("Choice: 9", 3, None),
                                         ("I pick 1, no, 2.", 3, 1), ("candidate 12 of 30", 3, None), ("of 3 candidates: 3", 3, 2), ("", 2, None)])
def test_parse_choice(text: str, n: int, want: int | None) -> None:
    assert parse_choice(text, n) == want


def test_structured_coercion_keeps_its_leniency_and_strictness() -> None:
    schema = {"ok": "bool", "n": "float", "xs": "list[str]"}
    assert parse_structured('{"ok": "Yes ", "n": "2.5", "xs": "one"}', schema) == (
        {"ok": True, "n": 2.5, "xs": ["one"]}, None)
    assert parse_structured('{"ok": 1, "n": 2, "xs": []}', schema)[1] == "field 'ok' must be bool, got 1"
    assert parse_structured('{"ok": true, "n": true, "xs": []}', schema)[1] == "field 'n' must be float, got true"
    # the last object that validates wins; otherwise the last object's error is reported
    assert parse_structured('{"ok": true, "n": 1, "xs": []} {"ok": "maybe", "n": 1, "xs": []}', schema) == (
        {"ok": True, "n": 1.0, "xs": []}, None)


def test_runtime_has_no_function_level_imports_of_masbench_modules() -> None:
    allowed = {("__init__.py", "_cache"),  # start-up time: langgraph/litellm load on first compile
               ("compiled.py", "graph"),  # langgraph loads with the first design that is not straight-line
               # checking a design (masbench validate) loads the scope with the ops; what only a run
               # uses loads with the run: the budget meter, the node row (the store), the vote (the calculator)
               ("scope.py", "__init__"), ("scope.py", "emit"), ("scope.py", "vote")}
    moved = {"cli.py", "testing.py"}  # moved out of the runtime by the lead (cli/graph.py, llm/scripted.py)
    found = []
    for f in sorted(RUNTIME.rglob("*.py")):
        if f.name in moved:
            continue
        for fn in ast.walk(ast.parse(f.read_text())):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                ours = (isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("masbench"))
                        or isinstance(node, ast.Import) and any(a.name.startswith("masbench") for a in node.names))
                if ours:
                    if (f.name, fn.name) not in allowed:
                        found.append(f"{f.relative_to(RUNTIME)}:{node.lineno} in {fn.name}")
    assert found == []
