"""Harness scale: N tasks × 3 designs on sim/ models (SIMULATED), single process vs --workers 2.

Prints wall time, peak RSS (parent + workers), rows written per second and the speed-up from two
workers. Target: 10,000 tasks × 3 designs under 60 s and under 1 GB.

    .venv/bin/python benchmarks/harness_scale.py [--tasks 10000] [--workers 2]
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

SUITE = """name: scale
description: SIMULATED scale benchmark
models: {{default: sim/medium}}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: {half}, seed: 0}}
designs: [cot, {{design: cot-sc, params: {{k: 3}}}}, self-refine]
cot_sc: {{k_max: 4, bootstrap: 200}}
concurrency: 256
cache: false
store: {store}
"""


def run(tmp: Path, tasks: int, workers: int) -> dict:
    d = tmp / f"w{workers}"
    (d / "tasks").mkdir(parents=True)
    store = d / "scale.duckdb"
    (d / "tasks" / "scale.yaml").write_text(SUITE.format(half=tasks // 2, store=store))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", (
        "import resource, sys; from masbench.cli import app\n"
        "try:\n    app()\nexcept SystemExit as e:\n    rc = e.code\nelse:\n    rc = 0\n"
        "print('RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(rc or 0)"), "run", str(d / "tasks" / "scale.yaml"), "--workers", str(workers)],
        capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"run failed:\n{proc.stderr[-3000:]}")
    self_kb, child_kb = [int(x) for x in proc.stderr.split("RSS_KB")[1].split()[:2]]
    con = duckdb.connect(str(store), read_only=True)
    rows = sum(con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
               for t in ("calls", "results", "nodes", "pool", "cot_sc_curve"))
    results = con.execute("SELECT count(*) FROM results").fetchall()[0][0]
    calls = con.execute("SELECT count(*) FROM calls").fetchall()[0][0]
    con.close()
    return {"wall": wall, "rss_mb": self_kb / 1024, "child_rss_mb": child_kb / 1024, "rows": rows,
            "results": results, "calls": calls}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    print(f"harness scale (SIMULATED sim/medium): {a.tasks} tasks × 3 designs (cot, cot-sc[k=3], self-refine)"
          f" + CoT-SC pool k_max=4, cache off")
    one = run(tmp, a.tasks, 1)
    print(f"  1 process : wall {one['wall']:.1f}s · peak RSS {one['rss_mb']:.0f} MB · {one['results']} results, "
          f"{one['calls']} calls, {one['rows']} rows → {one['rows'] / one['wall']:,.0f} rows/s")
    many = run(tmp, a.tasks, a.workers)
    print(f"  {a.workers} workers : wall {many['wall']:.1f}s · peak RSS parent {many['rss_mb']:.0f} MB, largest worker "
          f"{many['child_rss_mb']:.0f} MB · {many['rows']} rows → {many['rows'] / many['wall']:,.0f} rows/s")
    print(f"  speed-up from --workers {a.workers}: {one['wall'] / many['wall']:.2f}x")
    ok_m = max(one["rss_mb"], many["rss_mb"], many["child_rss_mb"]) < 1024
    verdict = lambda ok: "meets" if ok else "MISSES"  # noqa: E731
    print(f"  target < 60 s: 1 process {verdict(one['wall'] < 60)} ({one['wall']:.0f}s), {a.workers} workers "
          f"{verdict(many['wall'] < 60)} ({many['wall']:.0f}s) · target < 1 GB: {verdict(ok_m)}")
    print("  (2-core machine; wall times include process start and imports)")


if __name__ == "__main__":
    main()
