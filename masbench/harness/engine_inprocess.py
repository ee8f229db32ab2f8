"""Running cells in this process: one :class:`CellRunner` per prepared suite and store, and
:func:`run_cells` with a bounded number of cells in flight. A design cell runs whatever its entry
resolves to (a library design or a per-task designer, the same way); a pool cell draws the k_max
CoT samples of one task."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
import time
from typing import TYPE_CHECKING, Any, Callable

from .. import telemetry
from ..bench import raw_vote_key
from ..bench.types import TaskInstance
from ..budget import spend_on
from ..design.runnable import Runnable, resolve_runnable
from ..llm import Gateway, ResponseCache, TranscriptRecorder
from ..runtime import DesignResult, RunContext, run_design
from ..store import PoolRow, ResultRow, Store, StoreWriter
from .cells import Cell, DesignEntry
from .failures import RunAborted, aborted_message
from .progress import Progress
from .prepare import POOL_DESIGN, Prepared
from .scoring import CellScoring

if TYPE_CHECKING:
    from ..llm.limits import CallLimiter
    from ..routing import RouteHook
    from .engine import EngineContext


class CellRunner:
    """Runs cells of one prepared suite in this process, writing to one store."""

    def __init__(self, prep: Prepared, store: Store, run_id: str, cache: ResponseCache | None,
                 writer: StoreWriter, *, gateway: Gateway | None = None, entries: list[DesignEntry] | None = None,
                 limiter: CallLimiter | None = None):
        """``gateway``: use this one (e.g. a scripted gateway) instead of one built from the suite's
        models (its transcripts are what it was built with); ``entries``: design entries beyond the
        suite's own (e.g. a designer added to a run); ``limiter``: the run's rate limiter (shared
        by every worker). The built gateway records transcripts to the writer under the run's mode
        (``prep.transcripts``)."""
        self.prep = prep
        self.store = store
        self.run_id = run_id
        self.writer = writer
        self.gateway = gateway or Gateway(prep.models, cache=cache, sink=writer.put,
                                          transcripts=TranscriptRecorder(writer.put, prep.transcripts),
                                          limiter=limiter)
        self.tasks = {t.id: t for t in prep.tasks}
        self.designs = {d.label: d for d in [*prep.designs, *(entries or [])]}
        self.runnables: dict[str, Runnable] = dict(prep.runnables)

        # Agents with `model: {route: HANDBOOK}` get a model per call; decisions go to the store.
        # The hook is made at the first routed call (:meth:`route_hook`): a suite that routes
        # nothing never loads the routing package.
        self._route_hook: RouteHook | None = None
        # Replies are scored here, after the design's tally is closed: a judge's calls (purpose
        # scoring) never reach a design's results row, budget or the pool's costs.
        self.scoring = CellScoring(self.gateway, run_id, prep.suite.judge, prep.judge_agent)

    def route_hook(self) -> RouteHook:
        """The run's route hook, shared by its cells, made on first use."""
        if self._route_hook is None:
            # deferred: the routing package (~8 modules) loads only for a suite that routes
            from ..routing import RouteHook

            self._route_hook = RouteHook(self.prep.library, self.gateway, self.writer.put)
        return self._route_hook

    def _route(self, tags: dict[str, Any], agent: Any, messages: Any = None, task: Any = None, **ctx: Any) -> Any:
        """``RunContext.route`` of one cell: the run's hook bound to the cell's tags."""
        return self.route_hook().bind(**tags)(agent, messages, task, **ctx)

    def _ctx(self, design_label: str, task: TaskInstance, seed: int, purpose: str, budget):
        tags = {"run_id": self.run_id, "design": design_label, "task_id": task.id, "seed": seed, "purpose": purpose}
        return RunContext(gateway=self.gateway, library=self.prep.library, budget=budget, tags=tags,
                          node_sink=self.writer.put, seed=seed, tie=self.prep.suite.cot_sc.tie,
                          route=functools.partial(self._route, {"run_id": self.run_id, "design": design_label,
                                                                "task_id": task.id, "seed": seed}))

    async def run_cell(self, cell: Cell) -> bool:
        """Run one cell; True if it completed without a failed status."""
        with telemetry.cell(self.run_id, cell.kind, cell.design or POOL_DESIGN, cell.task_id, cell.seed) as span:
            ok = await (self._pool_cell(cell) if cell.kind == "pool" else self._design_cell(cell))
            span.cell_result(ok)
        return ok

    async def aclose(self) -> None:
        """Close the metering endpoint, if a program design started one on this loop (after its
        requests in flight: they still need the gateway), then the gateway's client connections."""
        endpoint = sys.modules.get("masbench.llm.endpoint")  # loaded only once a program design ran
        if endpoint is not None:
            await endpoint.close_shared_endpoint()
        await self.gateway.aclose()

    def runnable(self, name: str) -> Runnable:
        """What a design entry's name runs (the suite's were resolved by ``prepare``; an entry added
        here is resolved once, at its first cell)."""
        if name not in self.runnables:
            self.runnables[name] = resolve_runnable(name, self.prep.library)
        return self.runnables[name]

    async def _design_cell(self, cell: Cell) -> bool:
        task = self.tasks[cell.task_id]
        entry = self.designs[cell.design]
        ctx = self._ctx(entry.label, task, cell.seed, "design", self.prep.suite.budget)
        t0 = time.perf_counter()
        try:
            # a library design or a per-task designer (which writes its own designs rows): run alike
            res = await self.runnable(entry.name).run(task, ctx, entry.params,
                                                      design_sink=self.writer.put)
            scored = await self.scoring.score(task, res.answers, res.text, entry.label, cell.seed)
            sc = scored.score
            detail = {**res.detail, **scored.detail} if scored.detail else res.detail
            row = self._result_row(entry, task, cell.seed, res, answer=", ".join(res.answers), correct=sc.correct,
                                   partial=sc.partial, detail=json.dumps(detail, default=str), **scored.columns)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a harness-level failure is recorded as a failed cell, not lost
            failed = DesignResult(text="", answers=[], status="failed", prompt_tokens=0, completion_tokens=0, tokens=0,
                                  cost_usd=0.0, calls=0, wall_s=time.perf_counter() - t0,
                                  error=f"{type(exc).__name__}: {exc}", detail={})
            row = self._result_row(entry, task, cell.seed, failed, answer="", correct=False, partial=0.0, detail=None)
        if row.status != "failed" and self._route_hook is not None:  # no hook yet: no decision to learn from
            self._route_hook.observe_task(task.id, float(bool(row.correct)))
        self.writer.put(row)
        return row.status != "failed"

    def _result_row(self, entry: DesignEntry, task: TaskInstance, seed: int, res: DesignResult, *, answer: str,
                    correct: bool, partial: float, detail: str | None, **judged: Any) -> ResultRow:
        """The results row of one design cell: its outcome ``res`` scored, with what it spent on the
        budget basis (``judged``: the judge columns of a judged reply)."""
        basis = self.prep.suite.budget.basis
        return ResultRow(
            run_id=self.run_id, design=entry.label, design_name=entry.name, task_id=task.id,
            seed=seed, source=task.source, axis=task.axis, axis_value=task.axis_value,
            gold=", ".join(task.answers), simulated=self.prep.simulated, ts=time.time(),
            answer=answer, correct=correct, partial=partial, prompt_tokens=res.prompt_tokens,
            completion_tokens=res.completion_tokens, tokens=res.tokens, cost_usd=res.cost_usd, calls=res.calls,
            wall_s=res.wall_s, status=res.status, error=res.error, detail=detail, budget_basis=basis,
            budget_spent=spend_on(basis, res.prompt_tokens, res.completion_tokens, res.cost_usd),
            evidence=json.dumps([str(x) for x in ev]) if (ev := task.meta.get("evidence")) else None, **judged)

    async def _pool_cell(self, cell: Cell) -> bool:
        task = self.tasks[cell.task_id]
        k_max = self.prep.suite.cot_sc.k_max

        async def one(j: int):
            ctx = self._ctx(POOL_DESIGN, task, cell.seed, "pool", None)
            ctx.seed = cell.seed * 1000 + j  # distinct sample indices: k_max distinct calls
            ctx.tags["seed"] = cell.seed
            return await run_design(self.prep.pool, task, ctx)

        results = await asyncio.gather(*[one(j) for j in range(k_max)])
        scores = await asyncio.gather(*[self.scoring.score(task, res.answers, res.text, POOL_DESIGN, cell.seed)
                                        for res in results])
        ok = True
        for j, (res, scored) in enumerate(zip(results, scores)):
            sc = scored.score
            answer = ", ".join(res.answers) if res.answers and any(res.answers) else None
            if self.prep.suite.cot_sc.vote == "raw":  # the papers' vote: raw answer strings
                answer = raw_vote_key(task, res.text) if res.status != "failed" else None
            ok &= res.status != "failed"
            self.writer.put(PoolRow(
                run_id=self.run_id, task_id=task.id, seed=cell.seed, sample_index=j, answer=answer,
                correct=sc.correct, prompt_tokens=res.prompt_tokens, completion_tokens=res.completion_tokens,
                tokens=res.tokens, cost_usd=res.cost_usd, error=res.error, ts=time.time(),
                budget_spent=spend_on(self.prep.suite.budget.basis, res.prompt_tokens, res.completion_tokens,
                                      res.cost_usd), **scored.columns))
        return ok


