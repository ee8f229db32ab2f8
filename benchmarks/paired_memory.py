"""Peak memory and time of the fixed-n statistics of a large family. EVERY NUMBER HERE IS SIMULATED.

Builds the per-task differences of ``--designs`` designs on ``--tasks`` tasks (100k by default;
0/1 design outcomes minus a fractional curve value, costs that vary per task) as the
``paired_task_diffs`` view would hand them over, and runs the shipped verdict code on them
(``curve_rows``: matched-cost adjustment, the suite's test, Holm, ``decide``), measuring the peak
of Python/numpy allocations with ``tracemalloc`` (the input frame excluded) and the process's
peak RSS. The earlier rule (bootstrap-t) built a B × n resample matrix: ~3.2 GB at 100k tasks;
the sign-flip test draws its signs in chunks and keeps only B sums.

Run::

    python benchmarks/paired_memory.py [--tasks 100000] [--designs 3] [--test sign-flip]
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import tracemalloc

import numpy as np
import pandas as pd

from masbench.harness.paired_tests import curve_rows
from masbench.spec import StatsSpec


def family(n: int, designs: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for j in range(designs):
        curve = np.clip(rng.normal(0.6, 0.2, n), 0, 1)
        y = (rng.random(n) < curve + 0.01 * j).astype(float)
        frames.append(pd.DataFrame({
            "run_id": "m", "axis": "all", "axis_value": pd.array([None] * n, dtype="Int64"), "design": f"d{j}",
            "unit": "tokens", "task_id": [f"t{i}" for i in range(n)], "position": "within", "k_match": 3.5,
            "k_max": 8, "seeds": 1, "diff": y - curve, "cost": 700 + rng.normal(0, 60, n),
            "sample_cost": 200 + rng.normal(0, 15, n), "cost_mean": 700.0, "sample_cost_mean": 200.0,
            "slope": 0.02}))
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--designs", type=int, default=3)
    ap.add_argument("--test", default="sign-flip")
    ap.add_argument("--bootstrap", type=int, default=2000)
    a = ap.parse_args()
    print("SIMULATED — synthetic per-task differences; memory and time of the statistics only")
    df = family(a.tasks, a.designs)
    spec = StatsSpec(test=a.test, bootstrap=a.bootstrap)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    t0 = time.perf_counter()
    rows = curve_rows("m", df, {}, spec)
    wall = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    b = rows[0]["bootstrap"]
    print(f"{a.designs} designs × {a.tasks:,} tasks, test {a.test}, B = {b}: peak traced allocations "
          f"{peak / 2**20:.0f} MB, process peak RSS {rss:.0f} MB ({rss0:.0f} MB before the statistics: "
          f"interpreter, libraries and the input frame), {wall:.1f} s; "
          f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for r in rows:
        print(f"  {r['design']}: mean {100 * r['mean_diff']:+.2f} pp, 95% CI [{100 * r['ci_lo']:+.2f}, "
              f"{100 * r['ci_hi']:+.2f}], p {r['p_value']:.3g}, Holm p {r['p_holm']:.3g} — {r['verdict']}")


if __name__ == "__main__":
    main()
