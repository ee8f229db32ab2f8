"""Malformed YAML: every case gets FILE:LINE:COL: field: message and exit 2, no traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from masbench.cli import app

GOOD_AGENT = "name: solver\nprompt: |\n  {question}\n  End with Answer: <x>.\n"
GOOD_DESIGN = "name: one\nnodes:\n  solve: {agent: solver}\noutput: solve\n"

# (file, text, expected line, expected field fragment, expected message fragment)
CASES = [
    ("agents/a.yaml", "name: a\nprompt: [unclosed\n", 3, "yaml", ""),
    ("agents/a.yaml", "name: a\n\tprompt: x\n", 2, "yaml", ""),
    ("agents/a.yaml", "name: a\nprompt: x\nprompt: y\n", 3, "yaml", "duplicate key"),
    ("agents/a.yaml", "name: a\npromt: x\n", 2, "promt", "unknown field"),
    ("agents/a.yaml", "name: a\nprompt: x\ntemperature: hot\n", 3, "temperature", "number"),
    ("agents/a.yaml", "name: a\nprompt: x\ntemperature: 5\n", 3, "temperature", "less than or equal"),
    ("agents/a.yaml", "name: a\ndescription: no prompt here\n", 1, "prompt", "required"),
    ("agents/a.yaml", "name: a\nprompt: x\nmax_tokens: -3\n", 3, "max_tokens", "greater than"),
    ("agents/a.yaml", "name: a\nprompt: x\nskills: arithmetic\n", 3, "skills", "list"),
    ("agents/a.yaml", "name: a\nprompt: x\nmodel: {route: hb, lamda: 2}\n", 3, "model", ""),
    ("agents/a.yaml", "name: a\nprompt: x\nanswer: {extract: regexp}\n", 3, "answer.extract", ""),
    ("agents/a.yaml", "name: a b\nprompt: x\n", 1, "name", "pattern"),
    ("agents/a.yaml", "", 1, "<document>", "empty"),
    ("agents/a.yaml", "- name: a\n- prompt: x\n", 1, "<document>", "mapping"),
    ("agents/a.yaml", "name: a\nprompt: x\nmodel:\n  route: hb\n  api_key: sk-123\n", 5, "model", ""),
    ("baselines/d.yaml", "name: d\nnodes:\n  s: {agent: solver, op: majority}\noutput: s\n", 3, "nodes.s", "exactly one"),
    ("baselines/d.yaml", "name: d\nnodes:\n  s: {agent: solver}\n", 1, "output", "required"),
    ("baselines/d.yaml", "name: d\nnodes:\n  s: {agent: nobody}\noutput: s\n", 3, "nodes.s.agent", "unknown agent"),
    ("baselines/d.yaml", "name: d\nnodes:\n  s: {agent: solver, repeat: 3, map: x.y}\noutput: s\n", 3, "nodes.s", "repeat or map"),
    ("baselines/d.yaml", "name: d\nnodes: {}\noutput: s\n", 2, "nodes", "at least 1"),
    ("tasks/s.yaml", "name: s\ntasks: [{generator: g}]\ndesigns: [nope]\nmodels: {default: sim/weak}\n", 3, "designs[0]", "unknown design"),
    ("tasks/s.yaml", "name: s\ntasks:\n  - {generator: g, jsonl: x.jsonl}\ndesigns: [one]\n", 3, "tasks[0]", "exactly one"),
    ("tasks/s.yaml", "name: s\ntasks: [{generator: g}]\ndesigns: [one]\nbudget: {per_task_tokens: -5}\n", 4, "budget.per_task_tokens", "greater than"),
    ("tasks/s.yaml", "name: s\ntasks: [{generator: g}]\ndesigns: [one]\nmodels: {fast: sim/weak}\n", 4, "models", "default"),
    ("tasks/s.yaml", "name: s\ntasks: [{generator: g}]\ndesigns: [one]\nmodels:\n  default: {id: sim/weak, concurency: 3}\n", 5, "models.default", "unknown field"),
    ("tasks/s.yaml", "name: s\ntasks: [{generator: g}]\ndesigns: [one]\nseeds: [0, one]\n", 4, "seeds[1]", "integer"),
]


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "solver.yaml").write_text(GOOD_AGENT)
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines" / "one.yaml").write_text(GOOD_DESIGN)
    (tmp_path / "tasks").mkdir()
    return tmp_path


def test_there_are_enough_cases():
    assert len(CASES) >= 15


@pytest.mark.parametrize("rel,text,line,field,msg", CASES, ids=[f"{i:02d}-{c[3]}" for i, c in enumerate(CASES)])
def test_malformed_yaml_is_pinned_to_file_line_field(lib: Path, rel, text, line, field, msg):
    f = lib / rel
    f.write_text(text)
    res = CliRunner().invoke(app, ["validate", "--lib", str(lib), str(f)])
    assert res.exit_code == 2, res.output
    out = res.output
    assert "Traceback" not in out
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert lines, out
    parsed = []
    for ln in lines:  # every line is FILE:LINE:COL: field: message
        m = re.match(re.escape(str(f)) + r":(\d+):(\d+): ([^:]+): (.+)", ln)
        assert m, ln
        parsed.append((int(m.group(1)), m.group(3), m.group(4)))
    hits = [p for p in parsed if p[0] == line and field in p[1] and msg.lower() in p[2].lower()]
    assert hits, out


def test_non_utf8_file(lib: Path):
    f = lib / "agents" / "bin.yaml"
    f.write_bytes(b"name: a\nprompt: \xff\xfe\n")
    res = CliRunner().invoke(app, ["validate", "--lib", str(lib), str(f)])
    assert res.exit_code == 2 and f"{f}:1:1: yaml: not UTF-8" in res.output


def test_valid_files_exit_zero(lib: Path):
    res = CliRunner().invoke(app, ["validate", "--lib", str(lib), str(lib / "agents"), str(lib / "baselines")])
    assert res.exit_code == 0, res.output
    assert res.output.count("ok ") == 2


def test_debug_flag_is_accepted_and_problems_still_listed(lib: Path):
    f = lib / "agents" / "a.yaml"
    f.write_text("name: a\npromt: x\n")
    res = CliRunner().invoke(app, ["validate", "--debug", "--lib", str(lib), str(f)])
    assert res.exit_code == 2 and f"{f}:2:1: promt:" in res.output
