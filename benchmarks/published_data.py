"""Published-data loading and scoring at the published sizes (synthetic rows, published layout).

Builds a local MASBench folder with the published test sizes (breadth 676, depth 1609, horizon 702,
parallel 396, robustness 1200 rows), loads it through the ``masbench:`` source, then scores one
reply per task with the ``masbench`` scorer (math-verify on every mismatch) and prints rows/s.

    .venv/bin/python benchmarks/published_data.py [--scale 1.0]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from masbench.bench import load_tasks, score
from masbench.spec.suite import TaskSource
from masbench.testing.published import write_masbench_dir

TEST_ROWS = {"breadth": 676, "depth": 1609, "horizon": 702, "parallel": 396, "robustness": 1200}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="Fraction of the published row counts.")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "MASBench"
        for config, rows in TEST_ROWS.items():
            write_masbench_dir(root, rows=max(1, int(rows * args.scale)), configs=(config,))
        total = sum(pq.read_metadata(p).num_rows for p in root.glob("*/test-*.parquet"))
        t0 = time.perf_counter()
        tasks = load_tasks(TaskSource(masbench=str(root), n=10**6))
        load_s = time.perf_counter() - t0
        assert len(tasks) == total
        replies = []
        for j, t in enumerate(tasks):  # 1 in 3 replies wrong; a third written as decimals (symbolic path)
            golds = t.meta["gold"] if j % 3 else [str(int(g) + 1) for g in t.meta["gold"]]
            golds = [f"{g}.0" if j % 3 == 2 else g for g in golds]
            replies.append("<answer>" + "\n\n".join(f"\\boxed{{{g}}}" for g in golds) + "</answer>")
        t0 = time.perf_counter()
        right = sum(score(t, r).correct for t, r in zip(tasks, replies))
        score_s = time.perf_counter() - t0
    print(f"MASBench-layout test split: {total} rows in {len(TEST_ROWS)} configs (pyarrow {pa.__version__})")
    print(f"load:  {load_s:.2f} s  ({total / load_s:,.0f} rows/s)")
    print(f"score: {score_s:.2f} s  ({total / score_s:,.0f} replies/s), {right}/{total} correct "
          f"(expected {sum(1 for j in range(total) if j % 3)})")


if __name__ == "__main__":
    main()
