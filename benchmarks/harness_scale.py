"""Harness scale: N tasks × 3 designs on sim/ models (SIMULATED), on every engine side by side —
one process (``local``), ``--workers W`` (``processes``) and Ray in both modes (``--engine ray
--ray-mode tasks|actors --workers W``, a local Ray started by the run) — then the merge alone, and
optionally a larger run (``--big 100000``) on the fastest engine of the side-by-side.

Prints per engine the wall time, the CPU seconds of the driver and its workers, the peak RSS of the
driver, of its workers (summed, sampled every 0.2 s over the driver's process tree; Ray's own
daemons apart) and rows written per second; then the merge rate (a run's store merged into an
empty one as a part — the driver's work at the end of a sharded run — three times: the median wall
and CPU rates) and the store's bytes per call (a part's size). Targets: 10,000 tasks × 3 designs
under 60 s and 1 GB; Ray within 1.3× of ``--workers 2``; merge ≥ 200k rows/s.

    .venv/bin/python benchmarks/harness_scale.py [--tasks 10000] [--workers 2]
        [--engines local,processes,ray:tasks,ray:actors] [--big 100000]
"""

from __future__ import annotations

import argparse
import os
import statistics
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
    """Peak RSS of a process and of its descendants (workers vs Ray daemons), sampled in a thread;
    and the CPU seconds each group used (a process's last sample: those ended between samples are
    undercounted by at most 0.2 s of their CPU)."""

    def __init__(self, pid: int, every_s: float = 0.2):
        import psutil

        self.root = psutil.Process(pid)
        self.every_s = every_s
        self.peak = {"driver": 0, "workers": 0, "daemons": 0}
        self.cpu: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                now = {"driver": self.root.memory_info().rss, "workers": 0, "daemons": 0}
                t = self.root.cpu_times()
                self.cpu[self.root.pid] = ("driver", t.user + t.system)
                for p in self.root.children(recursive=True):
                    try:
                        line = " ".join(p.cmdline())
                        kind = "daemons" if any(d in line for d in RAY_DAEMONS) else "workers"
                        now[kind] += p.memory_info().rss
                        t = p.cpu_times()
                        self.cpu[p.pid] = (kind, t.user + t.system)
                    except psutil.Error:
                        continue
            except psutil.Error:
                break
            for k, v in now.items():
                self.peak[k] = max(self.peak[k], v)
            time.sleep(self.every_s)

    def stop(self) -> tuple[dict[str, float], dict[str, float]]:
        """Peak RSS (MB) and CPU seconds per group."""
        self._stop.set()
        self._t.join()
        cpu = {"driver": 0.0, "workers": 0.0, "daemons": 0.0}
        for kind, sec in self.cpu.values():
            cpu[kind] += sec
        return {k: v / 2**20 for k, v in self.peak.items()}, cpu


