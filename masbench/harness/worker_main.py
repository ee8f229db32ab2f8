"""A worker's side of the sharding engines: a :class:`Shard` is one worker's state, opened once
(the prepared suite, its own DuckDB part file, one gateway); it runs lists of the shard's cells,
reporting its progress after each finished cell. :func:`run_shard` opens one, runs all its cells
and closes it.

As a process of the ``processes`` engine (``python -m masbench.harness.worker_main '<json options>'``)
it prints one JSON progress line per report, reaches the run's rate limiter over the parent's
socket, and exits when its parent dies (it polls ``os.getppid()``). The ``ray`` engine calls
:func:`run_shard` inside a Ray task (``--ray-mode tasks``) or holds a :class:`Shard` in an actor
that is sent the cells in batches (``actors``), with its own limiter and report.

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
"""Takes one progress message: ``{"done", "failed", "saved", "stats", "pid"}`` (cumulative for the shard;
``saved``: done cells whose rows its part has committed) or ``{"fatal"}``."""


def _print(msg: dict[str, Any]) -> None:
    print(json.dumps(msg), flush=True)


class Shard:
    """One shard's worker state, opened once: the prepared suite, its part (resumed), one gateway
    and response cache, and its progress. :meth:`run` runs any list of its cells (the ``ray``
    engine's actors send them in batches; :func:`run_shard` all at once); :meth:`close` ends it."""

    def __init__(self, o: dict, limiter: CallLimiter | None, report: Report):
        opts = RunOptions(suite=o["suite"], lib=[Path(p) for p in o["lib"]], overrides=o["overrides"],
                          limit=o["limit"], transcripts=o.get("transcripts"))
        self.prep = prepare(opts)
        telemetry.decide()
        self.o, self.report = o, report
        wanted = set(json.loads(Path(o["cells"]).read_text()))
        self.store = Store(o["part"])
        k_max = self.prep.suite.cot_sc.k_max
        clean_unfinished(self.store, o["run_id"], k_max)  # an earlier attempt at this shard, killed: resume its part
        self.already = done_cells(self.store, o["run_id"], k_max) & wanted
        self.cells = {c.key: c for c in self.prep.cells() if c.key in wanted and c.key not in self.already}
        use_cache = self.prep.suite.cache if o["cache"] is None else o["cache"]
        self.cache = ResponseCache(o["cache_path"]) if use_cache else None
        self.writer = StoreWriter(self.store, flush_rows=50_000, flush_interval_s=1.0)
        if limiter is None and o.get("limiter"):
            limiter = SocketLimiter(o["limiter"])
        self.limiter = limiter
        self.runner = CellRunner(self.prep, self.store, o["run_id"], self.cache, self.writer, limiter=limiter)
        self.progress = Progress(total=len(wanted), done=len(self.already), saved=len(self.already))
        self.sem = asyncio.Semaphore(o["concurrency"])  # cells in flight, over every batch run at once
        self._last = 0.0
        self.tick(force=True)

    def tick(self, force: bool = False) -> None:
        # At most a few reports a second: the driver parses each one.
        now = time.monotonic()
        if force or now - self._last >= 0.25:
            self._last = now
            self.report({"done": self.progress.done, "failed": self.progress.failed, "saved": self.progress.saved,
                         "stats": self.runner.gateway.stats, "pid": os.getpid()})

    async def run(self, keys: list[str] | None = None) -> None:
        """Run these of the shard's cells (None: all of them); those done already are skipped.
        Raises :class:`~.failures.RunAborted` when a model is misconfigured."""
        todo = list(self.cells.values()) if keys is None else [self.cells[k] for k in keys if k in self.cells]
        # the parent's run span (carried as a traceparent) parents this worker's cell spans
        await telemetry.within(telemetry.joined(self.o.get("otel")),
                               run_cells(self.runner, todo, self.o["concurrency"], self.progress, self.tick, sem=self.sem))

    async def close(self) -> None:
        """Flush the part and let go of everything; a last report."""
        await self.runner.aclose()
        self.writer.flush()
        if self.cache:
            self.cache.close()
        self.store.close()
        if isinstance(self.limiter, SocketLimiter):
            await self.limiter.close()
        self.tick(force=True)
        await telemetry.aflush()


async def run_shard(o: dict, *, limiter: CallLimiter | None = None, report: Report = _print,
                    watch_parent: bool = True) -> int:
    """Run the cells listed in ``o["cells"]`` into the part file ``o["part"]``; 0, or 3 when a
    misconfigured model stopped it (reported as ``{"fatal": reason}``)."""
    sh = Shard(o, limiter, report)
    parent = os.getppid()

    async def watchdog() -> None:
        while True:
            await asyncio.sleep(0.5)
            if os.getppid() != parent:
                sh.writer.flush()
                os._exit(3)

    wd = asyncio.ensure_future(watchdog()) if watch_parent else None
    aborted: str | None = None
    try:
        await sh.run()
    except RunAborted as exc:  # a misconfigured model: tell the parent, which stops every worker
        aborted = str(exc)
    finally:
        if wd is not None:
            wd.cancel()
        await sh.close()
    if aborted:
        report({"fatal": aborted})
        return 3
    return 0


def main() -> int:
    return asyncio.run(run_shard(json.loads(sys.argv[1])))


if __name__ == "__main__":
    sys.exit(main())
