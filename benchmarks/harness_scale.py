"""Harness scale: N tasks × 3 designs on sim/ models (SIMULATED), on every engine side by side —
one process (``local``), ``--workers W`` (``processes``) and Ray (``--engine ray --workers W``, a
local Ray started by the run) — then the merge alone.

Prints per engine the wall time, the peak RSS of the driver, of its workers (summed, sampled every
0.2 s over the driver's process tree; Ray's own daemons apart), rows and calls written per second
and the harness CPU per call (CPU of the run and of the workers it waited for — not Ray's actors
or daemons — over its calls, imports included: on a shared machine the figure to compare); then
the merge rate (a run's store merged into an empty one as a part, the driver's work at the end of
a sharded run) and the store's bytes per call (a part's size). Targets: 10,000 tasks × 3 designs
under 60 s and 1 GB; Ray within 1.3× of ``--workers 2``; merge ≥ 200k rows/s.

    .venv/bin/python benchmarks/harness_scale.py [--tasks 10000] [--workers 2] [--engines local,processes,ray]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
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

ROW_TABLES = ("calls", "results", "nodes", "pool", "cot_sc_curve", "call_messages", "texts")
RAY_DAEMONS = ("gcs_server", "raylet", "plasma", "log_monitor", "monitor", "dashboard", "runtime_env", "ray_client")


class TreeSampler:
    """Peak RSS of a process and of its descendants (workers vs Ray daemons), sampled in a thread."""

    def __init__(self, pid: int, every_s: float = 0.2):
        import psutil

        self.root = psutil.Process(pid)
        self.every_s = every_s
        self.peak = {"driver": 0, "workers": 0, "daemons": 0}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                now = {"driver": self.root.memory_info().rss, "workers": 0, "daemons": 0}
                for p in self.root.children(recursive=True):
                    try:
                        line = " ".join(p.cmdline())
                        kind = "daemons" if any(d in line for d in RAY_DAEMONS) else "workers"
                        now[kind] += p.memory_info().rss
                    except psutil.Error:
                        continue
            except psutil.Error:
                break
            for k, v in now.items():
                self.peak[k] = max(self.peak[k], v)
            time.sleep(self.every_s)

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._t.join()
        return {k: v / 2**20 for k, v in self.peak.items()}


def run(tmp: Path, tasks: int, engine: str, workers: int) -> dict:
    d = tmp / engine
    (d / "tasks").mkdir(parents=True)
    store = d / "scale.duckdb"
    (d / "tasks" / "scale.yaml").write_text(SUITE.format(half=tasks // 2, store=store))
    args = ["run", str(d / "tasks" / "scale.yaml"), "--engine", engine]
    if engine != "local":
        args += ["--workers", str(workers)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "masbench.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the run and the workers it waited for
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    mem = sampler.stop()
    if proc.returncode != 0:
        raise SystemExit(f"{engine} run failed:\n{err[-3000:]}")
    con = duckdb.connect(str(store), read_only=True)
    rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in ROW_TABLES}
    con.close()
    return {"wall": wall, "cpu": cpu, "mem": mem, "rows": sum(rows.values()), "calls": rows["calls"], "results": rows["results"],
            "store": store, "bytes": store.stat().st_size}


def merge_rate(store: Path, tmp: Path) -> tuple[float, int]:
    """Seconds to merge ``store`` as one part into an empty store, and the rows merged."""
    from masbench.store import Store, merge_into

    target = Store(tmp / "merge-target.duckdb")
    t0 = time.perf_counter()
    counts = merge_into(target, store)
    dt = time.perf_counter() - t0
    target.close()
    return dt, sum(counts.values())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--engines", default="local,processes,ray")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    load = os.getloadavg()
    print(f"harness scale (SIMULATED sim/medium): {a.tasks} tasks × 3 designs (cot, cot-sc[k=3], self-refine)"
          f" + CoT-SC pool k_max=4, cache off · load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on "
          f"{os.cpu_count()} CPUs")
    res = {}
    for engine in a.engines.split(","):
        r = res[engine] = run(tmp, a.tasks, engine, a.workers)
        m = r["mem"]
        label = {"local": "1 process", "processes": f"--workers {a.workers}", "ray": f"ray, {a.workers} workers"}[engine]
        daemons = f" · Ray daemons {m['daemons']:.0f} MB" if engine == "ray" else ""
        print(f"  {label:<17}: wall {r['wall']:6.1f}s · peak RSS driver {m['driver']:.0f} MB, workers "
              f"{m['workers']:.0f} MB{daemons} · {r['results']} results, {r['calls']} calls, {r['rows']} rows → "
              f"{r['rows'] / r['wall']:,.0f} rows/s · {r['calls'] / r['wall']:,.0f} calls/s, harness "
              f"{r['cpu'] / max(r['calls'], 1) * 1e6:,.0f} µs CPU/call")
    if "ray" in res and "processes" in res:
        ratio = res["ray"]["wall"] / res["processes"]["wall"]
        print(f"  ray / --workers {a.workers} wall: {ratio:.2f}x (goal ≤ 1.3x: {'meets' if ratio <= 1.3 else 'MISSES'})")
    any_run = next(iter(res.values()))
    dt, n = merge_rate(any_run["store"], tmp)
    print(f"  merge: {n:,} rows in {dt:.2f}s → {n / dt:,.0f} rows/s (goal ≥ 200k: {'meets' if n / dt >= 200_000 else 'MISSES'})"
          f" · store {any_run['bytes'] / 2**20:.1f} MB = {any_run['bytes'] / max(any_run['calls'], 1):,.0f} bytes per call")
    print("  (wall times include process start, imports and, for ray, starting a local Ray; a shared machine)")


if __name__ == "__main__":
    main()
