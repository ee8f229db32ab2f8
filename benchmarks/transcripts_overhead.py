"""What full transcripts cost: a ~10k-call SIMULATED run (sim/medium, in-process, cache off) with
``transcripts: full`` and with ``none``, in one script run (modes alternated, ``--reps`` each, the
median reported).

Prints per mode: store bytes per call (the DuckDB file after the run, checkpointed), the
call-path µs per call (time inside the gateway's recording step — the call row and, with full
transcripts, the texts and message records — measured around ``Gateway._record``), wall µs per
call and the total wall; then full vs none against the goal: ≤ 15% more wall time.

    .venv/bin/python benchmarks/transcripts_overhead.py [--tasks 626] [--reps 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

SUITE = """name: transcripts-bench
description: SIMULATED transcripts overhead benchmark
models: {{default: sim/medium}}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: {half}, seed: 0}}
designs: [cot, debate]
cot_sc: {{k_max: 8, bootstrap: 50}}
concurrency: 64
cache: false
transcripts: {mode}
store: {store}
"""

GOAL = 0.15


def run_once(tmp: Path, tag: str, mode: str, tasks: int) -> dict[str, float]:
    """One run of the suite into a fresh store; the figures of ``mode``."""
    from masbench.harness import RunOptions, run_suite
    from masbench.llm import gateway as gw_mod

    d = tmp / tag
    (d / "tasks").mkdir(parents=True)
    store = d / "bench.duckdb"
    suite = d / "tasks" / "bench.yaml"
    suite.write_text(SUITE.format(half=tasks // 2, mode=mode, store=store))
    spent = [0.0, 0]
    inner = gw_mod.Gateway._record

    def timed(self, *a, **kw):  # the recording step of every call (row + transcript)
        t = time.perf_counter()
        try:
            return inner(self, *a, **kw)
        finally:
            spent[0] += time.perf_counter() - t
            spent[1] += 1

    gw_mod.Gateway._record = timed
    try:
        t0 = time.perf_counter()
        summary = asyncio.run(run_suite(RunOptions(suite=str(suite), cache=False)))
        wall = time.perf_counter() - t0
    finally:
        gw_mod.Gateway._record = inner
    con = duckdb.connect(str(store))
    con.execute("CHECKPOINT")
    calls, messages, texts = con.execute("SELECT (SELECT count(*) FROM calls), (SELECT count(*) FROM call_messages), "
                                         "(SELECT count(*) FROM texts)").fetchall()[0]
    con.close()
    assert summary.failed == 0 and calls == spent[1], (summary.failed, calls, spent[1])
    size = store.stat().st_size + sum(p.stat().st_size for p in d.glob("bench.duckdb.wal"))
    return {"calls": calls, "messages": messages, "texts": texts, "wall": wall, "bytes_per_call": size / calls,
            "record_us": spent[0] / calls * 1e6, "wall_us": wall / calls * 1e6}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=626, help="tasks (≈16 calls each: pool 8, cot 1, debate 7)")
    ap.add_argument("--reps", type=int, default=2, help="runs per mode (alternated; the median is reported)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    modes = ("none", "full")
    got: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    run_once(tmp, "warmup", "none", 20)  # imports and first-use costs out of the figures
    for r in range(a.reps):
        for m in (modes if r % 2 == 0 else modes[::-1]):
            got[m].append(run_once(tmp, f"{m}{r}", m, a.tasks))
    med = {m: {k: statistics.median(x[k] for x in got[m]) for k in got[m][0]} for m in modes}
    calls = int(med["full"]["calls"])
    print(f"transcripts overhead (SIMULATED sim/medium, in-process, cache off): {a.tasks} tasks × (cot, debate) + "
          f"CoT-SC pool k_max=8 = {calls} calls per run; {a.reps} run(s) per mode, median")
    print(f"{'mode':<6} {'store B/call':>13} {'record µs/call':>15} {'wall µs/call':>13} {'wall s':>8} "
          f"{'messages':>9} {'texts':>7}")
    for m in modes:
        f = med[m]
        print(f"{m:<6} {f['bytes_per_call']:>13,.0f} {f['record_us']:>15.1f} {f['wall_us']:>13.0f} {f['wall']:>8.2f} "
              f"{int(f['messages']):>9} {int(f['texts']):>7}")
    ratio = med["full"]["wall"] / med["none"]["wall"]
    extra = med["full"]["record_us"] - med["none"]["record_us"]
    print(f"full vs none: wall ×{ratio:.3f} ({100 * (ratio - 1):+.1f}%; goal ≤ +{100 * GOAL:.0f}%: "
          f"{'meets' if ratio <= 1 + GOAL else 'MISSES'}); call path +{extra:.1f} µs per call "
          f"({100 * extra / med['none']['wall_us']:.1f}% of a call's wall); "
          f"store ×{med['full']['bytes_per_call'] / med['none']['bytes_per_call']:.2f}")
    print("  (2-core machine shared with other jobs: wall figures are noisy)", file=sys.stderr)


if __name__ == "__main__":
    main()
