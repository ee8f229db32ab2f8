"""The driver's work after a run's cells, phase by phase: peak RSS and CPU of the CoT-SC curve, the
paired tests and the routing outcomes on a finished store. EVERY NUMBER HERE IS SIMULATED when the
store is (``benchmarks/harness_scale.py`` makes one: ``sim/medium``).

The store is copied first (the copy is what is recomputed). ``--replicate R`` makes the copy R
times larger the cheap way — each task's results and pool samples repeated under R task ids
(``t``, ``t-r1``, …) — so the statistics of a 100,000-task run can be measured from a 10,000-task
store in seconds instead of a 1M-call run. Peak RSS is sampled every 10 ms in a thread; the
process's DuckDB memory limit is the store's (``MASBENCH_DUCKDB_MEMORY``, docs/scale.md).

    .venv/bin/python benchmarks/driver_phases.py STORE.duckdb SUITE.yaml [--replicate 10]

``SUITE.yaml``: the suite the store was run from (its ``cot_sc``, ``stats`` and budget basis).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import duckdb
import psutil


class Peak:
    """The process's peak RSS since :meth:`reset`, sampled in a daemon thread."""

    def __init__(self) -> None:
        self.proc = psutil.Process()
        self.peak = self.proc.memory_info().rss
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(0.01)

    def reset(self) -> int:
        self.peak = self.proc.memory_info().rss
        return self.peak


def replicate(path: Path, times: int) -> None:
    """Repeat every run's results and pool rows under ``times - 1`` more task ids; the curve and
    paired rows are dropped (the phases recompute them)."""
    con = duckdb.connect(str(path))
    for table in ("results", "pool"):
        cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
        sel = ", ".join("task_id || '-r' || CAST(i AS VARCHAR)" if c == "task_id" else c for c in cols)
        con.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {sel} FROM {table}, range(1, {times}) r(i)")
    for table in ("cot_sc_task_curve", "cot_sc_curve", "paired_tests"):
        con.execute(f"DELETE FROM {table}")
    con.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("--replicate", type=int, default=1, help="make the copied store R times larger (R ≥ 1)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    work = tmp / "phases.duckdb"
    shutil.copy(a.store, work)
    if a.replicate > 1:
        replicate(work, a.replicate)
    peak = Peak()
    from masbench.harness.curve import compute_curve, groups_of_results
    from masbench.harness.failures import failure_reasons
    from masbench.harness.paired_tests import compute_paired
    from masbench.library import Library
    from masbench.spec import SuiteSpec
    from masbench.store import Store, fill_outcomes

    suite = Library().load_path(a.suite).typed(SuiteSpec)
    store = Store(work)
    run_id = store.sql("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 1")[0][0]
    tasks, cells, pool = store.sql("SELECT count(DISTINCT task_id), count(*), (SELECT count(*) FROM pool WHERE run_id = ?) "
                                   "FROM results WHERE run_id = ?", [run_id, run_id])[0]
    load = os.getloadavg()
    print(f"driver phases (SIMULATED store ×{a.replicate}): {tasks:,} tasks, {cells:,} result cells, {pool:,} pool "
          f"samples · DuckDB memory_limit {store.sql('SELECT current_setting(?)', ['memory_limit'])[0][0]} · load "
          f"average {load[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    groups = groups_of_results(store, run_id)
    phases: list[tuple[str, Callable[[], object]]] = [
        ("curve", lambda: compute_curve(store, run_id, suite.cot_sc, groups, suite.budget.basis)),
        ("paired tests", lambda: compute_paired(store, run_id, suite.stats)),
        ("outcomes", lambda: fill_outcomes(store, run_id)),
        ("failure reasons", lambda: failure_reasons(store, run_id)),
    ]
    for name, fn in phases:
        before = peak.reset()
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        print(f"  {name:<15}: RSS before {before / 2**20:,.0f} MB, peak {peak.peak / 2**20:,.0f} MB "
              f"(+{(peak.peak - before) / 2**20:,.0f}), {time.process_time() - c0:.1f} CPU-s, "
              f"{time.perf_counter() - t0:.1f} s wall", flush=True)
    store.close()
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
