"""The distribution installs as a user installs it: ``uv build`` makes a wheel named for the
distribution (``masbench-eval``: ``masbench`` on the package index is another project), a fresh
virtual environment takes it with its dependencies, and from there — no checkout on the path, an
empty working directory — ``masbench --help`` runs and a simulated run of the bundled quickstart
suite writes its store. The installed metadata carries the name and version the code reads."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import duckdb
import pytest

import masbench
from venvs import ROOT, build_wheel, clean_env, fresh_venv


def test_the_distribution_name_is_ours_everywhere_it_is_installed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == masbench.DISTRIBUTION == "masbench-eval"
    assert project["version"] == masbench.__version__
    # every install hint in the code and the docs names the distribution, never the other project
    bad = []
    for p in [*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md"), *(ROOT / "masbench").rglob("*.py"),
              *(ROOT / "tasks").glob("*.yaml")]:
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
            if re.search(r"pip install[^`\n]*?(?<![\w-])['\"]?masbench(\[|['\"`\s]|$)", line):
                bad.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert bad == []


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_environment_and_runs_a_suite(tmp_path: Path) -> None:
    wheel = build_wheel(ROOT, tmp_path / "dist")
    assert wheel.name == f"masbench_eval-{masbench.__version__}-py3-none-any.whl"
    bin_ = fresh_venv(tmp_path / "venv", wheel)
    work = tmp_path / "empty"
    work.mkdir()
    env = clean_env(COLUMNS="200")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*argv], cwd=work, env=env, capture_output=True, text=True, timeout=600)

    helped = run(str(bin_ / "masbench"), "--help")
    assert helped.returncode == 0 and "Usage: masbench" in helped.stdout and "list" in helped.stdout
    where = run(str(bin_ / "python"), "-c", "import importlib.metadata as m, masbench; "
                "print(masbench.__file__); print(m.version('masbench-eval'))")
    installed, version = where.stdout.split()
    assert installed.startswith(str(tmp_path / "venv")) and version == masbench.__version__  # not this checkout
    ran = run(str(bin_ / "masbench"), "run", "quickstart", "--model", "default=sim/p60", "--limit", "2",
              "--store", "runs/q.duckdb")
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "SIMULATED" in ran.stderr
    run_id = ran.stdout.strip().splitlines()[-1]
    con = duckdb.connect(str(work / "runs" / "q.duckdb"), read_only=True)
    try:
        designs = con.execute("SELECT design, count(*), bool_and(simulated) FROM results WHERE run_id = ? "
                              "GROUP BY design ORDER BY design", [run_id]).fetchall()
        version_row = con.execute("SELECT masbench_version FROM runs WHERE run_id = ?", [run_id]).fetchall()
    finally:
        con.close()
    # the bundled suite (inside the wheel): 2 sources × --limit 2 tasks, its three designs
    assert designs == [("cot", 4, True), ("debate-tiny", 4, True), ("expression-calculator", 4, True)]
    assert version_row == [(masbench.__version__,)]
