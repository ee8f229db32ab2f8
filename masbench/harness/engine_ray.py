"""The ``ray`` engine (``masbench run SUITE --engine ray [--address ADDR] [--workers N]``): the
run's cells as Ray tasks on a cluster, one task per shard, each running
:func:`~.worker_main.run_shard` into its own DuckDB part that the driver merges
(:mod:`.engine_parts`, the same parts and merge as the ``processes`` engine).

* **Cluster**: ``--address`` (or ``RAY_ADDRESS``) joins a running cluster; without one, a Ray
  already initialised in this process is used, else a local one is started for the run (and
  stopped after). ``--workers N`` is the number of shards (default: the cluster's CPUs).
* **Parts**: written to ``--parts`` (default ``parts/`` beside the store); on several machines it
  must be a directory every node writes and the driver reads (a shared filesystem).
* **Failures**: a task whose worker dies is retried by Ray (``max_retries``); the retry resumes
  in the shard's part (done cells kept, unfinished cleaned). Cells that fail inside a worker are
  recorded failed and rerun on the next run, as locally. A killed driver leaves parts the next
  run merges first.
* **Rate limits and progress**: one coordinator actor (an async actor, no CPU) holds the run's
  :class:`~masbench.llm.limits.RateLimiter` — every worker's gateway acquires and releases
  through it, so ``rpm``/``tpm``/``max_in_flight`` hold cluster-wide — and the board of the
  shards' progress reports the driver polls into the one display and live status.

Ray is an optional extra (``pip install 'masbench[ray]'``); without it the other engines work
and this one says how to install it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import telemetry
from ..llm.limits import Lease, Limits, RateLimiter
from .cells import Cell
from .engine import EngineUnavailable
from .engine_parts import ShardTotals, end_shards, merge_parts, parts_dir, shard, worker_options
from .prepare import RunOptions

if TYPE_CHECKING:
    from .engine import EngineContext

INSTALL = ("the ray engine needs Ray, an optional extra: pip install 'masbench[ray]' "
           "(in this checkout: .venv/bin/pip install -e '.[ray]')")
MAX_RETRIES = 3
"""Times Ray reruns a shard whose worker died (the rerun resumes in the shard's part)."""
POLL_S = 0.25


def _ray(local: bool = False) -> Any:
    """Ray, imported; ``local``: a Ray of this machine only is to be started (no address given), so
    its node address stays 127.0.0.1 (Ray otherwise swaps loopback for the machine's address)."""
    if local and "ray" not in sys.modules:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError as exc:
        raise EngineUnavailable(INSTALL) from exc
    return ray


class Coordinator:
    """The run's rate limiter and progress board, as one Ray actor (see the module docstring)."""

    def __init__(self) -> None:
        self.limiter = RateLimiter()
        self.board: dict[int, dict[str, Any]] = {}

    async def acquire(self, key: str, limits: dict[str, Any], tokens: int, owner: str) -> tuple[int, float]:
        lease = await self.limiter.acquire(key, Limits(**limits), tokens, owner)
        return lease.id, lease.granted_at

    async def release(self, key: str, lease_id: int, used: int | None, pause: float | None) -> None:
        await self.limiter.release(Lease(key, lease_id, 0, 0.0), used, pause)

    async def release_owner(self, owner: str) -> int:
        return await self.limiter.release_owner(owner)

    async def report(self, i: int, msg: dict[str, Any]) -> None:
        self.board[i] = msg

    async def snapshot(self) -> tuple[dict[int, dict[str, Any]], dict[str, dict[str, Any]]]:
        return dict(self.board), self.limiter.snapshot()


class ActorLimiter:
    """A worker's :class:`~masbench.llm.limits.CallLimiter`: the coordinator actor's limiter."""

    def __init__(self, actor: Any, owner: str):
        self.actor, self.owner = actor, owner

    async def acquire(self, key: str, limits: Limits, tokens: int) -> Lease:
        lid, t = await self.actor.acquire.remote(key, limits.to_dict(), tokens, self.owner)
        return Lease(key, lid, tokens, t)

    async def release(self, lease: Lease, used: int | None, pause_s: float | None) -> None:
        await self.actor.release.remote(lease.key, lease.id, used, pause_s)


def shard_task(o: dict[str, Any], coord: Any) -> dict[str, Any]:
    """One shard, inside a Ray worker: its cells into its part, through the coordinator. Returns
    ``{"rc", "last"}``: the exit code of :func:`~.worker_main.run_shard` and its last report."""
    from .worker_main import run_shard  # the worker's own import of the harness

    if o.get("cwd") and os.path.isdir(o["cwd"]):
        os.chdir(o["cwd"])  # the driver's working directory: library roots and relative paths as there
    owner = f"shard{o['shard']}"

    last: dict[str, Any] = {}

    async def go() -> int:
        await coord.release_owner.remote(owner)  # a retried shard: its dead predecessor's open slots
        limiter = ActorLimiter(coord, owner) if o.get("limited") else None

        def report(msg: dict[str, Any]) -> None:
            (last if "done" in msg else {}).update(msg)
            coord.report.remote(o["shard"], msg)

        return await run_shard(o, limiter=limiter, report=report, watch_parent=False)

    rc = asyncio.run(go())
    return {"rc": rc, "last": last}


class RayEngine:
    """Runs each list of cells as Ray tasks, one per shard (see the module docstring)."""

    @staticmethod
    def require(opts: RunOptions) -> None:
        _ray(local=not (opts.address or os.environ.get("RAY_ADDRESS")))

    def __init__(self, ctx: EngineContext):
        self.ctx = ctx
        self.ray = _ray()
        self.totals: dict[str, Any] = {}
        self.coord: Any = None
        self._own = False
        self._task: Any = None
        self._snap: dict[str, dict[str, Any]] = {}

    def _start(self) -> None:
        ray = self.ray
        if self.coord is not None:
            return
        address = self.ctx.opts.address or os.environ.get("RAY_ADDRESS")
        if not ray.is_initialized():
            kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                ray.init(address=address, **kw)
            else:  # a local cluster for this run, stopped at the end
                ray.init(num_cpus=max(self.ctx.opts.workers, os.cpu_count() or 1), **kw)
            self._own = True
        self.coord = ray.remote(Coordinator).options(num_cpus=0, max_concurrency=100_000).remote()
        # the models' API keys, by the names their YAML gives (api_key_env), travel with the tasks:
        # a cluster's workers do not have the driver's environment (never logged nor stored)
        keys = {m.api_key_env: os.environ[m.api_key_env] for m in self.ctx.prep.models.values()
                if m.api_key_env and m.api_key_env in os.environ}
        self._task = ray.remote(shard_task).options(max_retries=MAX_RETRIES, retry_exceptions=False,
                                                    runtime_env={"env_vars": keys} if keys else None)
        self.ctx.limits = lambda: self._snap

    def workers(self) -> int:
        n = self.ctx.opts.workers
        return n if n > 1 else max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    async def run(self, cells: list[Cell]) -> None:
        if not cells:
            return
        self._start()
        agg = await telemetry.within(self.ctx.span, self._sharded(cells))  # the workers join the run span
        for k, v in agg.items():
            self.totals[k] = self.totals.get(k, 0) + v

    async def _stop(self, pending: list[Any], timeout_s: float = 30.0) -> None:
        """Cancel these shards and wait until they have ended (their workers let go of their parts)."""
        ray = self.ray
        for ref in pending:
            ray.cancel(ref, force=True)
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout_s
        while pending and loop.time() < end:
            _, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
            if pending:
                await asyncio.sleep(POLL_S)

    async def _poll(self, totals: ShardTotals, finished: dict[int, dict[str, Any]]) -> None:
        board, self._snap = await self.coord.snapshot.remote()
        for i, msg in {**board, **finished}.items():
            if "done" in msg:
                totals.report(int(i), msg)

    async def _sharded(self, todo: list[Cell]) -> dict[str, Any]:
        ctx, ray = self.ctx, self.ray
        d = parts_dir(ctx.store_path, ctx.opts.parts).resolve()
        d.mkdir(parents=True, exist_ok=True)
        totals = ShardTotals(ctx)
        refs: dict[Any, int] = {}
        limited = ctx.limited()
        for i, keys in enumerate(shard(todo, self.workers())):
            if not keys:
                continue
            cells_file = d / f"{ctx.run_id}-w{i}.cells.json"
            cells_file.write_text(json.dumps(keys))
            o = worker_options(ctx, i, cells_file, d / f"{ctx.run_id}-w{i}.duckdb")
            o.update(limited=limited, cwd=os.getcwd(), suite=str(Path(o["suite"]).resolve()),
                     lib=[str(Path(p).resolve()) for p in o["lib"]], cache_path=str(Path(o["cache_path"]).resolve()))
            refs[self._task.remote(o, self.coord)] = i
        errors: list[str] = []
        fatal: list[str] = []
        finished: dict[int, dict[str, Any]] = {}  # a finished shard's own last report (the board may lag it)
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
                for ref in done:
                    try:
                        out = ray.get(ref)
                    except Exception as exc:  # retries exhausted, or the task itself raised
                        errors.append(f"shard {refs[ref]}: {type(exc).__name__}: {str(exc)[-2000:]}")
                        continue
                    finished[refs[ref]] = out["last"]
                    if out["rc"] == 3:
                        board, _ = await self.coord.snapshot.remote()
                        fatal.append(board.get(refs[ref], {}).get("fatal", "a model is misconfigured"))
                if fatal:  # a misconfigured model: stop every shard
                    await self._stop(pending)
                    pending = []
                await self._poll(totals, finished)
                if pending:
                    await asyncio.sleep(POLL_S)
        except BaseException:
            await self._stop(pending)
            merge_parts(ctx.session.store, ctx.run_id, ctx.store_path, ctx.opts.parts)
            raise
        return end_shards(ctx, totals, fatal, errors)

    async def aclose(self) -> dict[str, Any]:
        if self.coord is not None:
            self.ray.kill(self.coord)
            self.coord = None
        if self._own:
            self.ray.shutdown()
            self._own = False
        return dict(self.totals)


__all__ = ["ActorLimiter", "Coordinator", "INSTALL", "RayEngine", "shard_task"]
