"""``masbench list``: every kind one line per name with where it comes from — a user file in the
working directory shadowing a bundled one, a ``--lib`` root, the bundled library, registries'
entries and an installed plugin's (read from distribution metadata, not imported)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from clirun import masbench
from masbench.api import LIST_KINDS, available
from masbench.runtime import OPS
from masbench.tools import TOOLS


def lines(out: str) -> dict[tuple[str, str], list[str]]:
    """(kind, name) → the line's other fields."""
    rows = {}
    for ln in out.splitlines():
        parts = ln.split()
        rows[(parts[0], parts[1])] = parts[2:]
    return rows


def test_agents_from_the_working_directory_shadow_bundled_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "solver-copy.yaml").write_text("name: cot-solver\nmodel: default\nprompt: '{question}'\n")
    (tmp_path / "agents" / "mine.yaml").write_text("name: my-solver\nmodel: default\nprompt: '{question}'\n")
    other = tmp_path / "other"
    (other / "tasks").mkdir(parents=True)
    (other / "tasks" / "s.yaml").write_text("name: elsewhere\nmodels: {default: sim/p60}\ntasks: []\ndesigns: []\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MASBENCH_PATH", raising=False)
    out = masbench("list", "agents")
    assert out.returncode == 0
    rows = lines(out.stdout)
    assert rows[("agent", "cot-solver")] == ["working", "directory", "agents/solver-copy.yaml"]  # one line: the winner
    assert rows[("agent", "my-solver")] == ["working", "directory", "agents/mine.yaml"]
    assert rows[("agent", "critic")] == ["bundled", "agents/critic.yaml"]
    assert {k for k, _ in rows} == {"agent"} and len(out.stdout.splitlines()) == len(rows)
    suites = lines(masbench("list", "suites", "--lib", str(other)).stdout)
    assert suites[("suite", "elsewhere")] == ["library", "root", "tasks/s.yaml"]
    assert suites[("suite", "quickstart")] == ["bundled", "tasks/quickstart.yaml"]


def test_models_are_named_by_file_and_code_kinds_by_registry() -> None:
    rows = lines(masbench("list", "models").stdout)
    assert rows[("model", "local-server")] == ["bundled", "models/local-server.yaml"]
    ops = lines(masbench("list", "ops").stdout)
    assert set(n for _, n in ops) == set(OPS.names())
    assert ops[("op", "majority")] == ["bundled", "masbench.runtime.ops.vote:OP"]
    fmts = lines(masbench("list", "formats").stdout)
    assert ("format", "gsm8k") in fmts and ("reader", "jsonl") in fmts


def test_every_kind_lists_something_and_an_unknown_kind_is_refused() -> None:
    everything = available()
    assert {a.kind for a in everything} >= {"agent", "design", "designer", "suite", "model", "op", "format", "reader",
                                            "backend", "scorer", "tool", "function", "generator"}
    for k in LIST_KINDS:
        assert available(k), k
    bad = masbench("list", "nope")
    assert bad.returncode == 2 and "cannot list 'nope'" in bad.stderr


@pytest.fixture
def toy_tool_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    info = tmp_path / "toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[masbench.tools]\ndouble = toyplug_unimported.tools:double\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    TOOLS.rescan()
    yield
    monkeypatch.undo()
    TOOLS.rescan()


def test_an_installed_plugin_is_listed_with_its_distribution(toy_tool_plugin) -> None:
    rows = lines(masbench("list", "tools").stdout)
    assert rows[("tool", "double")] == ["plugin", "toy-plugin", "toyplug_unimported.tools:double"]
    assert rows[("tool", "calculator")] == ["bundled", "masbench.tools.calculator:TOOL"]
    assert "toyplug_unimported" not in sys.modules  # listed, not imported (it does not even exist)
