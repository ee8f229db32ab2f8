"""The ``processes`` engine (``--workers N``): the parent side (the child is :mod:`.worker_main`).

One asyncio process tops out at ~200 litellm calls/s per core (measured), so past that we scale
with processes. The parent splits the remaining cells by a stable hash, starts N workers
(``python -m masbench.harness.worker_main``), each writing its own DuckDB part file, reads their
progress lines, and merges the parts into the main store when they finish (:mod:`.engine_parts`).
Parts left by a killed run are merged at the next start (their acknowledged rows are kept;
unfinished cells are cleaned and rerun). A worker exits if its parent dies.

A suite whose models set ``rpm``/``tpm``/``max_in_flight`` gets one rate limiter in the parent,
served to the workers over a Unix socket (:mod:`masbench.llm.limits_remote`), so the limits hold
for all of them together. A single cell runs in the parent (the ``local`` engine, same limiter).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import telemetry
from ..llm.limits_remote import LimiterServer
from .cells import Cell
from .engine_inprocess import LocalEngine
from .engine_parts import ShardTotals, end_shards, merge_parts, parts_dir, shard, worker_options

if TYPE_CHECKING:
    from .engine import EngineContext
    from .prepare import RunOptions


class ProcessEngine:
    """Shards each list of cells over ``--workers`` local processes (see the module docstring)."""

    def __init__(self, ctx: EngineContext):
        self.ctx = ctx
        self.local = LocalEngine(ctx)
        self.totals: dict[str, Any] = {}
        self._server: LimiterServer | None = None
        self._sock_dir: tempfile.TemporaryDirectory | None = None

    async def _limiter_path(self) -> str | None:
        limiter = self.ctx.local_limiter()
        if limiter is None:
            return None
        if self._server is None:
            self._sock_dir = tempfile.TemporaryDirectory(prefix="masbench-lim-")  # short: a socket path has ~100 chars
            self._server = LimiterServer(limiter, str(Path(self._sock_dir.name) / "limiter.sock"))
            await self._server.start()
        return self._server.path

    @staticmethod
    def shards(opts: RunOptions) -> bool:
        """Whether a run's driver hands its cells to workers that prepare the suite themselves (so it
        lists the cells without holding the tasks): more than one worker."""
        return opts.workers > 1

    def workers_prepare(self, cells: list[Cell]) -> bool:
        """Whether these cells run in workers that prepare the suite themselves (so the driver
        needs none of its tasks while they run): more than one cell and more than one worker."""
        return len(cells) > 1 and self.ctx.opts.workers > 1

    async def run(self, cells: list[Cell]) -> None:
        if len(cells) <= 1 or self.ctx.opts.workers <= 1:
            await self.local.run(cells)
            return
        agg = await telemetry.within(self.ctx.span, self._sharded(cells))  # the workers join the run span
        for k, v in agg.items():
            self.totals[k] = self.totals.get(k, 0) + v

    async def _sharded(self, todo: list[Cell]) -> dict[str, Any]:
        ctx = self.ctx
        d = parts_dir(ctx.store_path, ctx.opts.parts)
        d.mkdir(parents=True, exist_ok=True)
        limiter = await self._limiter_path()
        totals = ShardTotals(ctx)
        procs: list[tuple[int, asyncio.subprocess.Process]] = []
        fatal: list[str] = []
        shards = shard(todo, ctx.opts.workers)
        todo.clear()  # the cells are their shards' keys now: the driver holds none while the workers run
        for i in range(len(shards)):
            keys, shards[i] = shards[i], []  # a shard's keys are let go once in its file (≈ 90 bytes a cell)
            if not keys:
                continue
            cells_file = d / f"{ctx.run_id}-w{i}.cells.json"
            cells_file.write_text(json.dumps(keys))
            del keys
            o = worker_options(ctx, i, cells_file, d / f"{ctx.run_id}-w{i}.duckdb")
            o["limiter"] = limiter
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "masbench.harness.worker_main", json.dumps(o),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            procs.append((i, proc))

        async def read(i: int, proc: asyncio.subprocess.Process) -> None:
            assert proc.stdout is not None
            async for line in proc.stdout:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if "fatal" in msg:  # a worker met a misconfigured model: stop them all
                    fatal.append(msg["fatal"])
                    for _, p in procs:
                        if p.returncode is None:
                            p.terminate()
                    continue
                totals.report(i, msg)

        errors = []
        try:
            await asyncio.gather(*[read(i, p) for i, p in procs])
            for i, p in procs:
                rc = await p.wait()
                if rc != 0:
                    err = (await p.stderr.read()).decode(errors="replace")[-2000:] if p.stderr else ""
                    errors.append(f"worker {i} exited {rc}: {err}")
        except BaseException:
            for _, p in procs:
                if p.returncode is None:
                    p.terminate()
            await asyncio.gather(*[p.wait() for _, p in procs], return_exceptions=True)
            merge_parts(ctx.session.store, ctx.run_id, ctx.store_path, ctx.opts.parts)
            raise
        return end_shards(ctx, totals, fatal, errors)

    async def aclose(self) -> dict[str, Any]:
        if self._server is not None:
            await self._server.close()
            self._server = None
        if self._sock_dir is not None:
            self._sock_dir.cleanup()
            self._sock_dir = None
        stats = dict(self.totals)
        for k, v in (await self.local.aclose()).items():
            stats[k] = stats.get(k, 0) + v if isinstance(v, (int, float)) else v
        return stats


__all__ = ["ProcessEngine", "merge_parts", "parts_dir"]
