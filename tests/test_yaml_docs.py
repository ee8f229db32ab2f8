"""docs/yaml.md's reference half is generated from the specs (scripts/gen_yaml_docs.py): it must
be fresh, and every field of every YAML kind — walked here from the JSON Schema independently of
the generator — must have a docstring and a row under its object's heading; every registered
node op and ``python:`` function must be listed."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from masbench.runtime.ops import OPS
from masbench.runtime.pyfuncs import PYTHON_FUNCS
from masbench.spec import KINDS, json_schema

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "yaml.md"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_yaml_docs", ROOT / "scripts" / "gen_yaml_docs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_yaml_docs"] = mod
    spec.loader.exec_module(mod)
    return mod


def _objects() -> dict[str, dict]:
    """Every object schema of every kind: the kind's own (under its kind name) and its ``$defs``."""
    out: dict[str, dict] = {}
    kinds = {KINDS[k].__name__ for k in KINDS.names()}
    for kind in KINDS.names():
        schema = json_schema(kind)
        out[kind] = schema
        for name, sub in schema.get("$defs", {}).items():
            if sub.get("type") == "object" and name not in kinds:  # a kind's own class: under its kind
                out.setdefault(name, sub)
    return out


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^#{{3,4}} {re.escape(heading)}\n(.*?)(?=^#{{2,4}} |\Z)", text, re.M | re.S)
    assert m, f"docs/yaml.md has no section `{heading}`"
    return m.group(1)


def test_the_generated_reference_is_fresh():
    gen = _generator()
    _head, tail = gen.split(DOC.read_text())
    assert tail == gen.render(), "docs/yaml.md is stale: run .venv/bin/python scripts/gen_yaml_docs.py"


def test_check_mode_fails_on_a_stale_page(tmp_path, monkeypatch, capsys):
    gen = _generator()
    stale = tmp_path / "yaml.md"
    stale.write_text(DOC.read_text().replace("| `map` |", "| `mapp` |"))
    monkeypatch.setattr(gen, "DOC", stale)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    assert gen.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0
    assert stale.read_text() == DOC.read_text()


@pytest.mark.parametrize("name", sorted(_objects()))
def test_every_field_has_a_docstring_and_a_row(name):
    schema = _objects()[name]
    section = _section(DOC.read_text(), name)
    for field, prop in schema.get("properties", {}).items():
        assert (prop.get("description") or "").strip(), f"{name}.{field} has no docstring"
        assert re.search(rf"^\| `{re.escape(field)}` \|", section, re.M), f"docs/yaml.md: no row for {name}.{field}"


def test_every_op_and_python_function_is_listed():
    text = DOC.read_text()
    ops = _section(text.replace("## Reference: node ops", "### ops"), "ops")
    for kind in OPS.names():
        assert f"| `{kind}` |" in ops, f"op {kind} is not in docs/yaml.md"
    funcs = _section(text.replace("## Reference: `python:` functions", "### funcs"), "funcs")
    for name in PYTHON_FUNCS.names():
        assert f"| `{name}` |" in funcs, f"python function {name} is not in docs/yaml.md"