async def run_cells(runner: CellRunner, cells: list[Cell], concurrency: int, progress: Progress,
                    on_progress: Callable[[], None] | None = None, sem: asyncio.Semaphore | None = None) -> None:
    """Run cells with at most ``concurrency`` in flight (and, given ``sem``, at most its count across
    several lists run at once), in order; flush the writer off the loop periodically, one flush at a
    time, and count the cells it committed in ``progress.saved``.
    ``concurrency`` workers take the next cell as they finish one: a run holds that many coroutines,
    not one per cell waiting on a semaphore (at 40k cells the semaphore's wake-ups and the waiting
    tasks cost more CPU and memory than the cells' own bookkeeping)."""
    writer = runner.writer
    todo = iter(cells)
    flushing = False

    async def flush() -> None:
        # One flush at a time: two in flight commit in either order, so a later one's commit would
        # not mean an earlier one's rows are in (and they only queue on the store's lock anyway).
        nonlocal flushing
        flushing = True
        upto = progress.done  # these cells' rows are all buffered: the flush commits them
        try:
            await writer.aflush()
        finally:
            flushing = False
        progress.saved = max(progress.saved, upto)

    async def worker() -> None:
        for cell in todo:  # one iterator shared by the workers: each cell is taken once
            if sem is None:
                ok = await runner.run_cell(cell)
            else:
                async with sem:
                    ok = await runner.run_cell(cell)
            progress.done += 1
            progress.failed += not ok
            if runner.gateway.fatal:  # a misconfigured model: stop the run, not just this cell
                raise RunAborted(aborted_message(runner.gateway))
            if writer.due() and not flushing:
                await flush()
            if on_progress:
                on_progress()

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, min(concurrency, len(cells))))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for t in workers:
            t.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    finally:
        await flush()


