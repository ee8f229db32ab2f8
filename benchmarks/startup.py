"""Start-up CPU of the command line: what a command costs before it does anything.

Measures, as CPU seconds (user + system) from process start, the median of ``--repeat`` runs:

- ``masbench validate tasks/quickstart.yaml`` — the whole command;
- ``masbench run tasks/quickstart.yaml --model default=sim/medium --limit 1`` (SIMULATED) — the CPU
  at its **first model call** (read inside the process when the simulator is first asked: a
  wrapper hooks ``SimBackend.__call__`` as its module loads, importing nothing ahead of the
  command), and the whole command;

then, per command, whether litellm, langgraph, pandas, pyarrow, matplotlib, numpy and rich were imported, and the
``python -X importtime`` entries that remain: the largest top-level imports (cumulative) and the
largest single modules (self time). ``--before DIR`` measures a second checkout (another
worktree of the repository, e.g. the commit before a change) the same way, side by side.

CPU seconds are steadier than wall time on a shared machine but still move with its load (cache
misses, frequency): the load average is printed; compare trees measured in one run.

    .venv/bin/python benchmarks/startup.py [--before DIR] [--repeat 5] [--top 12] [--json FILE]

``--json FILE`` also writes the figures (each tree's medians and every run, the load before and
after, the date and each tree's commit) to FILE, e.g. ``benchmarks/results/startup.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = "tasks/quickstart.yaml"
WATCHED = ("litellm", "langgraph", "pandas", "pyarrow", "matplotlib", "openai", "networkx", "numpy", "rich")

# Runs the command line in this process; when masbench.llm.sim_backend is loaded, its SimBackend's
# __call__ is wrapped to write the CPU seconds at the first call (and the watched packages then
# imported) to the file named by the first argument. Nothing masbench is imported ahead of the command.
HOOK = textwrap.dedent("""
    import importlib.abc, importlib.util, os, sys, time
    out, argv = sys.argv[1], sys.argv[2:]
    WATCHED = %r

    def wrap(mod):
        cls = mod.SimBackend
        call = cls.__call__
        state = {"done": False}

        async def first(self, a):
            if not state["done"]:
                state["done"] = True
                t = os.times()
                seen = ",".join(w for w in WATCHED if w in sys.modules)
                with open(out, "w") as f:
                    f.write(f"{t.user + t.system} {seen}")
            return await call(self, a)

        cls.__call__ = first

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "masbench.llm.sim_backend":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            loader = spec.loader
            run = loader.exec_module

            def exec_module(module):
                run(module)
                wrap(module)

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Finder())
    sys.argv = ["masbench", *argv]
    from masbench.cli import app
    app()
""") % (WATCHED,)


def cpu_of(cmd: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, str]:
    """CPU seconds (user + system) of one process run to its end in ``cwd``, and its stderr. ``-m``
    and ``-c`` put the working directory first on the path: a tree is measured from its own root."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err[-2000:]}")
    return usage.ru_utime + usage.ru_stime, err


def env_for(tree: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def validate_cmd() -> list[str]:
    return [sys.executable, "-m", "masbench.cli", "validate", SUITE]


def run_args(store: Path) -> list[str]:
    return ["run", SUITE, "--model", "default=sim/medium", "--limit", "1", "--store", str(store), "--new"]


def measure(tree: Path, repeat: int) -> dict:
    """Median CPU seconds of validate, of run at its first call and of the whole run; the watched
    packages imported at the first call."""
    env = env_for(tree)
    validate, first, whole, seen = [], [], [], ""
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            validate.append(cpu_of(validate_cmd(), env, tree)[0])
            mark = Path(tmp) / f"first-{i}"
            cmd = [sys.executable, "-c", HOOK, str(mark), *run_args(Path(tmp) / f"s{i}.duckdb")]
            whole.append(cpu_of(cmd, env, tree)[0])
            at, _, seen = mark.read_text().partition(" ")
            first.append(float(at))
    return {"validate": statistics.median(validate), "first": statistics.median(first),
            "whole": statistics.median(whole), "seen": seen,
            "runs": {"validate": validate, "first": first, "whole": whole}}


def importtime(tree: Path, args: list[str]) -> list[tuple[str, int, int, int]]:
    """``-X importtime`` of ``masbench ARGS``: (module, self µs, cumulative µs, depth) per import."""
    _, err = cpu_of([sys.executable, "-X", "importtime", "-m", "masbench.cli", *args], env_for(tree), tree)
    rows = []
    for line in err.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            rows.append((m.group(4), int(m.group(1)), int(m.group(2)), (len(m.group(3)) - 1) // 2))
    return rows


def show_importtime(label: str, rows: list[tuple[str, int, int, int]], top: int) -> None:
    total = sum(r[1] for r in rows)
    watched = [w for w in WATCHED if any(r[0] == w for r in rows)]
    print(f"  {label}: {len(rows)} modules, {total / 1e6:.2f} s of import (importtime's own clock, inflated by "
          f"its timing) · imported: {', '.join(watched) or 'none of ' + ', '.join(WATCHED)}")
    tops = sorted((r for r in rows if r[3] == 0), key=lambda r: -r[2])[:top]
    print("    top-level imports (cumulative ms): " + ", ".join(f"{n} {c / 1e3:.0f}" for n, _, c, _ in tops))
    selfs = sorted(rows, key=lambda r: -r[1])[:top]
    print("    largest modules (self ms): " + ", ".join(f"{n} {s / 1e3:.0f}" for n, s, _, _ in selfs))


def _commit(tree: Path) -> str | None:
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, help="another checkout to measure the same way (printed first)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--json", type=Path, help="also write the figures here (JSON)")
    a = ap.parse_args()
    load = os.getloadavg()
    print(f"start-up CPU (user + system s from process start, median of {a.repeat}) · load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs")
    trees = ([("before", a.before.resolve())] if a.before else []) + [("this tree", ROOT)]
    measured = {}
    for label, tree in trees:
        r = measured[label] = measure(tree, a.repeat)
        print(f"  {label:<9} ({tree}): validate {r['validate']:.2f} s · run (SIMULATED, 1 task) at its first call "
              f"{r['first']:.2f} s, whole {r['whole']:.2f} s (goal ≤ 0.5 s: validate "
              f"{'meets' if r['validate'] <= 0.5 else 'MISSES'}, first call {'meets' if r['first'] <= 0.5 else 'MISSES'})"
              f" · imported at the first call: {r['seen'] or 'none of the watched'}", flush=True)
    print("importtime of this tree:")
    show_importtime("validate", importtime(ROOT, ["validate", SUITE]), a.top)
    with tempfile.TemporaryDirectory() as tmp:
        show_importtime("run (whole command)", importtime(ROOT, run_args(Path(tmp) / "s.duckdb")), a.top)
    after = os.getloadavg()
    print(f"load average after: {after[0]:.1f}")
    if a.json:
        doc = {"what": "CPU seconds (user + system) from process start, median of the runs: masbench validate "
                       f"{SUITE}; masbench run {SUITE} on the simulator (--limit 1) at its first model call, "
                       "and whole", "date": datetime.datetime.now().isoformat(timespec="minutes"),
               "cpus": os.cpu_count(), "repeat": a.repeat, "load_before": [round(x, 1) for x in load],
               "load_after": [round(x, 1) for x in after], "goal_s": 0.5,
               "trees": {label: {"tree": str(tree), "commit": _commit(tree), **measured[label]} for label, tree in trees}}
        a.json.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
