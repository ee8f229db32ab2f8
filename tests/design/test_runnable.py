"""What a suite entry's name runs, decided once: ``masbench validate`` (the ``suite.designs`` check)
and ``masbench run`` (``resolve_runnable``, through the cell runner) read a name the same way."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.design.runnable import (Designer, LibraryDesign, check_suite_designs, is_designer, resolve_runnable,
                                      runnable_kind)
from masbench.harness import RunOptions, prepare
from masbench.harness.engine_inprocess import CellRunner
from masbench.library import Library
from masbench.registry import CHECKS, DESIGNERS
from masbench.spec.problems import SpecError
from masbench.store import Store, StoreWriter

from program_fixtures import write_program

# A library design that takes a per-task designer's name, and is invalid as a design (its node's
# agent does not exist): before this rule lived in one place, `validate` checked it as this design
# (and failed) while `run` ran the designer.
SHADOWED = """\
name: meta-designer
kind: baseline
description: a library design with a designer's name
nodes:
  solve: {agent: no-such-agent}
output: solve
"""
BROKEN = SHADOWED.replace("name: meta-designer", "name: broken")


def _root(tmp_path: Path, designs: str) -> Path:
    (tmp_path / "orchestrators").mkdir()
    (tmp_path / "orchestrators" / "meta-designer.yaml").write_text(SHADOWED)
    (tmp_path / "orchestrators" / "broken.yaml").write_text(BROKEN)
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "s.yaml").write_text(textwrap.dedent(f"""\
        name: s
        models: {{default: sim/p60}}
        tasks: [{{generator: masbench.arith, name: arithmetic, values: [1], n: 2, seed: 0}}]
        designs: {designs}
        cot_sc: {{enabled: false}}
        store: {tmp_path / "s.duckdb"}
    """))
    return tmp_path / "tasks" / "s.yaml"


def _validate(suite: Path, root: Path):
    return CliRunner().invoke(app, ["validate", str(suite), "--lib", str(root)])


def test_a_name_that_is_a_designer_and_a_library_design_is_the_designer_under_validate_and_run(tmp_path):
    suite = _root(tmp_path, "[cot, meta-designer]")
    lib = Library(roots=[tmp_path])
    assert lib.has("design", "meta-designer") and "meta-designer" in DESIGNERS  # the name is in both
    with pytest.raises(SpecError, match="no-such-agent"):
        lib.design("meta-designer")  # as a library design it is invalid
    # validate: the suite is fine (the entry is the designer, not the invalid file)
    r = _validate(suite, tmp_path)
    assert r.exit_code == 0, r.output
    assert "ok" in r.output and "meta-designer" not in r.output
    # run: the prepared suite resolves it, and the cell runner runs the designer's own code
    prep = prepare(RunOptions(suite=str(suite), lib=[tmp_path]))
    assert {n: r.kind for n, r in prep.runnables.items()} == {"cot": "design", "meta-designer": "designer"}
    store = Store(tmp_path / "s.duckdb")
    try:
        runner = CellRunner(prep, store, "r", None, StoreWriter(store))
        got = runner.runnable("meta-designer")
        assert isinstance(got, Designer) and got.kind == "designer"
        assert got.runner is DESIGNERS["meta-designer"]
        assert isinstance(runner.runnable("cot"), LibraryDesign)
    finally:
        store.close()
    assert runnable_kind("meta-designer", lib) == "designer" and is_designer("meta-designer")


def test_an_invalid_library_design_fails_validate_and_run_alike(tmp_path):
    suite = _root(tmp_path, "[cot, broken]")
    r = _validate(suite, tmp_path)
    assert r.exit_code == 2 and "design 'broken' is invalid" in r.output and "designs[1]" in r.output
    with pytest.raises(SpecError, match="no-such-agent"):
        resolve_runnable("broken", Library(roots=[tmp_path]))
    with pytest.raises(SpecError, match="design 'broken' is invalid"):
        prepare(RunOptions(suite=str(suite), lib=[tmp_path]))


def test_an_unknown_name_fails_validate_and_run_alike(tmp_path):
    suite = _root(tmp_path, "[cot, nope]")
    r = _validate(suite, tmp_path)
    assert r.exit_code == 2 and "unknown design 'nope'" in r.output
    lib = Library(roots=[tmp_path])
    assert runnable_kind("nope", lib) is None and not is_designer("nope")
    with pytest.raises(SpecError, match="no design or designer named 'nope'.*designers: meta-designer, holistic-designer"):
        resolve_runnable("nope", lib)


def test_the_kinds_a_name_resolves_to(tmp_path):
    write_program(tmp_path, "prog_x", "def solve(task, agents):\n    return 'x'\n", """
        name: prog-x
        kind: program
        entry: prog_x:solve
        agents: [solver]
    """)
    lib = Library(roots=[tmp_path])
    assert [runnable_kind(n, lib) for n in ("holistic-designer", "prog-x", "cot", "nope")] == \
        ["designer", "program", "design", None]
    got = resolve_runnable("prog-x", lib)
    assert (type(got).__name__, got.kind, got.name) == ("ProgramDesign", "program", "prog-x")
    assert resolve_runnable("cot", lib) == LibraryDesign("cot")


def test_a_design_file_given_by_path_is_what_run_loads_and_validate_accepts(tmp_path):
    (tmp_path / "mine.yaml").write_text(BROKEN.replace("name: broken", "name: mine")
                                        .replace("no-such-agent", "cot-solver"))
    path = str(tmp_path / "mine.yaml")
    lib = Library()
    assert runnable_kind(path, lib) == "design" and resolve_runnable(path, lib) == LibraryDesign(path)
    suite = lib.suite("quickstart").model_copy(update={"designs": [path]})
    assert check_suite_designs(suite, lib.get("suite", "quickstart").located, lib) == []


def test_the_designs_check_is_a_named_suite_check_and_the_designers_point_at_their_code():
    assert CHECKS.where("suite.designs") == "masbench.design.runnable:check_suite_designs"
    assert DESIGNERS.where("meta-designer") == "masbench.design.meta:run_meta_designer"
    assert DESIGNERS.where("holistic-designer") == "masbench.design.holistic:run_holistic_designer"
