"""Run a suite: designs × tasks × seeds, plus the CoT-SC pool, into a DuckDB store; resumable.

A cell is done when its rows are acknowledged (flushed). Rerunning the same suite with the same
configuration continues the latest matching run: finished cells are skipped, rows of cells that
were in flight when the previous process died are deleted and those cells run again (the response
cache makes that cheap). Ctrl-C flushes what is finished and marks the run ``interrupted``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..bench import load_suite_tasks, score
from ..bench.types import TaskInstance
from ..library import Library
from ..llm import Gateway, ResponseCache, models_from
from ..spec import DesignSpec, NodeSpec, SuiteSpec
from ..store import Store, StoreWriter, finish_run, new_run_id, start_run
from .cells import Cell, DesignEntry, config_hash, design_entries
from .curve import compute_curve, groups_of_tasks
from .paired_tests import compute_paired

POOL_DESIGN = "__cot_pool__"


@dataclass
class RunOptions:
    """How to run a suite (the CLI's flags)."""

    suite: str
    """Suite name or path."""
    store: Path | None = None
    """Store file (default: the suite's ``store``)."""
    overrides: dict[str, str] = field(default_factory=dict)
    """``--model ALIAS=ID`` overrides."""
    limit: int | None = None
    """Keep only the first N tasks of each task source."""
    new: bool = False
    """Start a fresh run even if a matching one exists."""
    run_id: str | None = None
    """Continue this run id (or create it)."""
    workers: int = 1
    """Worker processes; >1 shards the cells over processes."""
    concurrency: int | None = None
    """Cells in flight per process (default: the suite's)."""
    cache: bool | None = None
    """Use the response cache (default: the suite's ``cache``)."""
    lib: list[Path] = field(default_factory=list)
    """Extra library roots."""
    shard: tuple[int, int] | None = None
    """Worker mode: run only cells with shard index i of n, into ``store``, no curve."""


@dataclass
class Prepared:
    """A suite resolved to tasks, designs, models and cells."""

    suite: SuiteSpec
    suite_path: Path
    library: Library
    tasks: list[TaskInstance]
    designs: list[DesignEntry]
    models: dict[str, Any]
    config_hash: str
    store_path: Path
    simulated: bool

    def cells(self) -> list[Cell]:
        out = []
        for seed in self.suite.seeds:
            if self.suite.cot_sc.enabled:
                out += [Cell("pool", t.id, seed) for t in self.tasks]
            for d in self.designs:
                out += [Cell("design", t.id, seed, d.label) for t in self.tasks]
        return out


def prepare(opts: RunOptions) -> Prepared:
    """Load and check everything before any call is made."""
    library = Library(roots=list(opts.lib))
    loaded = library.get("suite", opts.suite)
    suite: SuiteSpec = loaded.spec
    base = loaded.path.parent
    tasks = load_suite_tasks(suite, base) if opts.limit is None else _limited(suite, base, opts.limit)
    if not tasks:
        raise ValueError(f"suite {suite.name!r} produced no tasks")
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError(f"suite {suite.name!r}: task ids are not unique")
    designs = design_entries(suite)
    from ..design.runners import get_designer

    for d in designs:
        if get_designer(d.name) is None:  # per-task designers are code, not library designs
            library.get("design", d.name)
    models = models_from(suite.models, opts.overrides)
    simulated = any(m.provider == "sim" for m in models.values())
    store_path = Path(opts.store or suite.store)
    return Prepared(suite, loaded.path, library, tasks, designs, models,
                    config_hash(suite, opts.overrides, opts.limit, base), store_path, simulated)


def _limited(suite: SuiteSpec, base: Path, limit: int) -> list[TaskInstance]:
    from ..bench import load_tasks

    out: list[TaskInstance] = []
    for src in suite.tasks:
        out += load_tasks(src, base)[:limit]
    return out


def pool_design(agent: str) -> DesignSpec:
    """One CoT sample: the pool is k_max runs of this with different sample seeds."""
    return DesignSpec(name=POOL_DESIGN, kind="baseline", nodes={"sample": NodeSpec(agent=agent)}, output="sample")


# ----- resume bookkeeping ---------------------------------------------------------------------
def find_run(store: Store, suite: str, chash: str) -> str | None:
    row = store.sql("SELECT run_id FROM runs WHERE suite = ? AND config_hash = ? ORDER BY created_at DESC LIMIT 1",
                    [suite, chash])
    return row[0][0] if row else None


def clean_unfinished(store: Store, run_id: str, k_max: int) -> dict[str, int]:
    """Delete rows of cells that never completed (their calls/nodes without a result; pool cells
    with fewer than k_max samples), so resumed cells leave no duplicates."""
    with store.lock:
        con = store.con
        con.execute("BEGIN TRANSACTION")
        n_calls = con.execute("""
            DELETE FROM calls c WHERE c.run_id = ? AND c.purpose IN ('design', 'search')
              AND c.task_id IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM results r WHERE r.run_id = c.run_id AND r.design = c.design
                AND r.task_id = c.task_id AND r.seed = c.seed)""", [run_id]).fetchall()[0][0]
        n_nodes = con.execute("""
            DELETE FROM nodes n WHERE n.run_id = ? AND NOT EXISTS (
              SELECT 1 FROM results r WHERE r.run_id = n.run_id AND r.design = n.design
                AND r.task_id = n.task_id AND r.seed = n.seed) AND n.design <> ?""", [run_id, POOL_DESIGN]).fetchall()[0][0]
        con.execute("""
            DELETE FROM designs d WHERE d.run_id = ? AND d.task_id IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM results r WHERE r.run_id = d.run_id AND r.task_id = d.task_id)""", [run_id])
        con.execute("""
            DELETE FROM routing_decisions d WHERE d.run_id = ? AND NOT EXISTS (
              SELECT 1 FROM results r WHERE r.run_id = d.run_id AND r.design = d.design
                AND r.task_id = d.task_id AND r.seed = d.seed)""", [run_id])
        incomplete = """SELECT task_id, seed FROM pool WHERE run_id = ? GROUP BY ALL HAVING count(*) < ?"""
        n_pool_calls = con.execute(f"""
            DELETE FROM calls c WHERE c.run_id = ? AND c.purpose = 'pool' AND (
              (c.task_id, c.seed) IN ({incomplete}) OR NOT EXISTS (
                SELECT 1 FROM pool p WHERE p.run_id = c.run_id AND p.task_id = c.task_id AND p.seed = c.seed))""",
                                   [run_id, run_id, k_max]).fetchall()[0][0]
        con.execute(f"DELETE FROM nodes n WHERE n.run_id = ? AND n.design = ? AND (n.task_id, n.seed) NOT IN "
                    f"(SELECT task_id, seed FROM pool WHERE run_id = ? GROUP BY ALL HAVING count(*) >= ?)",
                    [run_id, POOL_DESIGN, run_id, k_max])
        n_pool = con.execute(f"DELETE FROM pool WHERE run_id = ? AND (task_id, seed) IN ({incomplete})",
                             [run_id, run_id, k_max]).fetchall()[0][0]
        con.execute("COMMIT")
    return {"calls": int(n_calls), "nodes": int(n_nodes), "pool_calls": int(n_pool_calls), "pool": int(n_pool)}


def done_cells(store: Store, run_id: str, k_max: int) -> set[str]:
    done = {Cell("design", t, s, d).key for d, t, s in
            store.sql("SELECT design, task_id, seed FROM results WHERE run_id = ?", [run_id])}
    done |= {Cell("pool", t, s).key for t, s in
             store.sql("SELECT task_id, seed FROM pool WHERE run_id = ? GROUP BY ALL HAVING count(*) >= ?",
                       [run_id, k_max])}
    return done


# ----- executing cells ------------------------------------------------------------------------
@dataclass
class Progress:
    """Counters the progress display reads."""

    total: int = 0
    done: int = 0
    skipped: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)


