"""What a readable store costs: a writer that holds DuckDB only while flushing (``Store.brief``)
against one that holds it for the whole run, and how long a reader in another process waits.

(a) N flushes of R call rows each into one store, connection held vs released after every flush:
    prints ms per flush for both. (b) The same brief writer flushing every 0.5 s in a child
    process while this process opens the store read-only and counts rows M times: prints the
    reader's median and max open+query latency.

    .venv/bin/python benchmarks/store_live_read.py [--flushes 100] [--rows 200] [--reads 40]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from masbench.store import Store, StoreWriter

ROW = {"call_id": "x", "run_id": "bench", "purpose": "design", "design": "d", "task_id": "t", "seed": 0,
       "model": "m", "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.0, "ts": 0.0}


def flushes(path: Path, n: int, rows: int, brief: bool, pause: float = 0.0) -> float:
    st = Store(path)
    st.brief = brief
    w = StoreWriter(st, flush_rows=10**9)
    t = 0.0
    for i in range(n):
        for j in range(rows):
            w.add("calls", {**ROW, "call_id": f"{i}-{j}"})
        t0 = time.perf_counter()
        w.flush()
        t += time.perf_counter() - t0
        if pause:
            time.sleep(pause)
    st.close()
    return t / n * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flushes", type=int, default=100)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--reads", type=int, default=40)
    ap.add_argument("--child", default=None)
    a = ap.parse_args()
    if a.child:  # the writer process of (b)
        flushes(Path(a.child), a.flushes, a.rows, brief=True, pause=0.5)
        return
    with tempfile.TemporaryDirectory() as d:
        held = flushes(Path(d) / "held.duckdb", a.flushes, a.rows, brief=False)
        brief = flushes(Path(d) / "brief.duckdb", a.flushes, a.rows, brief=True)
        print(f"(a) {a.rows} rows per flush: connection held {held:.1f} ms/flush, released after each {brief:.1f} ms/flush")
        path = Path(d) / "live.duckdb"
        Store(path).close()
        child = subprocess.Popen([sys.executable, __file__, "--child", str(path), "--flushes", str(a.reads * 2),
                                  "--rows", str(a.rows)])
        lat = []
        for _ in range(a.reads):
            t0 = time.perf_counter()
            with Store(path, read_only=True) as st:
                st.sql("SELECT count(*) FROM calls")
            lat.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.37)
        child.wait()
        print(f"(b) reader open+count while a brief writer flushes every 0.5 s: median {statistics.median(lat):.1f} ms, "
              f"max {max(lat):.1f} ms over {a.reads} reads")


if __name__ == "__main__":
    main()
