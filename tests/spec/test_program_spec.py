"""Program designs (``kind: program``) load as their own spec and are checked at their YAML line:
a module not found, a name that is not callable, a wrong signature, a command not found."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.library import Library
from masbench.spec import DESIGN_FORMS, DesignSpec, ProgramSpec, spec_class
from masbench.spec.problems import SpecError

GOOD = "def solve(task, endpoint):\n    return 'Answer: 1'\n\nNOT_A_FUNCTION = 3\n\ndef one_arg(task):\n    return ''\n"


def _lib(tmp_path: Path, monkeypatch, body: str, module: str = "prog_mod_spec") -> tuple[Library, Path]:
    (tmp_path / "orchestrators").mkdir(exist_ok=True)
    (tmp_path / f"{module}.py").write_text(GOOD)
    f = tmp_path / "orchestrators" / "p.yaml"
    f.write_text(body)
    monkeypatch.chdir(tmp_path)
    sys.modules.pop(module, None)
    return Library([tmp_path], include_cwd=False), f


def test_a_design_file_with_kind_program_is_a_program_spec(tmp_path, monkeypatch):
    lib, f = _lib(tmp_path, monkeypatch, "name: p\nkind: program\nentry: prog_mod_spec:solve\nagents: [a, b]\n")
    spec = lib.get("design", "p").spec
    assert isinstance(spec, ProgramSpec) and spec.agents == ["a", "b"] and spec.models == ["default"]
    assert lib.program("p") is spec
    with pytest.raises(SpecError, match="program design"):  # not a graph: callers of design() are told so
        lib.design("p")
    assert spec_class("design", {"kind": "program"}) == (ProgramSpec, "program")
    assert spec_class("design", {"kind": "expert"}) == (DesignSpec, "design")
    assert "program" in DESIGN_FORMS


@pytest.mark.parametrize("body, line, field, words", [
    ("name: p\nkind: program\nentry: no_such_module_xyz:solve\n", 3, "entry", "not found"),
    ("name: p\nkind: program\nentry: prog_mod_spec:missing\n", 3, "entry", "no attribute 'missing'"),
    ("name: p\nkind: program\nentry: prog_mod_spec:NOT_A_FUNCTION\n", 3, "entry", "not a function"),
    ("name: p\nkind: program\nentry: prog_mod_spec:one_arg\n", 3, "entry", "two positional arguments"),
    ("name: p\nkind: program\n\ncommand: [no-such-binary-xyz, run]\n", 4, "command[0]", "not found on PATH"),
    ("name: p\nkind: program\ncommand: [./missing.sh]\n", 3, "command[0]", "not found"),
    ("name: p\nkind: program\nentry: prog_mod_spec:solve\ncommand: [ls]\n", 1, "<document>", "exactly one of"),
    ("name: p\nkind: program\nentry: prog_mod_spec:solve\ntimeout: 3\n", 4, "timeout", "unknown field"),
])
def test_problems_are_pinned_to_their_line(tmp_path, monkeypatch, body, line, field, words):
    lib, f = _lib(tmp_path, monkeypatch, body)
    with pytest.raises(SpecError) as ei:
        lib.load_path(f)
    p = ei.value.problems[0]
    assert (p.line, p.field) == (line, field) and words in p.message, str(p)


def test_validate_reports_the_line_and_accepts_a_good_program(tmp_path, monkeypatch):
    _lib(tmp_path, monkeypatch, "name: p\nkind: program\ncommand: ['{python}', prog.py]\nmodels: [default, big]\n")
    (tmp_path / "orchestrators" / "q.yaml").write_text("name: q\nkind: program\nentry: nowhere_xyz:f\n")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "s.yaml").write_text(
        "name: s\nmodels: {default: sim/p60}\ntasks: [{generator: masbench.depth, values: [1], n: 2}]\n"
        "designs: [cot, p]\n")
    r = CliRunner().invoke(app, ["validate", "--lib", str(tmp_path), str(tmp_path / "orchestrators" / "p.yaml"),
                                 str(tmp_path / "orchestrators" / "q.yaml"), str(tmp_path / "tasks" / "s.yaml")])
    assert r.exit_code == 2
    out = r.output
    assert "ok  " in out and "(design p)" in out
    assert "q.yaml:3:8: entry: module 'nowhere_xyz' not found" in out
    # the suite's models lack an alias the program may call
    assert "s.yaml:4:16: designs[1]: " in out and "program 'p' may call model alias 'big'" in out