class CellRunner:
    """Runs cells of one prepared suite in this process, writing to one store."""

    def __init__(self, prep: Prepared, store: Store, run_id: str, cache: ResponseCache | None,
                 writer: StoreWriter):
        from ..runtime import RunContext  # noqa: F401 - fail early if the runtime is missing

        self.prep = prep
        self.store = store
        self.run_id = run_id
        self.writer = writer
        self.gateway = Gateway(prep.models, cache=cache, sink=writer.sink("calls"))
        self.tasks = {t.id: t for t in prep.tasks}
        self.designs = {d.label: d for d in prep.designs}
        self._pool = pool_design(prep.suite.cot_sc.agent)
        prep.library.add("design", self._pool)
        from ..routing import RouteHook

        # Agents with `model: {route: HANDBOOK}` get a model per call; decisions go to the store.
        self.route_hook = RouteHook(prep.library, self.gateway, writer.sink("routing_decisions"))

    def _ctx(self, design_label: str, task: TaskInstance, seed: int, purpose: str, budget):
        from ..runtime import RunContext

        tags = {"run_id": self.run_id, "design": design_label, "task_id": task.id, "seed": seed, "purpose": purpose}
        return RunContext(gateway=self.gateway, library=self.prep.library, budget=budget, tags=tags,
                          node_sink=self.writer.sink("nodes"), seed=seed, tie=self.prep.suite.cot_sc.tie,
                          route=self.route_hook.bind(run_id=self.run_id, design=design_label, task_id=task.id,
                                                     seed=seed))

    async def run_cell(self, cell: Cell) -> bool:
        """Run one cell; True if it completed without a failed status."""
        if cell.kind == "pool":
            return await self._pool_cell(cell)
        return await self._design_cell(cell)

    async def _design_cell(self, cell: Cell) -> bool:
        from ..runtime import run_design

        task = self.tasks[cell.task_id]
        entry = self.designs[cell.design]
        ctx = self._ctx(entry.label, task, cell.seed, "design", self.prep.suite.budget)
        t0 = time.perf_counter()
        try:
            from ..design.runners import get_designer

            designer = get_designer(entry.name)
            if designer is not None:  # a per-task designer (e.g. meta-designer) writes its own designs
                res = await designer(task, ctx, entry.params, design_sink=self.writer.sink("designs"))
            else:
                res = await run_design(entry.name, task, ctx, params=entry.params)
            sc = score(task, res.answers)
            row = dict(answer=", ".join(res.answers), correct=sc.correct, partial=sc.partial,
                       prompt_tokens=res.prompt_tokens, completion_tokens=res.completion_tokens, tokens=res.tokens,
                       cost_usd=res.cost_usd, calls=res.calls, wall_s=res.wall_s, status=res.status,
                       error=res.error, detail=json.dumps(res.detail, default=str))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a harness-level failure is recorded as a failed cell, not lost
            row = dict(answer="", correct=False, partial=0.0, prompt_tokens=0, completion_tokens=0, tokens=0,
                       cost_usd=0.0, calls=0, wall_s=time.perf_counter() - t0, status="failed",
                       error=f"{type(exc).__name__}: {exc}", detail=None)
        if row["status"] != "failed":
            self.route_hook.observe_task(task.id, float(bool(row["correct"])))
        self.writer.add("results", {
            "run_id": self.run_id, "design": entry.label, "design_name": entry.name, "task_id": task.id,
            "seed": cell.seed, "source": task.source, "axis": task.axis, "axis_value": task.axis_value,
            "gold": ", ".join(task.answers), "simulated": self.prep.simulated, "ts": time.time(), **row})
        return row["status"] != "failed"

    async def _pool_cell(self, cell: Cell) -> bool:
        from ..runtime import run_design

        task = self.tasks[cell.task_id]
        k_max = self.prep.suite.cot_sc.k_max

        async def one(j: int):
            ctx = self._ctx(POOL_DESIGN, task, cell.seed, "pool", None)
            ctx.seed = cell.seed * 1000 + j  # distinct sample indices: k_max distinct calls
            ctx.tags["seed"] = cell.seed
            return await run_design(self._pool, task, ctx)

        results = await asyncio.gather(*[one(j) for j in range(k_max)])
        ok = True
        for j, res in enumerate(results):
            sc = score(task, res.answers)
            answer = ", ".join(res.answers) if res.answers and any(res.answers) else None
            ok &= res.status != "failed"
            self.writer.add("pool", {
                "run_id": self.run_id, "task_id": task.id, "seed": cell.seed, "sample_index": j, "answer": answer,
                "correct": sc.correct, "prompt_tokens": res.prompt_tokens, "completion_tokens": res.completion_tokens,
                "tokens": res.tokens, "cost_usd": res.cost_usd, "error": res.error, "ts": time.time()})
        return ok


