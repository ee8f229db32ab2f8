"""The ``ray`` engine (``masbench run SUITE --engine ray [--address ADDR] [--workers N] [--ray-mode M]``):
the run's cells on a Ray cluster, split in shards, each shard's cells run by one worker holding one
gateway (:class:`~.worker_main.Shard`) into its own DuckDB part that the driver merges
(:mod:`.engine_parts`, the same parts and merge as the ``processes`` engine). Two modes:

* ``tasks`` (default): one Ray task per shard, running all its cells (:func:`shard_task`);
* ``actors``: one actor per shard (:class:`ShardActor`), sent its cells in batches (two in flight),
  then closed — a driver round trip per batch; measured against ``tasks`` in
  ``benchmarks/harness_scale.py`` (docs/scale.md: a tie within noise, so ``tasks`` stays the default).

* **Cluster**: ``--address`` (or ``RAY_ADDRESS``) joins a running cluster; without one, a Ray
  already initialised in this process is used, else a local one is started for the run (and
  stopped after). ``--workers N`` is the number of shards (default: the cluster's CPUs).
* **Parts**: written to ``--parts`` (default ``parts/`` beside the store); on several machines it
  must be a directory every node writes and the driver reads (a shared filesystem).
* **Failures**: a task whose worker dies is retried by Ray (``max_retries``); an actor that dies
  is restarted and its open batches retried (``max_restarts``, ``max_task_retries``). Either way
  the rerun resumes in the shard's part (done cells kept, unfinished cleaned): a shard's cells only
  ever go to its own worker, so a cell's rows are in one part. Cells that fail inside a worker are
  recorded failed and rerun on the next run, as locally. A killed driver leaves parts the next
  run merges first.
* **Rate limits and progress**: one coordinator actor (an async actor, no CPU) holds the run's
  :class:`~masbench.llm.limits.RateLimiter` — every worker's gateway acquires and releases
  through it, so ``rpm``/``tpm``/``max_in_flight`` hold cluster-wide — and the board of the
  shards' progress reports the driver polls into the one display and live status.

Ray is an optional extra (``pip install 'masbench-eval[ray]'``); without it the other engines work
and this one says how to install it.
"""

from __future__ import annotations

import asyncio
import json
import math
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

INSTALL = ("the ray engine needs Ray, an optional extra: pip install 'masbench-eval[ray]' "
           "(in this checkout: .venv/bin/pip install -e '.[ray]')")
MAX_RETRIES = 3
"""Times Ray reruns a shard whose worker died (the rerun resumes in the shard's part)."""
POLL_S = 0.25
MODES = ("tasks", "actors")
"""``--ray-mode`` values; the first is the default."""
BATCHES = 8
"""``actors``: a shard's cells are sent in about this many batches (at least :data:`BATCH_MIN` cells each)."""
BATCH_MIN = 64


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


class ShardActor:
    """``actors`` mode: one shard's worker as a Ray actor. The first batch opens the shard (its part
    resumed, one gateway through the coordinator); every batch runs on the same gateway, batches
    in flight share the shard's ``concurrency``; :meth:`close` ends it. Returns like
    :func:`shard_task`, plus ``{"fatal"}`` when a misconfigured model stopped it."""

    def __init__(self, o: dict[str, Any], coord: Any):
        if o.get("cwd") and os.path.isdir(o["cwd"]):
            os.chdir(o["cwd"])
        self.o, self.coord = o, coord
        self.shard: Any = None
        self.last: dict[str, Any] = {}
        self._open = asyncio.Lock()

    async def _opened(self) -> Any:
        from .worker_main import Shard  # the actor's own import of the harness, inside the Ray worker

        async with self._open:
            if self.shard is None:
                owner = f"shard{self.o['shard']}"
                await self.coord.release_owner.remote(owner)  # a restarted actor: its dead predecessor's slots
                limiter = ActorLimiter(self.coord, owner) if self.o.get("limited") else None
                self.shard = Shard(self.o, limiter, self._report)
        return self.shard

    def _report(self, msg: dict[str, Any]) -> None:
        if "done" in msg:
            self.last.update(msg)
        self.coord.report.remote(self.o["shard"], msg)

    async def run(self, keys: list[str]) -> dict[str, Any]:
        from .failures import RunAborted  # in the Ray worker, next to the Shard it imports lazily

        sh = await self._opened()
        try:
            await sh.run(keys)
        except RunAborted as exc:
            self._report({"fatal": str(exc)})
            return {"rc": 3, "fatal": str(exc)}
        return {"rc": 0}

    async def close(self) -> dict[str, Any]:
        sh = await self._opened()  # a shard with no batch left to run still reports its part's counts
        await sh.close()
        return {"rc": 0, "last": self.last}


