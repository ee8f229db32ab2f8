"""``masbench run --until-decided``: the batch loop (docs/sequential.md).

Per batch (its tasks from :class:`~.sequence.SequencePlan`, for every seed): the CoT-SC pool's
cells, the baselines' (``cot``/``cot-sc``: they follow the pool) and the cells of the designs not
yet decided; then the curve of the run so far and a look (:func:`~.sequential_look.take_look`).
A decided design receives no more tasks. The loop ends when every non-baseline design is decided
or the task cap is drawn.

Resume: the loop starts after the last look the store holds, with the decisions it holds; the
batch after it is rebuilt from them, its finished cells are skipped (a process killed mid-batch
finishes that batch, then looks), so a resumed run makes the decisions of an uninterrupted one, at
the same n.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from ..store import Store
from .cells import Cell
from .curve import compute_curve, groups_of_tasks
from .prepare import Prepared
from .resume import done_cells
from .sequence import BASELINES
from .sequential_look import look_line, looked, take_look


def family_of(prep: Prepared) -> list[str]:
    """The designs a sequential run decides (non-baselines, in the suite's order)."""
    return [d.label for d in prep.designs if d.name not in BASELINES]


def batch_cells(prep: Prepared, j: int, undecided: list[str]) -> list[Cell]:
    """The cells of batch ``j``: pool and baselines (if a design is undecided) and the undecided designs."""
    assert prep.sequence is not None
    if not undecided:
        return []
    baselines = {d.label for d in prep.designs if d.name in BASELINES}
    return prep.cells(prep.sequence.batch_tasks(j), set(undecided) | baselines)


async def run_until_decided(prep: Prepared, store: Store, run_id: str,
                            execute: Callable[[list[Cell]], Awaitable[None]],
                            say: Callable[[str], None] | None = None) -> int:
    """Run batches and looks until every design is decided or the cap is drawn; returns the
    number of looks this call made. ``execute`` runs a list of cells (the run's engine)."""
    plan = prep.sequence
    assert plan is not None, "not a sequential run"
    family = family_of(prep)
    cot_sc, spec = prep.suite.cot_sc, prep.suite.stats
    state = looked(store, run_id)
    made = 0
    while state.looks < plan.n_batches and len(state.frozen) < len(family):
        undecided = [d for d in family if d not in state.frozen]
        done = done_cells(store, run_id, cot_sc.k_max)
        await execute([c for c in batch_cells(prep, state.looks, undecided) if c.key not in done])
        compute_curve(store, run_id, cot_sc, groups_of_tasks(prep.tasks), prep.suite.budget.basis)
        results = take_look(store, run_id, plan, family, cot_sc.k_max, spec, state)
        made += 1
        state = looked(store, run_id)  # what the store now holds: the next batch is built from it alone
        if say:
            say(look_line(state.looks, plan, results))
    return made


def rows_of(store: Store, query: str, params: list) -> list[dict[str, Any]]:
    """A query's rows as dicts by column name."""
    with store.lock:
        cur = store.con.execute(query, params)
        cols = [c[0] for c in cur.description or []]
        return [dict(zip(cols, r)) for r in cur.fetchall()]


def decisions(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Per design of a sequential run, its row of ``sequential_decisions`` (none for a fixed-n run)."""
    return rows_of(store, "SELECT * FROM sequential_decisions WHERE run_id = ? ORDER BY design", [run_id])


def run_saving(store: Store, run_id: str) -> dict[str, Any] | None:
    """A sequential run's row of ``sequential_run_saving`` (None for a fixed-n run)."""
    rows = rows_of(store, "SELECT * FROM sequential_run_saving WHERE run_id = ?", [run_id])
    return rows[0] if rows else None


__all__ = ["batch_cells", "decisions", "family_of", "rows_of", "run_saving", "run_until_decided"]
