"""Worker process entry point (the child side of :mod:`.engine_processes`):
``python -m masbench.harness.worker_main '<json options>'``.

Runs the given cells of a suite into its own DuckDB part file and prints one JSON progress line
per finished cell. Exits when its parent dies (it polls ``os.getppid()``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from .. import telemetry
from ..llm import ResponseCache
from ..store import Store, StoreWriter
from .engine_inprocess import CellRunner, Progress, run_cells
from .failures import RunAborted
from .prepare import RunOptions, prepare


async def run_shard(o: dict) -> int:
    """Run the cells listed in ``o["cells"]`` into the part file ``o["part"]``."""
    opts = RunOptions(suite=o["suite"], lib=[Path(p) for p in o["lib"]], overrides=o["overrides"], limit=o["limit"],
                      transcripts=o.get("transcripts"))
    prep = prepare(opts)
    telemetry.decide()
    wanted = set(json.loads(Path(o["cells"]).read_text()))
    cells = [c for c in prep.cells() if c.key in wanted]
    store = Store(o["part"])
    use_cache = prep.suite.cache if o["cache"] is None else o["cache"]
    cache = ResponseCache(o["cache_path"]) if use_cache else None
    writer = StoreWriter(store, flush_rows=50_000, flush_interval_s=1.0)
    runner = CellRunner(prep, store, o["run_id"], cache, writer)
    progress = Progress(total=len(cells))
    parent = os.getppid()

    last = [0.0]

    def report(force: bool = False) -> None:
        # At most a few lines a second: the parent parses each one.
        now = time.monotonic()
        if force or now - last[0] >= 0.25:
            last[0] = now
            print(json.dumps({"done": progress.done, "failed": progress.failed, "stats": runner.gateway.stats}),
                  flush=True)

    async def watchdog() -> None:
        while True:
            await asyncio.sleep(0.5)
            if os.getppid() != parent:
                writer.flush()
                os._exit(3)

    wd = asyncio.ensure_future(watchdog())
    aborted: str | None = None
    try:
        # the parent's run span (carried as a traceparent) parents this worker's cell spans
        await telemetry.within(telemetry.joined(o.get("otel")), run_cells(runner, cells, o["concurrency"], progress,
                                                                           report))
    except RunAborted as exc:  # a misconfigured model: tell the parent, which stops every worker
        aborted = str(exc)
    finally:
        wd.cancel()
        await runner.gateway.aclose()
        writer.flush()
        if cache:
            cache.close()
        store.close()
    report(force=True)
    await telemetry.aflush()
    if aborted:
        print(json.dumps({"fatal": aborted}), flush=True)
        return 3
    return 0


def main() -> int:
    return asyncio.run(run_shard(json.loads(sys.argv[1])))


if __name__ == "__main__":
    sys.exit(main())