async def run_cells(runner: CellRunner, cells: list[Cell], concurrency: int, progress: Progress,
                    on_progress: Callable[[], None] | None = None) -> None:
    """Run cells with at most ``concurrency`` in flight; flush the writer off the loop periodically."""
    sem = asyncio.Semaphore(concurrency)
    writer = runner.writer

    async def one(cell: Cell) -> None:
        async with sem:
            ok = await runner.run_cell(cell)
        progress.done += 1
        progress.failed += not ok
        if writer.due():
            await writer.aflush()
        if on_progress:
            on_progress()

    tasks = [asyncio.ensure_future(one(c)) for c in cells]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        await writer.aflush()


# ----- the whole run ------------------------------------------------------------------------------
@dataclass
class RunSummary:
    run_id: str
    store: Path
    total_cells: int
    skipped: int
    ran: int
    failed: int
    wall_s: float
    status: str
    cleaned: dict[str, int]
    stats: dict[str, Any]
    simulated: bool


def cache_path(store_path: Path) -> Path:
    return store_path.with_suffix(".cache.sqlite")


async def run_suite(opts: RunOptions, display: Any = None) -> RunSummary:
    """Run (or resume) a suite. ``display`` is an optional progress display (see progress.py)."""
    from .workers import run_sharded

    prep = prepare(opts)
    store_path = opts.store or prep.store_path
    use_cache = prep.suite.cache if opts.cache is None else opts.cache
    concurrency = opts.concurrency or prep.suite.concurrency
    k_max = prep.suite.cot_sc.k_max
    t0 = time.monotonic()
    store = Store(store_path)
    try:
        run_id = opts.run_id or (None if opts.new else find_run(store, prep.suite.name, prep.config_hash))
        run_id = run_id or new_run_id(prep.suite.name)
        from .workers import merge_parts

        merge_parts(store, run_id, store_path)
        cleaned = clean_unfinished(store, run_id, k_max)
        all_cells = prep.cells()
        done = done_cells(store, run_id, k_max)
        todo = [c for c in all_cells if c.key not in done]
        config = prep.suite.model_dump(mode="json", by_alias=True)
        config.update({"_overrides": opts.overrides, "_limit": opts.limit})
        start_run(store, run_id, prep.suite.name, config, {a: m.id for a, m in prep.models.items()},
                  prep.simulated, command=" ".join(sys.argv))
        store.sql("UPDATE runs SET config_hash = ? WHERE run_id = ?", [prep.config_hash, run_id])
        progress = Progress(total=len(all_cells), skipped=len(all_cells) - len(todo))
        progress.done = progress.skipped
        stats: dict[str, Any] = {}
        status = "finished"
        if display:
            display.start(prep, run_id, progress)
        try:
            if opts.workers > 1 and len(todo) > 1:
                stats = await run_sharded(opts, prep, run_id, store, store_path, todo, concurrency, progress, display)
            elif todo:
                cache = ResponseCache(cache_path(Path(store_path))) if use_cache else None
                writer = StoreWriter(store, flush_rows=50_000, flush_interval_s=2.0)
                runner = CellRunner(prep, store, run_id, cache, writer)
                if display:
                    display.attach(runner.gateway.stats)
                try:
                    await run_cells(runner, todo, concurrency, progress,
                                    (lambda: display.update()) if display else None)
                finally:
                    writer.flush()
                    if cache:
                        cache.close()
                stats = dict(runner.gateway.stats)
        except (asyncio.CancelledError, KeyboardInterrupt):
            status = "interrupted"
            raise
        except BaseException:
            status = "failed"
            raise
        finally:
            if status != "finished":
                finish_run(store, run_id, status)
            if display:
                display.stop()
        if k_max and prep.suite.cot_sc.enabled:
            compute_curve(store, run_id, prep.suite.cot_sc, groups_of_tasks(prep.tasks))
            compute_paired(store, run_id, prep.suite.stats)
        from ..routing import fill_outcomes

        fill_outcomes(store, run_id)
        finish_run(store, run_id, "finished")
        return RunSummary(run_id, Path(store_path), len(all_cells), progress.skipped,
                          progress.done - progress.skipped, progress.failed, time.monotonic() - t0, "finished",
                          cleaned, stats, prep.simulated)
    finally:
        store.close()


def main_pid() -> int:
    return os.getpid()
