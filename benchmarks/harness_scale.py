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

With ``--json PATH`` the figures are also written there, machine-readable (date, load, commit;
per run its driver's RSS every 10 s, and its peak per call and per task; with ``--big``, the
driver's growth between the two runs per added call and task: what a larger run would add).

    .venv/bin/python benchmarks/harness_scale.py [--tasks 10000] [--workers 2]
        [--engines local,processes,ray:tasks,ray:actors] [--big 100000] [--json PATH]
"""

from __future__ import annotations

import argparse
import datetime
import json
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
        self.timeline: list[tuple[float, float]] = []
        """(seconds since start, driver RSS in MB), every 10 s."""
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        import psutil

        t0 = time.monotonic()
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
            elapsed = time.monotonic() - t0
            if not self.timeline or elapsed - self.timeline[-1][0] >= 10:
                self.timeline.append((round(elapsed, 1), round(now["driver"] / 2**20, 1)))
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
    return {"engine": engine, "tasks": tasks, "wall": wall, "mem": mem, "cpu": cpu, "rows": sum(rows.values()),
            "calls": rows["calls"], "results": rows["results"], "store": store, "bytes": store.stat().st_size,
            "load": (load0, os.getloadavg()[0]), "timeline": sampler.timeline}


def label(engine: str, workers: int) -> str:
    name, _, mode = engine.partition(":")
    return {"local": "1 process", "processes": f"--workers {workers}"}.get(name, f"ray {mode or 'tasks'}, {workers} w")


def show(engine: str, workers: int, r: dict) -> None:
    m, c = r["mem"], r["cpu"]
    daemons = f" · Ray daemons {m['daemons']:.0f} MB, {c['daemons']:.0f} CPU-s" if engine.startswith("ray") else ""
    print(f"  {label(engine, workers):<16}: wall {r['wall']:6.1f}s (load {r['load'][0]:.1f}→{r['load'][1]:.1f}) · "
          f"CPU driver {c['driver']:.0f}s, workers {c['workers']:.0f}s · peak RSS driver {m['driver']:.0f} MB, "
          f"workers {m['workers']:.0f} MB{daemons} · {r['results']} results, {r['calls']} calls, {r['rows']} rows → "
          f"{r['rows'] / r['wall']:,.0f} rows/s · driver peak {per_unit(m['driver'], r['calls'])} B per call, "
          f"{per_unit(m['driver'], r['tasks'])} B per task", flush=True)


def per_unit(mb: float, n: int) -> int:
    """Bytes of ``mb`` megabytes per one of ``n``."""
    return round(mb * 2**20 / max(n, 1))


def growth(small: dict, big: dict) -> dict:
    """What the driver's and workers' peaks grew by between two runs, per added call and task."""
    calls, tasks = big["calls"] - small["calls"], big["tasks"] - small["tasks"]
    out = {}
    for k in ("driver", "workers"):
        mb = big["mem"][k] - small["mem"][k]
        out[k] = {"mb": round(mb, 1), "bytes_per_call": per_unit(mb, calls), "bytes_per_task": per_unit(mb, tasks)}
    return out


def figures(r: dict) -> dict:
    """One run's figures as JSON data."""
    return {"engine": r["engine"], "tasks": r["tasks"], "results": r["results"], "calls": r["calls"], "rows": r["rows"],
            "wall_s": round(r["wall"], 1), "load": [round(x, 1) for x in r["load"]],
            "cpu_s": {k: round(v, 1) for k, v in r["cpu"].items()},
            "peak_rss_mb": {k: round(v, 1) for k, v in r["mem"].items()},
            "driver_peak_bytes_per_call": per_unit(r["mem"]["driver"], r["calls"]),
            "driver_peak_bytes_per_task": per_unit(r["mem"]["driver"], r["tasks"]),
            "rows_per_s": round(r["rows"] / r["wall"]), "store_bytes": r["bytes"],
            "store_bytes_per_call": round(r["bytes"] / max(r["calls"], 1)), "store": str(r["store"]),
            "merge": r.get("merge"), "driver_rss_mb_every_10s": r["timeline"]}


def commit() -> str | None:
    """The checkout's commit (None outside a git work tree)."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


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
    r["merge"] = {"rows": n, "wall_s": round(dt, 2), "cpu_s": round(cpu, 2), "rows_per_s": round(n / dt),
                  "load": round(load, 1)}
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
    ap.add_argument("--json", type=Path, help="also write the figures to this file (JSON)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    load = os.getloadavg()
    print(f"harness scale (SIMULATED sim/medium): {a.tasks} tasks × 3 designs (cot, cot-sc[k=3], self-refine)"
          f" + CoT-SC pool k_max=4, cache off · load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on "
          f"{os.cpu_count()} CPUs", flush=True)
    res: dict[str, dict] = {}
    big: dict | None = None

    def emit() -> None:  # after every run: a run stopped later keeps the figures so far
        if not a.json:
            return
        out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit(),
               "cpus": os.cpu_count(), "load_at_start": [round(x, 1) for x in load], "workers": a.workers,
               "simulated": True, "runs": [figures(r) for r in res.values()]}
        if big is not None:
            out["big"] = figures(big)
            out["growth"] = growth(res[fastest], big)
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(out, indent=1) + "\n")

    for engine in a.engines.split(","):
        res[engine] = run(tmp, a.tasks, engine, a.workers)
        show(engine, a.workers, res[engine])
        emit()
    rays = [e for e in res if e.startswith("ray")]
    if len(rays) == 2:
        t, o = res[rays[0]]["wall"], res[rays[1]]["wall"]
        print(f"  {rays[1]} / {rays[0]} wall: {o / t:.2f}x")
    for e in rays:
        if "processes" in res:
            ratio = res[e]["wall"] / res["processes"]["wall"]
            print(f"  {e} / --workers {a.workers} wall: {ratio:.2f}x (goal ≤ 1.3x: {'meets' if ratio <= 1.3 else 'MISSES'})")
    show_merge(max(res.values(), key=lambda r: r["rows"]), tmp)
    emit()
    fastest = min(res, key=lambda e: res[e]["wall"])
    if a.big:
        print(f"{a.big} tasks on the fastest engine above ({fastest}):", flush=True)
        big = run(tmp, a.big, fastest, a.workers)
        show(fastest, a.workers, big)
        show_merge(big, tmp)
        g = growth(res[fastest], big)
        print(f"  driver peak {res[fastest]['mem']['driver']:.0f} → {big['mem']['driver']:.0f} MB: "
              f"{g['driver']['bytes_per_call']} B per added call, {g['driver']['bytes_per_task']} B per added task "
              f"(workers: {g['workers']['bytes_per_call']} B per added call)")
    print("  (wall times include process start, imports and, for ray, starting a local Ray; a shared machine)")
    if a.json:
        emit()
        print(f"  figures written to {a.json}")


if __name__ == "__main__":
    main()
