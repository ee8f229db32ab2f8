"""A per-task designer (``meta-designer``, ``holistic-designer``) over a prepared suite's tasks,
run by the harness's own cell runner exactly like a design entry of the suite — into a new run,
or into an existing harness run (``run_id``) so it is compared against that run's CoT-SC curve.
Resumable per (label, task, seed). Its lifecycle is a :class:`~masbench.store.RunSession`: a new
run is marked finished, interrupted or failed (with the reason) however it ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..store import RunSession, Store, designer_summary, ensure_views, new_run_id, run_config
from .engine_inprocess import CellRunner, Progress, run_cells
from .cells import Cell, DesignEntry
from .prepare import Prepared
from .resume import done_cells


async def run_designer_suite(prep: Prepared, store: Store | RunSession | str | Path, designer: str = "meta-designer",
                             params: dict[str, Any] | None = None, *, run_id: str | None = None, label: str | None = None,
                             seed: int = 0, concurrency: int = 4, gateway: Any = None) -> dict[str, Any]:
    """Run ``designer`` (with ``params``) on every task of ``prep``; returns the run's summary for it.
    ``store``: an open session (its writer gets the rows), or a store (file or open) to open one on."""
    if isinstance(store, RunSession):
        return await _run(prep, store, designer, params, run_id, label, seed, concurrency, gateway)
    with RunSession(store, what=f"masbench design {designer}", flush_rows=5000) as session:
        return await _run(prep, session, designer, params, run_id, label, seed, concurrency, gateway)


async def _run(prep: Prepared, session: RunSession, designer: str, params: dict[str, Any] | None, run_id: str | None,
               label: str | None, seed: int, concurrency: int, gateway: Any) -> dict[str, Any]:
    store = session.store
    label = label or designer
    ensure_views(store)
    if run_id is None:
        run_id = session.start(new_run_id(f"{prep.suite.name}-{designer}"), prep.suite.name, run_config(prep.suite),
                               {a: m.id for a, m in prep.models.items()}, prep.simulated,
                               command=f"masbench design {designer}", transcripts=prep.transcripts)
    else:
        session.attach(run_id)
    entry = DesignEntry(label, designer, dict(params or {}))
    done = done_cells(store, run_id, prep.suite.cot_sc.k_max)
    cells = [c for c in (Cell("design", t.id, seed, label) for t in prep.tasks) if c.key not in done]
    runner = CellRunner(prep, store, run_id, None, session.writer, gateway=gateway, entries=[entry])
    await run_cells(runner, cells, concurrency, Progress(total=len(cells)))
    session.writer.flush()
    return {"run_id": run_id, "design": label, "ran": len(cells), "skipped": len(prep.tasks) - len(cells),
            **designer_summary(store, run_id, label)}

__all__ = ["run_designer_suite"]