class LocalEngine:
    """The ``local`` engine: every cell in this process, on one runner and response cache (the
    run's rate limiter on this loop)."""

    def __init__(self, ctx: EngineContext):
        self.ctx = ctx
        self._runner: CellRunner | None = None
        self._cache: ResponseCache | None = None

    def runner(self) -> CellRunner:
        ctx = self.ctx
        if self._runner is None:
            self._cache = ResponseCache(ctx.cache_path) if ctx.use_cache else None
            self._runner = CellRunner(ctx.prep, ctx.session.store, ctx.run_id, self._cache, ctx.session.writer,
                                      limiter=ctx.local_limiter())
            ctx.stats.update(self._runner.gateway.stats)
            if ctx.display:
                ctx.display.attach(ctx.stats)
        return self._runner

    async def run(self, cells: list[Cell]) -> None:
        if not cells:
            return
        runner = self.runner()
        try:
            await telemetry.within(self.ctx.span, run_cells(runner, cells, self.ctx.concurrency, self.ctx.progress,
                                                            self._tick))
        finally:
            self.ctx.session.writer.flush()

    def _tick(self) -> None:
        """Progress changed: read the gateway's totals into the run's, then refresh the display."""
        if self._runner is not None:
            self.ctx.stats.update(self._runner.gateway.stats)
        self.ctx.tick()

    async def aclose(self) -> dict[str, Any]:
        """Close the gateway's client connections (on this loop, which made them) and the response
        cache; the gateway's counters."""
        if self._runner is not None:
            await self._runner.aclose()
        if self._cache:
            self._cache.close()
            self._cache = None
        return self._runner.gateway.stats if self._runner is not None else {}


__all__ = ["CellRunner", "LocalEngine", "Progress", "run_cells"]