class RayEngine:
    """Runs each list of cells on Ray, one worker per shard, as tasks or actors (see the module docstring)."""

    @staticmethod
    def require(opts: RunOptions) -> None:
        mode(opts)
        _ray(local=not (opts.address or os.environ.get("RAY_ADDRESS")))

    def __init__(self, ctx: EngineContext):
        self.ctx = ctx
        self.ray = _ray()
        self.mode = mode(ctx.opts)
        self.totals: dict[str, Any] = {}
        self.coord: Any = None
        self._own = False
        self._remote: Any = None
        self._started: list[Any] = []  # this list's task refs, or actors
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
        # the models' API keys, by the names their YAML gives (api_key_env), travel with the workers:
        # a cluster's workers do not have the driver's environment (never logged nor stored)
        keys = {m.api_key_env: os.environ[m.api_key_env] for m in self.ctx.prep.models.values()
                if m.api_key_env and m.api_key_env in os.environ}
        env = {"env_vars": keys} if keys else None
        if self.mode == "actors":
            self._remote = ray.remote(ShardActor).options(num_cpus=1, max_restarts=MAX_RETRIES,
                                                          max_task_retries=MAX_RETRIES, runtime_env=env)
        else:
            self._remote = ray.remote(shard_task).options(max_retries=MAX_RETRIES, retry_exceptions=False,
                                                          runtime_env=env)
        self.ctx.limits = lambda: self._snap

    def workers(self) -> int:
        n = self.ctx.opts.workers
        return n if n > 1 else max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    @staticmethod
    def shards(opts: RunOptions) -> bool:
        """Every cell runs in a Ray worker, which prepares the suite itself."""
        return True

    def workers_prepare(self, cells: list[Cell]) -> bool:
        """Every cell runs in a Ray worker, which prepares the suite itself."""
        return True

    async def run(self, cells: list[Cell]) -> None:
        if not cells:
            return
        self._start()
        agg = await telemetry.within(self.ctx.span, self._sharded(cells))  # the workers join the run span
        for k, v in agg.items():
            self.totals[k] = self.totals.get(k, 0) + v

    async def _task_shard(self, o: dict[str, Any], keys: list[str]) -> dict[str, Any]:
        ref = self._remote.remote(o, self.coord)
        self._started.append(ref)
        out = await ref
        if out["rc"] == 3:
            board, _ = await self.coord.snapshot.remote()
            out["fatal"] = board.get(o["shard"], {}).get("fatal", "a model is misconfigured")
        return out

    async def _actor_shard(self, o: dict[str, Any], keys: list[str]) -> dict[str, Any]:
        actor = self._remote.remote(o, self.coord)
        self._started.append(actor)
        size = max(BATCH_MIN, math.ceil(len(keys) / BATCHES))
        batches = [keys[j:j + size] for j in range(0, len(keys), size)]
        inflight: list[Any] = []
        for b in [*batches, None]:
            if b is not None:
                inflight.append(actor.run.remote(b))
            while inflight and (b is None or len(inflight) >= 2):  # two batches in flight: no idle gap between them
                out = await inflight.pop(0)
                if out["rc"] == 3:
                    return {**out, "last": {}}
        out = await actor.close.remote()
        self.ray.kill(actor, no_restart=True)
        return out

    async def _stop(self, futs: list[asyncio.Future[Any]], timeout_s: float = 30.0) -> None:
        """Stop every shard of this list and wait (up to ``timeout_s``) until its tasks have ended
        (their workers let go of their parts; a killed actor's part waits in the merge)."""
        ray = self.ray
        refs = []
        for h in self._started:
            if self.mode == "actors":
                ray.kill(h, no_restart=True)
            else:
                ray.cancel(h, force=True)
                refs.append(h)
        for f in futs:
            f.cancel()
        await asyncio.gather(*futs, return_exceptions=True)
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout_s
        while refs and loop.time() < end:
            _, refs = ray.wait(refs, num_returns=len(refs), timeout=0)
            if refs:
                await asyncio.sleep(POLL_S)

    async def _poll(self, totals: ShardTotals, finished: dict[int, dict[str, Any]]) -> None:
        board, self._snap = await self.coord.snapshot.remote()
        for i, msg in {**board, **finished}.items():
            if "done" in msg:
                totals.report(int(i), msg)

    async def _sharded(self, todo: list[Cell]) -> dict[str, Any]:
        ctx = self.ctx
        d = parts_dir(ctx.store_path, ctx.opts.parts).resolve()
        d.mkdir(parents=True, exist_ok=True)
        totals = ShardTotals(ctx)
        limited = ctx.limited()
        launch = self._actor_shard if self.mode == "actors" else self._task_shard
        self._started = []
        futs: dict[asyncio.Future[Any], int] = {}
        shards = shard(todo, self.workers())
        todo.clear()  # the cells are their shards' keys now: the driver holds none while the workers run
        for i, keys in enumerate(shards):
            if not keys:
                continue
            cells_file = d / f"{ctx.run_id}-w{i}.cells.json"
            cells_file.write_text(json.dumps(keys))
            o = worker_options(ctx, i, cells_file, d / f"{ctx.run_id}-w{i}.duckdb")
            o.update(limited=limited, cwd=os.getcwd(), suite=str(Path(o["suite"]).resolve()),
                     lib=[str(Path(p).resolve()) for p in o["lib"]], cache_path=str(Path(o["cache_path"]).resolve()))
            futs[asyncio.ensure_future(launch(o, keys))] = i
        errors: list[str] = []
        fatal: list[str] = []
        finished: dict[int, dict[str, Any]] = {}  # a finished shard's own last report (the board may lag it)
        pending = set(futs)
        try:
            while pending:
                done, pending = await asyncio.wait(pending, timeout=POLL_S)
                for f in done:
                    try:
                        out = f.result()
                    except Exception as exc:  # retries exhausted, or the worker itself raised
                        errors.append(f"shard {futs[f]}: {type(exc).__name__}: {str(exc)[-2000:]}")
                        continue
                    finished[futs[f]] = out["last"]
                    if out["rc"] == 3:
                        fatal.append(out["fatal"])
                if fatal:  # a misconfigured model: stop every shard
                    await self._stop(list(pending))
                    pending = set()
                await self._poll(totals, finished)
        except BaseException:
            await self._stop(list(pending))
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


def mode(opts: RunOptions) -> str:
    """``--ray-mode``, checked (default: the first of :data:`MODES`); another value is an
    :class:`~.engine.EngineUnavailable` naming the choices (the CLI's exit 2)."""
    m = opts.ray_mode or MODES[0]
    if m not in MODES:
        raise EngineUnavailable(f"--ray-mode {m!r}: choose one of {', '.join(MODES)}")
    return m


__all__ = ["MODES", "ActorLimiter", "Coordinator", "INSTALL", "RayEngine", "ShardActor", "mode", "shard_task"]