def run(tmp: Path, tasks: int, engine: str, workers: int) -> dict:
    name, _, mode = engine.partition(":")
    d = tmp / f"{engine.replace(':', '-')}-{tasks}"
    (d / "tasks").mkdir(parents=True)
    store = d / "scale.duckdb"
    (d / "tasks" / "scale.yaml").write_text(SUITE.format(half=tasks // 2, store=store))
    args = ["run", str(d / "tasks" / "scale.yaml"), "--engine", name]
    if name != "local":
        args += ["--workers", str(workers)]
    if mode:
        args += ["--ray-mode", mode]
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "masbench.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    mem, cpu = sampler.stop()
    if proc.returncode != 0:
        raise SystemExit(f"{engine} run failed:\n{err[-3000:]}")
    con = duckdb.connect(str(store), read_only=True)
    rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in ROW_TABLES}
    con.close()
    return {"wall": wall, "mem": mem, "cpu": cpu, "rows": sum(rows.values()), "calls": rows["calls"],
            "results": rows["results"], "store": store, "bytes": store.stat().st_size,
            "load": (load0, os.getloadavg()[0])}


def label(engine: str, workers: int) -> str:
    name, _, mode = engine.partition(":")
    return {"local": "1 process", "processes": f"--workers {workers}"}.get(name, f"ray {mode or 'tasks'}, {workers} w")


def show(engine: str, workers: int, r: dict) -> None:
    m, c = r["mem"], r["cpu"]
    daemons = f" · Ray daemons {m['daemons']:.0f} MB, {c['daemons']:.0f} CPU-s" if engine.startswith("ray") else ""
    print(f"  {label(engine, workers):<16}: wall {r['wall']:6.1f}s (load {r['load'][0]:.1f}→{r['load'][1]:.1f}) · "
          f"CPU driver {c['driver']:.0f}s, workers {c['workers']:.0f}s · peak RSS driver {m['driver']:.0f} MB, "
          f"workers {m['workers']:.0f} MB{daemons} · {r['results']} results, {r['calls']} calls, {r['rows']} rows → "
          f"{r['rows'] / r['wall']:,.0f} rows/s", flush=True)


def merge_rate(store: Path, tmp: Path, times: int = 3) -> tuple[float, float, int]:
    """Median wall and CPU seconds to merge ``store`` as one part into an empty store, and the rows merged."""
    from masbench.store import Store, merge_into

    walls, cpus, n = [], [], 0
    for i in range(times):
        target = Store(tmp / f"merge-target-{store.parent.name}-{i}.duckdb")
        t0, c0 = time.perf_counter(), time.process_time()
        counts = merge_into(target, store)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        target.close()
        n = sum(counts.values())
    return statistics.median(walls), statistics.median(cpus), n


def show_merge(r: dict, tmp: Path) -> None:
    load = os.getloadavg()[0]
    dt, cpu, n = merge_rate(r["store"], tmp)
    print(f"  merge of {r['calls']:,} calls' store: {n:,} rows in {dt:.2f}s wall → {n / dt:,.0f} rows/s (goal ≥ 200k: "
          f"{'meets' if n / dt >= 200_000 else 'MISSES'}), {cpu:.2f} CPU-s → {n / cpu:,.0f} rows per CPU-second "
          f"(median of 3, load {load:.1f}) · store {r['bytes'] / 2**20:.1f} MB = "
          f"{r['bytes'] / max(r['calls'], 1):,.0f} bytes per call", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--engines", default="local,processes,ray:tasks,ray:actors",
                    help="comma-separated: local, processes, ray:tasks, ray:actors")
    ap.add_argument("--big", type=int, default=0, help="then this many tasks on the fastest engine (e.g. 100000)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    load = os.getloadavg()
    print(f"harness scale (SIMULATED sim/medium): {a.tasks} tasks × 3 designs (cot, cot-sc[k=3], self-refine)"
          f" + CoT-SC pool k_max=4, cache off · load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on "
          f"{os.cpu_count()} CPUs", flush=True)
    res = {}
    for engine in a.engines.split(","):
        res[engine] = run(tmp, a.tasks, engine, a.workers)
        show(engine, a.workers, res[engine])
    rays = [e for e in res if e.startswith("ray")]
    if len(rays) == 2:
        t, o = res[rays[0]]["wall"], res[rays[1]]["wall"]
        print(f"  {rays[1]} / {rays[0]} wall: {o / t:.2f}x")
    for e in rays:
        if "processes" in res:
            ratio = res[e]["wall"] / res["processes"]["wall"]
            print(f"  {e} / --workers {a.workers} wall: {ratio:.2f}x (goal ≤ 1.3x: {'meets' if ratio <= 1.3 else 'MISSES'})")
    show_merge(max(res.values(), key=lambda r: r["rows"]), tmp)
    if a.big:
        fastest = min(res, key=lambda e: res[e]["wall"])
        print(f"{a.big} tasks on the fastest engine above ({fastest}):", flush=True)
        big = run(tmp, a.big, fastest, a.workers)
        show(fastest, a.workers, big)
        show_merge(big, tmp)
    print("  (wall times include process start, imports and, for ray, starting a local Ray; a shared machine)")


if __name__ == "__main__":
    main()
