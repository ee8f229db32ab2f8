"""Where the test suite's CPU goes, and the wall time it cannot beat on this many cores.

Runs pytest as `make test` runs its xdist part (``-n 2 -m "not waits"`` by default) with a small
plugin (benchmarks/plugins/cpu_plugin.py) that records every test's own CPU, the CPU of the
subprocesses it waited for, and its wall time; the CPU of the whole process tree comes from
``os.wait4`` on pytest. Prints:

- the wall time, the tree's CPU and the floor it implies: CPU / cores, the wall time if every core
  were busy all the time (what no scheduling of these tests can beat without making them cheaper);
- the CPU in tests, by kind (markers ``embedded``, ``slow``, the rest), and outside them (start-up,
  collection, processes nobody waits for such as Ray's);
- the largest modules and tests by CPU, and the tests that mostly wait (wall far above CPU).

Figures depend on the machine's load and speed (this VM's speed swings ~30% by the hour): the load
is printed; compare runs made back to back.

    .venv/bin/python benchmarks/suite_cpu.py [--workers 2] [--marks "not waits"] [--top 15] [-- PYTEST-ARGS...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict, deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = Path(__file__).resolve().parent / "plugins"


def run(workers: str, marks: str, extra: list[str], out: Path) -> tuple[int, float, float, float]:
    """Run pytest; (exit code, wall s, user CPU s, system CPU s of its process tree)."""
    env = {**os.environ, "MASBENCH_TEST_CPU_DIR": str(out),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as `make test`: bytecode caches on
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "cpu_plugin",
           "-n", workers, "-m", marks, *extra]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    tail = deque((line.rstrip() for line in proc.stdout), maxlen=3)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    print("\n".join(tail))
    return os.waitstatus_to_exitcode(status), wall, usage.ru_utime, usage.ru_stime


Test = tuple[str, str, float, float, float]
"""One plugin line: nodeid, kind, own CPU s, waited-for subprocesses' CPU s, wall s."""


def summary(tests: list[Test], wall: float, user: float, sys_: float, cores: int, top: int) -> list[str]:
    """The printed figures: the tree's CPU (``user`` + ``sys_``) and its floor on ``cores``, the CPU
    in and outside tests, by kind, and the ``top`` modules, tests and waiting tests."""
    tree = user + sys_
    in_tests = sum(own + kids for _, _, own, kids, _ in tests)
    out = [f"CPU of the process tree: {tree:.0f} core-s (user {user:.0f}, system {sys_:.0f}) = "
           f"{tree / wall / cores:.0%} of {cores} cores over the wall time",
           f"floor: {tree / cores:.0f} s = that CPU spread over {cores} cores with none idle",
           f"in tests: {in_tests:.0f} core-s (own {sum(t[2] for t in tests):.0f}, waited-for subprocesses "
           f"{sum(t[3] for t in tests):.0f}); outside tests (start-up, collection, Ray's and other unwaited "
           f"processes): {tree - in_tests:.0f}"]
    by_kind: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    by_module: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for nodeid, kind, own, kids, w in tests:
        for acc in (by_kind[kind], by_module[nodeid.split("::")[0]]):
            acc[0] += own + kids
            acc[1] += w
            acc[2] += 1
    for kind, (cpu, w, n) in sorted(by_kind.items(), key=lambda kv: -kv[1][0]):
        out.append(f"  {kind:9} {n:5.0f} tests  {cpu:6.0f} core-s  ({w:.0f} s of wall)")
    out.append("\nlargest modules by CPU (core-s, wall s):")
    out += [f"  {cpu:6.1f} {w:6.1f}  {mod}" for mod, (cpu, w, _) in sorted(by_module.items(), key=lambda kv: -kv[1][0])[:top]]
    out.append("\nlargest tests by CPU (core-s, wall s):")
    out += [f"  {own + kids:6.1f} {w:6.1f}  {nodeid}" for nodeid, _, own, kids, w in sorted(tests, key=lambda t: -(t[2] + t[3]))[:top]]
    out.append("\nmostly waiting (wall − CPU, s):")
    out += [f"  {w - own - kids:6.1f}  {nodeid}" for nodeid, _, own, kids, w in sorted(tests, key=lambda t: -(t[4] - t[2] - t[3]))[:top]
            if w - own - kids >= 1]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", default="2", help="pytest-xdist workers (-n), as make test: 2 on 2 cores")
    ap.add_argument("--marks", default="not waits", help="the -m expression (make test's xdist part by default)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="cores the floor is computed for")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = ap.parse_args()

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory() as d:
        rc, wall, user, sys_ = run(args.workers, args.marks, args.pytest_args, Path(d))
        rows = [line.rstrip("\n").split("\t") for f in sorted(Path(d).glob("*.tsv"))
                for line in f.read_text().splitlines() if line]
    tests = [(nodeid, kind, float(own), float(kids), float(w)) for nodeid, kind, own, kids, w in rows]
    print(f"\npytest -n {args.workers} -m {args.marks!r}: exit {rc}, {len(tests)} tests, wall {wall:.0f} s "
          f"(load at the start {load}, at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print("\n".join(summary(tests, wall, user, sys_, args.cores, args.top)))
    sys.exit(rc)


if __name__ == "__main__":
    main()
