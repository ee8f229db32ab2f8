"""Run a suite: designs × tasks × seeds, plus the CoT-SC pool, into a DuckDB store; resumable.

A cell is done when its rows are acknowledged (flushed). Rerunning the same suite with the same
configuration continues the latest matching run: finished cells are skipped, rows of cells that
were in flight when the previous process died are deleted and those cells run again (the response
cache makes that cheap). The run's lifecycle is a :class:`~masbench.store.RunSession`: Ctrl-C
flushes what is finished and marks the run ``interrupted``; any other exception marks it ``failed``
with the reason (a misconfigured model's :class:`~.failures.RunAborted` message).

With ``until_decided`` the cells run in batches of a seeded task order, with an anytime-valid
look after each, and decided designs stop receiving tasks (:mod:`.until_decided`).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import telemetry
from ..bench import read_lines
from ..llm import overrides_json
from ..store import LiveBoard, RunSession, fill_outcomes, new_run_id, run_config, set_run_plan
from ..store.db import DRIVER_MEMORY_LIMIT, STATS_MEMORY_LIMITS
from .engine import EngineContext, engine_class, engine_name
from .engine_parts import merge_parts
from .memory import fixed_mmap_threshold, settle, under_limits
from .progress import Progress
from .failures import failure_reasons, supersede_failed
from .prepare import Prepared, RunOptions, prepare
from .protocol import protocol_point
from .resume import clean_unfinished, done_cells, find_run, nothing_cleaned


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
    protocol: str | None = None
    """The suite's CoT-SC protocol point on the curve (see :mod:`.protocol`)."""
    failed_cells: int = 0
    """Cells of the run (this session's and earlier ones kept) whose status is failed."""
    reasons: list[tuple[str, int]] | None = None
    """The most frequent failure reasons with their cell counts (top 3)."""
    decisions: list[dict[str, Any]] = field(default_factory=list)
    """A ``--until-decided`` run: per design, its row of ``sequential_decisions``."""
    saving: dict[str, Any] | None = None
    """A ``--until-decided`` run: its row of ``sequential_run_saving`` (calls made vs a fixed-n run)."""


