"""The architecture's enforceable promises (docs/architecture.md): the layer map and acyclic
packages (import-linter, the same contracts `.ci/run` runs), small modules, few function-level
imports — each one saying why — and a CLI whose listing matches its commands."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "masbench"
MAX_LINES = 400
MAX_DEFERRED_SHARE = 0.15


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "_library" not in p.parts)


def _internal_imports(path: Path):
    """(node, is_deferred) for every import of a masbench module in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    for n in tree.body:  # `if TYPE_CHECKING:` imports are for annotations only: they run never
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            top |= {id(x) for x in n.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            internal = node.level > 0 or (node.module or "").split(".")[0] == "masbench"
        elif isinstance(node, ast.Import):
            internal = any(a.name.split(".")[0] == "masbench" for a in node.names)
        else:
            continue
        if internal:
            yield node, id(node) not in top


@pytest.mark.slow
def test_long_modules_are_a_printed_review_signal(tmp_path: Path) -> None:
    """Over 400 lines is a signal to look, not a rule to split by size: ``scripts/review_signals.py``
    lists such modules (``make test`` prints it) and never fails."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "short.py").write_text("x = 1\n" * MAX_LINES)
    (pkg / "sub" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (pkg / "longer.py").write_text("x = 1\n" * (MAX_LINES + 50))
    script = PKG.parent / "scripts" / "review_signals.py"
    proc = subprocess.run([sys.executable, str(script), str(pkg)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [ln.split()[2] for ln in lines] == ["longer.py", str(Path("sub") / "long.py")]
    assert "450 lines" in lines[0] and "401 lines" in lines[1]
    assert all("look for a second concept" in ln for ln in lines)
    # a module that says why it is long gets its reason printed instead of the prompt to split
    (pkg / "longer.py").write_text('"""Data.\n\nWhy long: one table\n  of rows.\n"""\n' + "x = 1\n" * (MAX_LINES + 50))
    proc = subprocess.run([sys.executable, str(script), str(pkg)], capture_output=True, text=True, timeout=60)
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("why long: one table of rows.") and "second concept" in lines[1]
    proc = subprocess.run([sys.executable, str(script), str(pkg), "--max-lines", "500"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "no module over 500 lines" in proc.stdout


@pytest.mark.slow
def test_import_linter_contracts_hold() -> None:
    """The layers contract and the acyclic-siblings contract of pyproject.toml (function-level
    imports count: grimp reads every import statement). Runs the real ``lint-imports``."""
    proc = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
                           "--no-cache"], cwd=PKG.parent, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 kept, 0 broken" in proc.stdout


def test_deferred_imports_are_few_and_each_says_why() -> None:
    total = deferred = 0
    silent: list[str] = []
    for p in _modules():
        lines = p.read_text(encoding="utf-8").splitlines()
        for node, is_deferred in _internal_imports(p):
            total += 1
            if not is_deferred:
                continue
            deferred += 1
            here = " ".join(lines[node.lineno - 1:node.end_lineno])
            above = lines[node.lineno - 2] if node.lineno >= 2 else ""
            if "#" not in here and not above.strip().startswith("#"):
                silent.append(f"{p.relative_to(PKG)}:{node.lineno}")
    assert total > 100  # the walk saw the package
    assert deferred / total < MAX_DEFERRED_SHARE, f"{deferred}/{total} internal imports are function-level"
    assert silent == [], f"function-level imports without a comment saying why: {silent}"


def test_cli_listing_matches_the_commands() -> None:
    """Every command a group module registers is in the lazy table, with its docstring's first line."""
    from masbench.cli import COMMANDS, load_all

    group = load_all()
    assert set(group.commands) == set(COMMANDS)
    for name, cmd in group.commands.items():
        first = " ".join((cmd.help or "").strip().split("\n\n")[0].split())
        assert first.startswith(COMMANDS[name].help.rstrip(".")), (name, first, COMMANDS[name].help)
        assert COMMANDS[name].module.startswith("masbench.cli.")


@pytest.mark.parametrize("argv", [["--help"], ["validate", "--help"], ["tasks", "--help"]])
def test_cli_help_runs(argv: list[str]) -> None:
    from typer.testing import CliRunner

    from masbench.cli import app

    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    assert "Usage" in res.output


def test_tests_mirror_the_packages() -> None:
    """Every test folder under tests/ is a package of masbench/ at the same path (``tests/runtime/`` ↔
    ``masbench/runtime/``), so the test of a module is found by its path; ``seams/`` (the public
    registries exercised together from outside) and ``data/`` (fixtures) are the two exceptions."""
    tests = PKG.parent / "tests"
    extra = {"seams", "data"}
    dirs = {p.relative_to(tests) for p in tests.rglob("*") if p.is_dir() and "__pycache__" not in p.parts}
    stray = sorted(str(d) for d in dirs if d.parts[0] not in extra and not (PKG / d / "__init__.py").exists())
    assert stray == [], f"test folders with no package of that path: {stray}"
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), "test file names must be unique (pytest imports them by basename)"
