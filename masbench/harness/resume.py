"""Resume bookkeeping: which run a rerun continues, which cells are done, and deleting the rows
of cells that were in flight when a previous process died (so resumed cells leave no duplicates).
The queries are the store's (:mod:`masbench.store.cells` declares which tables hold per-cell
rows); this module speaks in the harness's :class:`~.cells.Cell` keys."""

from __future__ import annotations

from ..store import Store, done_keys, latest_run
from ..store import clean_unfinished as _clean
from .cells import Cell

_CLEANED = ("calls", "nodes", "pool_calls", "pool")
"""What the run summary reports of the cleaning: design-cell calls and nodes, pool-cell calls and samples."""


def find_run(store: Store, suite: str, chash: str) -> str | None:
    """The run a rerun of ``suite`` with configuration hash ``chash`` continues (the newest)."""
    return latest_run(store, suite, chash)


def clean_unfinished(store: Store, run_id: str, k_max: int) -> dict[str, int]:
    """Delete rows of cells that never completed (their calls/nodes without a result; pool cells
    with fewer than k_max samples), so resumed cells leave no duplicates."""
    n = _clean(store, run_id, k_max)
    return {k: n.get(k, 0) for k in _CLEANED}


def nothing_cleaned() -> dict[str, int]:
    """What :func:`clean_unfinished` reports of a run with no rows (a new run: not queried)."""
    return dict.fromkeys(_CLEANED, 0)


def done_cells(store: Store, run_id: str, k_max: int) -> set[str]:
    keys = done_keys(store, run_id, k_max)
    return ({Cell("design", t, s, d).key for d, t, s in keys["design"]}
            | {Cell("pool", t, s).key for t, s in keys["pool"]})


__all__ = ["clean_unfinished", "done_cells", "find_run", "nothing_cleaned"]