async def run_suite(opts: RunOptions, display: Any = None) -> RunSummary:
    """Run (or resume) a suite. ``display`` is an optional progress display (see progress.py)."""
    fixed_mmap_threshold()  # the driver's large arrays go back to the system when freed (memory.py)
    engine_cls = engine_class(opts)  # an unknown --engine, or ray without its extra: stop before the store is touched
    # a sharding driver lists its cells from the tasks' ids and groups, the tasks loaded in a child
    sharding = not opts.until_decided and getattr(engine_cls, "shards", lambda _: False)(opts)
    prep = prepare(opts, tasks=not sharding)
    shown = getattr(display, "sources", None)
    if shown:  # rows read per source, and a warning where a cap cut a split (never a silent 10)
        shown(read_lines(prep.reads))
    telemetry.decide()  # telemetry on without its extra: say so before anything is opened
    store_path = opts.store or prep.store_path
    use_cache = prep.suite.cache if opts.cache is None else opts.cache
    concurrency = opts.concurrency or prep.suite.concurrency
    k_max = prep.suite.cot_sc.k_max
    seq = prep.sequence
    t0 = time.monotonic()
    # the session takes the writer lock first: a second writer fails there, having touched nothing;
    # it marks the run finished, interrupted or failed (with the reason) however this block ends
    # the driver's DuckDB cache and working memory are bounded whatever the run's size (db.DRIVER_MEMORY_LIMIT)
    with RunSession(store_path, flush_rows=50_000, flush_interval_s=2.0, memory_limit=DRIVER_MEMORY_LIMIT) as session:
        store = session.store
        run_id = opts.run_id or (None if opts.new else find_run(store, prep.suite.name, prep.config_hash))
        # a run id minted here (time and 24 random bits) has no row and no part file yet: nothing of it
        # to merge, supersede, clean or skip (their queries were ~40 ms before a new run's first call)
        fresh = run_id is None
        run_id = run_id or new_run_id(prep.suite.name)
        if not fresh:
            merge_parts(store, run_id, store_path, opts.parts)  # a killed sharded run's parts: kept, merged once
        # a sequential run keeps its failed cells: the looks already made counted them as they were
        retry = opts.retry_failed and seq is None and not fresh
        superseded = supersede_failed(store, run_id) if retry else {"design": 0, "pool": 0}
        cleaned = nothing_cleaned() if fresh else clean_unfinished(store, run_id, k_max)
        cleaned.update({f"superseded_{k}": v for k, v in superseded.items()})
        all_cells = prep.cells() if seq is None else prep.cells(seq.order)  # sequential: the cap's cells, at most
        done = set() if fresh else done_cells(store, run_id, k_max)
        todo = [c for c in all_cells if c.key not in done]
        n_cells = len(all_cells)
        del all_cells, done  # from here the driver holds the cells to run, nothing per cell done
        config = run_config(prep.suite, overrides_json(prep.overrides), opts.limit, seq.identity() if seq else None)
        session.start(run_id, prep.suite.name, config, {a: m.id for a, m in prep.models.items()}, prep.simulated,
                      command=" ".join(sys.argv), transcripts=prep.transcripts)
        set_run_plan(store, run_id, prep.config_hash, n_cells)
        progress = Progress(total=n_cells, skipped=n_cells - len(todo))
        progress.done = progress.skipped
        if display:
            display.start(prep, run_id, progress)
        session.share()  # from here on the store is readable between flushes (masbench status)
        run_span = telemetry.run(run_id, prep.suite.name, cells=len(todo), simulated=prep.simulated)  # off: no-op
        ctx = EngineContext(opts, prep, run_id, session, Path(store_path), use_cache, concurrency, progress, display,
                            run_span)
        ctx.board = LiveBoard(Path(store_path), run_id, engine_name(opts), opts.workers)
        engine = engine_cls(ctx)
        if prep.index is not None:  # a sharding driver: no task here, only their ids and groups
            groups = prep.index.groups
            # one cell runs here (it needs its task); none (a resume with every cell done) needs no task
            if todo and not getattr(engine, "workers_prepare", lambda _: False)(todo):
                prep.tasks = prepare(opts).tasks
        else:
            groups = None  # the tasks' groups (numpy's) are made after the cells ran, for the curve
        try:
            if seq is None:
                await engine.run(todo)
                del todo  # the cells ran: nothing per cell is held past this point
            else:
                from .until_decided import run_until_decided  # deferred: start-up (a sequential run's loop)

                await run_until_decided(prep, store, run_id, engine.run, getattr(display, "note", None))
        finally:
            stats = await engine.aclose()
            ctx.board.remove()
            if display:
                display.stop()
        settle(store)  # the merge's working memory and cached blocks are let go before the statistics
        if k_max and prep.suite.cot_sc.enabled:
            from .curve import compute_curve  # deferred: start-up (numpy loads after the cells ran)
            from .task_groups import TaskGroups  # deferred with the line above

            groups = groups if groups is not None else TaskGroups.of_tasks(prep.tasks)  # what the curve needs of a task
            # the statistics read the store a slice at a time under a smaller DuckDB limit (what it
            # caches grows with the store up to its limit: db.STATS_MEMORY_LIMITS), raised if DuckDB runs out
            note = getattr(display, "note", None)
            suite = prep.suite
            under_limits(store, lambda: compute_curve(store, run_id, suite.cot_sc, groups, suite.budget.basis),
                         STATS_MEMORY_LIMITS, note)
            del groups
            settle(store)
            # deferred: start-up (the paired tests' statistics load after the cells ran, not before the first call)
            from .paired_tests import compute_paired

            under_limits(store, lambda: compute_paired(store, run_id, suite.stats), STATS_MEMORY_LIMITS, note)
            settle(store)
            store.set_memory_limit(DRIVER_MEMORY_LIMIT)
        fill_outcomes(store, run_id)
        point = protocol_point(store, run_id, prep.suite)
        failed_cells, reasons = failure_reasons(store, run_id)
        seq_rows: list[dict[str, Any]] = []
        saving: dict[str, Any] | None = None
        if seq:
            from .until_decided import decisions, run_saving  # deferred: start-up (a sequential run's rows)

            seq_rows, saving = decisions(store, run_id), run_saving(store, run_id)
    await telemetry.aflush()  # every span exported before the command returns (off the loop)
    return RunSummary(run_id, Path(store_path), n_cells, progress.skipped,
                      progress.done - progress.skipped, progress.failed, time.monotonic() - t0, "finished",
                      cleaned, stats, prep.simulated, point.line() if point else None, failed_cells, reasons,
                      seq_rows, saving)


__all__ = ["Prepared", "RunOptions", "RunSummary", "prepare", "run_suite"]
