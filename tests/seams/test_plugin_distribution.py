"""Plugins by entry point, installed as a user installs them: a toy distribution
(tests/data/toy_plugin: one op, reader, format, backend, scorer, tool, python function and generator,
each an entry point) is built and installed beside a wheel of masbench into a fresh virtual
environment; there, with no import in anyone's code, ``masbench validate`` accepts a suite that uses
every one of them, ``masbench list`` shows them as the plugin's, and ``masbench run`` runs it. A
second distribution that declares a bundled op's name makes ``masbench run`` stop with exit 2 and a
line naming both. The store's rows are checked against values worked out here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from venvs import ROOT, build_wheel, clean_env, fresh_venv

pytestmark = pytest.mark.slow  # wheels, a virtual environment and subprocesses

PLUGIN = ROOT / "tests" / "data" / "toy_plugin"
PAIRS = [(3, 4), (10, 7), (21, 21)]
GENERATED = 2


def world(root: Path) -> Path:
    for d in ("agents", "orchestrators", "tasks", "data"):
        (root / d).mkdir(parents=True)
    (root / "data" / "pairs.txt").write_text("".join(f"{a} {b}\n" for a, b in PAIRS))
    (root / "agents" / "guesser.yaml").write_text(
        "name: guesser\nmodel: toy\nprompt: |\n  {question}\n  End with \"Answer: <n>\".\nmax_tokens: 16\n")
    (root / "agents" / "adder.yaml").write_text(
        "name: adder\nmodel: toy\nprompt: \"{question}\"\ntools: [toy_add]\ntool_mode: text\nmax_tokens: 32\n"
        "answer: {extract: final}\n")
    (root / "orchestrators" / "fixup.yaml").write_text(
        "name: fixup\nnodes:\n  guess: {agent: guesser}\n  fix: {kind: plus, from: guess, params: {add: 1}}\n"
        "  final: {python: toy_int, from: fix}\noutput: final\n")
    (root / "orchestrators" / "tooled.yaml").write_text(
        "name: tooled\nnodes:\n  solve: {kind: react, agent: adder, params: {max_steps: 3}}\noutput: solve\n")
    (root / "tasks" / "plugged.yaml").write_text(
        "name: plugged\nmodels:\n  default: sim/p60\n"
        "  toy: {id: offbyone/v1, input_usd_per_mtok: 2.0, output_usd_per_mtok: 8.0}\n"
        "tasks:\n  - {reader: toy-pairs, path: ../data/pairs.txt, format: toy-sums}\n"
        f"  - {{generator: toy.pairs, n: {GENERATED}, seed: 1}}\n"
        "designs: [cot, fixup, tooled]\ncot_sc: {k_max: 2, bootstrap: 50}\nbudget: {per_task_tokens: 20000}\n"
        "cache: false\nstore: runs/plugged.duckdb\n")
    return root


def test_an_installed_plugin_works_in_validate_list_and_run(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    masbench_wheel = build_wheel(ROOT, wheels / "masbench")
    plugin_wheel = build_wheel(PLUGIN, wheels / "plugin")
    bin_ = fresh_venv(tmp_path / "venv", masbench_wheel, plugin_wheel)
    w = world(tmp_path / "work")
    env = clean_env(COLUMNS="200")

    def masbench(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(bin_ / "masbench"), *args], cwd=w, env=env, capture_output=True, text=True,
                              timeout=600)

    ok = masbench("validate", "agents", "orchestrators", "tasks")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.count("ok  ") == 5
    listed = {(ln.split()[0], ln.split()[1]): " ".join(ln.split()[2:]) for ln in masbench("list").stdout.splitlines()}
    plugin = "plugin toy-masbench-plugin toy_masbench_plugin:"
    for kind, name, attr in [("op", "plus", "PLUS"), ("reader", "toy-pairs", "read_pairs"),
                             ("format", "toy-sums", "sums_format"), ("backend", "offbyone", "OffByOne"),
                             ("scorer", "toy-int", "int_scorer"), ("tool", "toy_add", "toy_add"),
                             ("function", "toy_int", "as_int"), ("generator", "toy.pairs", "pair_tasks")]:
        assert listed[(kind, name)] == plugin + attr, (kind, name)
    assert listed[("op", "majority")].startswith("bundled") and listed[("agent", "adder")].startswith("working")

    run = masbench("run", "plugged")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    run_id = run.stdout.strip().splitlines()[-1]
    con = duckdb.connect(str(w / "runs" / "plugged.duckdb"), read_only=True)

    def q(sql: str) -> list[tuple]:
        return con.execute(sql, [run_id]).fetchall()

    golds = {f"toy-sums-{i}": str(a + b) for i, (a, b) in enumerate(PAIRS, start=1)}
    res = {(d, t): (ans, gold, ok) for d, t, ans, gold, ok in
           q("SELECT design, task_id, answer, gold, correct FROM results WHERE run_id = ? AND status = 'ok'")}
    sources = {t.rsplit("-", 1)[0] for _d, t in res}
    assert sources == {"toy-sums", "toy.pairs"}  # the plugin's reader + format, and its generator
    n_tasks = len(PAIRS) + GENERATED
    for design in ("fixup", "tooled"):  # the op + python function fix the guess; the tool computes the sum
        got = {t: v for (d, t), v in res.items() if d == design}
        assert len(got) == n_tasks and all(ok is True and ans == gold for ans, gold, ok in got.values()), design
        assert all(got[t][1] == g for t, g in golds.items())  # the format's gold, scored by the plugin's scorer
    nodes = q("SELECT op, count(*), count(DISTINCT task_id) FROM nodes WHERE run_id = ? AND design = 'fixup' "
              "GROUP BY op ORDER BY op")
    assert nodes == [("agent", n_tasks, n_tasks), ("plus", n_tasks, n_tasks), ("python", n_tasks, n_tasks)]
    tools = q("SELECT tool, status, count(*) FROM tool_calls WHERE run_id = ? GROUP BY ALL")
    assert tools == [("toy_add", "ok", n_tasks)]
    toy_calls = q("SELECT design, count(*), bool_or(simulated) FROM calls WHERE run_id = ? AND model = 'offbyone/v1' "
                  "GROUP BY design ORDER BY design")
    assert toy_calls == [("fixup", n_tasks, False), ("tooled", 2 * n_tasks, False)]  # the tool round trip: 2 calls
    con.close()

    # a second plugin takes a bundled op's name: the run stops before it starts, naming both
    conflict = tmp_path / "conflict"
    (conflict / "toy_conflict").mkdir(parents=True)
    (conflict / "toy_conflict" / "__init__.py").write_text("OP = None\n")
    (conflict / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling>=1.25"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "toy-conflict"\nversion = "0.1.0"\n'
        '[project.entry-points."masbench.ops"]\nmajority = "toy_conflict:OP"\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["toy_conflict"]\n')
    fresh_venv_add(tmp_path / "venv", build_wheel(conflict, wheels / "conflict"))
    shutil.rmtree(w / "runs")
    bad = masbench("run", "plugged")
    assert bad.returncode == 2, bad.stdout[-2000:] + bad.stderr[-2000:]
    assert ("op 'majority' of plugin toy-conflict (toy_conflict:OP) conflicts with the bundled op 'majority' "
            "(masbench.runtime.ops.vote:OP)") in " ".join(bad.stderr.split())


def fresh_venv_add(venv: Path, wheel: Path) -> None:
    """Install one more distribution (alone) into an environment :func:`fresh_venv` made."""
    from venvs import UV

    proc = subprocess.run([str(UV), "pip", "install", "--quiet", "--no-deps", "--python", str(venv / "bin" / "python"),
                           str(wheel)], capture_output=True, text=True, env=clean_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
