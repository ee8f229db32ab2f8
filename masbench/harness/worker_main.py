"""A worker's side of the sharding engines: :func:`run_shard` runs the listed cells of a suite
into its own DuckDB part file, reporting its progress after each finished cell.

As a process of the ``processes`` engine (``python -m masbench.harness.worker_main '<json options>'``)
it prints one JSON progress line per report, reaches the run's rate limiter over the parent's
socket, and exits when its parent dies (it polls ``os.getppid()``). The ``ray`` engine calls
:func:`run_shard` inside a Ray task with its own limiter and report.

A part that already holds rows of this run (the shard's earlier attempt, killed) is resumed: its
done cells are skipped and its unfinished cells' rows deleted, like a run's store at a rerun.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from .. import telemetry
from ..llm import ResponseCache
from ..llm.limits import CallLimiter
from ..llm.limits_remote import SocketLimiter
from ..store import Store, StoreWriter
from .engine_inprocess import CellRunner, Progress, run_cells
from .failures import RunAborted
from .prepare import RunOptions, prepare
from .resume import clean_unfinished, done_cells

Report = Callable[[dict[str, Any]], None]
"""Takes one progress message: ``{"done", "failed", "stats"}`` (cumulative for the shard) or ``{"fatal"}``."""


def _print(msg: dict[str, Any]) -> None:
    print(json.dumps(msg), flush=True)


async def run_shard(o: dict, *, limiter: CallLimiter | None = None, report: Report = _print,
                    watch_parent: bool = True) -> int:
    """Run the cells listed in ``o["cells"]`` into the part file ``o["part"]``; 0, or 3 when a
    misconfigured model stopped it (reported as ``{"fatal": reason}``)."""
    opts = RunOptions(suite=o["suite"], lib=[Path(p) for p in o["lib"]], overrides=o["overrides"], limit=o["limit"],
                      transcripts=o.get("transcripts"))
    prep = prepare(opts)
    telemetry.decide()
    wanted = set(json.loads(Path(o["cells"]).read_text()))
    store = Store(o["part"])
    k_max = prep.suite.cot_sc.k_max
    clean_unfinished(store, o["run_id"], k_max)  # an earlier attempt at this shard, killed: resume its part
    already = done_cells(store, o["run_id"], k_max) & wanted
    cells = [c for c in prep.cells() if c.key in wanted and c.key not in already]
    use_cache = prep.suite.cache if o["cache"] is None else o["cache"]
    cache = ResponseCache(o["cache_path"]) if use_cache else None
    writer = StoreWriter(store, flush_rows=50_000, flush_interval_s=1.0)
    if limiter is None and o.get("limiter"):
        limiter = SocketLimiter(o["limiter"])
    runner = CellRunner(prep, store, o["run_id"], cache, writer, limiter=limiter)
    progress = Progress(total=len(wanted), done=len(already))
    parent = os.getppid()
    last = [0.0]

    def tick(force: bool = False) -> None:
        # At most a few reports a second: the driver parses each one.
        now = time.monotonic()
        if force or now - last[0] >= 0.25:
            last[0] = now
            report({"done": progress.done, "failed": progress.failed, "stats": runner.gateway.stats,
                    "pid": os.getpid()})

    async def watchdog() -> None:
        while True:
            await asyncio.sleep(0.5)
            if os.getppid() != parent:
                writer.flush()
                os._exit(3)

    wd = asyncio.ensure_future(watchdog()) if watch_parent else None
    aborted: str | None = None
    tick(force=True)
    try:
        # the parent's run span (carried as a traceparent) parents this worker's cell spans
        await telemetry.within(telemetry.joined(o.get("otel")), run_cells(runner, cells, o["concurrency"], progress,
                                                                           tick))
    except RunAborted as exc:  # a misconfigured model: tell the parent, which stops every worker
        aborted = str(exc)
    finally:
        if wd is not None:
            wd.cancel()
        await runner.gateway.aclose()
        writer.flush()
        if cache:
            cache.close()
        store.close()
        if isinstance(limiter, SocketLimiter):
            await limiter.close()
    tick(force=True)
    await telemetry.aflush()
    if aborted:
        report({"fatal": aborted})
        return 3
    return 0


def main() -> int:
    return asyncio.run(run_shard(json.loads(sys.argv[1])))


if __name__ == "__main__":
    sys.exit(main())
