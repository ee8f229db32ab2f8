"""Harness CPU: N tasks × 3 designs on sim/ models (SIMULATED), single process vs --workers 2 (engines side by side: harness_scale.py).

Prints wall time, CPU time, peak RSS (parent + workers), calls per second, harness µs per call
(CPU of every process of the run, imports included, over the calls it made: on a shared machine
the figure to compare), rows written per second and the speed-up from two workers. Targets (idle
machine): 10,000 tasks × 3 designs under 45 s in one process, under 30 s with ``--workers 2``,
under 1 GB.

    .venv/bin/python benchmarks/harness_cpu.py [--tasks 10000] [--workers 2] [--graph] [--transcripts MODE]

``--graph`` runs every design through langgraph (no straight-line runner, :mod:`masbench.runtime.chain`),
for comparison — in the one-process run only (worker processes start afresh, with the runner on); ``--transcripts none`` records no call transcripts (the suite default is ``full``).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness_scale import SUITE  # noqa: E402  (the same suite: both scripts measure one workload)


def run(tmp: Path, tasks: int, workers: int, graph: bool = False, transcripts: str | None = None) -> dict:
    d = tmp / f"w{workers}"
    (d / "tasks").mkdir(parents=True)
    store = d / "scale.duckdb"
    (d / "tasks" / "scale.yaml").write_text(SUITE.format(half=tasks // 2, store=store))
    extra = ["--transcripts", transcripts] if transcripts else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", (
        "import resource, sys; from masbench.cli import app\n"
        # --graph: every run context asks for langgraph (RunContext.scheduler)
        + ("import functools, masbench.harness.engine_inprocess as e\n"
           "e.RunContext = functools.partial(e.RunContext, scheduler='graph')\n" if graph else "") +
        "try:\n    app()\nexcept SystemExit as e:\n    rc = e.code\nelse:\n    rc = 0\n"
        "print('RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(rc or 0)"), "run", str(d / "tasks" / "scale.yaml"), "--workers", str(workers), *extra],
        capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"run failed:\n{proc.stderr[-3000:]}")
    self_kb, child_kb = [int(x) for x in proc.stderr.split("RSS_KB")[1].split()[:2]]
    con = duckdb.connect(str(store), read_only=True)
    rows = sum(con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
               for t in ("calls", "results", "nodes", "pool", "cot_sc_curve"))
    results = con.execute("SELECT count(*) FROM results").fetchall()[0][0]
    calls = con.execute("SELECT count(*) FROM calls").fetchall()[0][0]
    con.close()
    return {"wall": wall, "cpu": cpu, "rss_mb": self_kb / 1024, "child_rss_mb": child_kb / 1024, "rows": rows,
            "results": results, "calls": calls}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--graph", action="store_true", help="every design through langgraph (no straight-line runner)")
    ap.add_argument("--transcripts", choices=["full", "errors", "none"], default=None,
                    help="override the suite's transcripts mode (default: the suite's, full)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    print(f"harness scale (SIMULATED sim/medium): {a.tasks} tasks × 3 designs (cot, cot-sc[k=3], self-refine)"
          f" + CoT-SC pool k_max=4, cache off{', all designs via langgraph' if a.graph else ''}"
          f"{f', transcripts {a.transcripts}' if a.transcripts else ''}")
    one = run(tmp, a.tasks, 1, a.graph, a.transcripts)
    print(f"  1 process : wall {one['wall']:.1f}s · CPU {one['cpu']:.1f}s · peak RSS {one['rss_mb']:.0f} MB · "
          f"{one['results']} results, {one['calls']} calls → {one['calls'] / one['wall']:,.0f} calls/s, "
          f"{one['cpu'] / one['calls'] * 1e6:,.0f} µs CPU/call · {one['rows']} rows → "
          f"{one['rows'] / one['wall']:,.0f} rows/s")
    many = run(tmp, a.tasks, a.workers, a.graph, a.transcripts)
    print(f"  {a.workers} workers : wall {many['wall']:.1f}s · CPU {many['cpu']:.1f}s · peak RSS parent "
          f"{many['rss_mb']:.0f} MB, largest worker {many['child_rss_mb']:.0f} MB · "
          f"{many['calls'] / many['wall']:,.0f} calls/s, {many['cpu'] / many['calls'] * 1e6:,.0f} µs CPU/call · "
          f"{many['rows']} rows → {many['rows'] / many['wall']:,.0f} rows/s")
    if a.graph:
        print(f"  (--graph applies to the 1-process run only: the {a.workers} workers used the straight-line runner)")
    print(f"  speed-up from --workers {a.workers}: {one['wall'] / many['wall']:.2f}x")
    ok_m = max(one["rss_mb"], many["rss_mb"], many["child_rss_mb"]) < 1024
    verdict = lambda ok: "meets" if ok else "MISSES"  # noqa: E731
    scale = 10_000 / a.tasks

    def at_10k(r: dict) -> str:
        return f"{r['wall']:.0f}s" + (f", ×{scale:g} = {r['wall'] * scale:.0f}s" if scale != 1 else "")
    print(f"  targets (10k tasks, idle machine): 1 process < 45 s {verdict(one['wall'] * scale < 45)} ({at_10k(one)}), "
          f"{a.workers} workers < 30 s {verdict(many['wall'] * scale < 30)} ({at_10k(many)}) · "
          f"< 1 GB: {verdict(ok_m)}")
    print("  (2-core machine; wall and CPU include process start and imports; on a shared machine compare "
          "µs CPU/call; a smaller --tasks is scaled linearly, which start-up makes pessimistic)")


if __name__ == "__main__":
    main()
