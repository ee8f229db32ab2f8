"""The CoT-SC curve from one pool of samples: maj@k for every k ≤ k_max, no reruns.

For each (task, seed) cell the pool holds k_max independent CoT samples. The cell's maj@k is the
expected vote credit over *all* k-subsets of its pool, computed exactly by counting
(:func:`masbench.harness.stats.exact_majk`) under the suite's tie rule (``cot_sc.tie``), so the
curve and every ``majority`` node break ties the same way. Subsets of an i.i.d. pool are i.i.d.
draws, so this is unbiased for maj@k of the sampling distribution (and has the least variance of
any subset-based estimate: it averages all of them).

Per cell the values go to ``cot_sc_task_curve`` (the paired tests need them); the group curve
``cot_sc_curve`` is their mean over cells with a percentile bootstrap CI (tasks resampled, each
with all its seeds: seeds of one task are not independent evidence). Cost
at k is k times the mean sample cost (tokens, calls, USD, and the spend on the suite's budget
basis): what CoT-SC@k would spend in expectation (the vote itself is free).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..bench.types import TaskInstance
from ..spec import CotScSpec
from ..store import Store, StoreWriter
from ..store.rows import CurveRow, TaskCurveRow
from .stats.majk import exact_majk
from .task_groups import Group, TaskGroups, group_of

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class CurvePoint:
    k: int
    n_tasks: int
    accuracy: float
    ci_lo: float
    ci_hi: float
    tokens: float
    calls: float
    cost_usd: float


def cell_curve(answers: list[str | None], correct: list[bool], k_max: int, tie: str = "split", *,
               seed: int = 0, task_id: str = "") -> np.ndarray:
    """Exact maj@k, k = 1..k_max, of one cell's pool (a pool short of k_max samples keeps its
    value at its own size for larger k)."""
    vals = exact_majk(answers, correct, tie, seed=seed, task_id=task_id)
    if len(vals) == 0:
        return np.zeros(k_max)
    if len(vals) < k_max:
        vals = np.concatenate([vals, np.full(k_max - len(vals), vals[-1])])
    return vals[:k_max]


_BAND_CELLS = 1 << 18
"""Resampled task indices per chunk of the band's bootstrap (bounded memory at any n): a chunk
holds its indices and their k_max values, 8·(1 + k_max + 1) bytes each: 12.6 MB at k_max = 4
(at 1 << 21 it was ~100 MB, the largest part of the curve's peak; the draws and sums per resample
are the same whatever the chunk: numpy's stream is drawn in order)."""


def task_bootstrap(per_cell: np.ndarray, tasks: np.ndarray | None, bootstrap: int, seed: int) -> np.ndarray:
    """B resampled means (B × k_max) of the cells' values with *tasks* drawn with replacement (a
    task's seeds stay together: the cluster bootstrap; a resample's mean is its cells' sum over
    its cell count). ``tasks``: each cell's task (None: every cell its own task)."""
    n, k_max = per_cell.shape
    if tasks is None:
        inv, t = np.arange(n), n
    else:
        _, inv = np.unique(np.asarray(tasks), return_inverse=True)
        t = int(inv.max()) + 1
    sums = np.zeros((t, k_max))
    np.add.at(sums, inv, per_cell)
    counts = np.bincount(inv, minlength=t).astype(float)
    rng = np.random.default_rng(seed)
    out = np.empty((bootstrap, k_max))
    step = max(1, _BAND_CELLS // max(t, 1))
    for start in range(0, bootstrap, step):
        idx = rng.integers(0, t, size=(min(step, bootstrap - start), t))
        out[start:start + len(idx)] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)[:, None]
    return out


def build_curve(per_cell: np.ndarray, tokens: np.ndarray, usd: np.ndarray, bootstrap: int = 500,
                seed: int = 0, tasks: np.ndarray | None = None) -> list[CurvePoint]:
    """The group curve from per-cell maj@k (cells × k_max) and per-cell mean sample cost; the band
    resamples tasks (``tasks``: each cell's task id; None: cells are tasks)."""
    n, k_max = per_cell.shape if per_cell.size else (0, 0)
    if n == 0:
        return []
    acc = per_cell.mean(axis=0)
    n_tasks = n if tasks is None else int(np.unique(np.asarray(tasks)).size)  # no Python object per cell
    if bootstrap > 0 and n_tasks > 1:
        lo, hi = np.percentile(task_bootstrap(per_cell, tasks, bootstrap, seed), [2.5, 97.5], axis=0)
    else:
        lo = hi = acc
    t, u = float(tokens.mean()), float(usd.mean())
    return [CurvePoint(k, n, float(acc[k - 1]), float(lo[k - 1]), float(hi[k - 1]), k * t, float(k), k * u)
            for k in range(1, k_max + 1)]


def groups_of_tasks(tasks: list[TaskInstance]) -> dict[str, tuple[str, int | None]]:
    """task id → its group: (axis, axis value) for tasks with an axis, else (source, None)."""
    return {t.id: group_of(t) for t in tasks}


def groups_of_results(store: Store, run_id: str) -> dict[str, tuple[str, int | None]]:
    """The same mapping read back from a run's result rows (for recomputing an old run)."""
    return {t: (a, None if v is None else int(v)) for t, a, v in store.sql(
        "SELECT DISTINCT task_id, coalesce(axis, source), axis_value FROM results WHERE run_id = ?", [run_id])}


POOL_PAGE_CELLS = 5000
"""Pool cells read per query by :func:`compute_curve` (its memory is one page of samples, plus
8·(k_max + 3) + 8 bytes a cell in typed arrays)."""


def _pool_pages(store: Store, run_id: str, cells: int = POOL_PAGE_CELLS) -> Iterator[pd.DataFrame]:
    """The run's pool samples in (task id, seed, sample index) order, as frames of ``cells`` whole
    cells. The cells are cut into pages once (one query: each page's first cell), then each page is
    its own query (its cells from its first to the next page's), so the store's connection may be
    released between pages (a running writer's does at every flush). A page's query filters the
    pool and sorts only its own rows: keyed on the last cell read, each page de-duplicated and
    sorted the rest of the pool (quadratic in the cells: 7.5 CPU-s of paging at 300,000)."""
    firsts = store.sql(_PAGE_FIRSTS, [run_id, int(cells)])
    for (lo_task, lo_seed), nxt in zip(firsts, [*firsts[1:], None]):
        params: dict[str, object] = {"run_id": run_id, "lo_task": lo_task, "lo_seed": lo_seed}
        upto = ""
        if nxt is not None:
            upto = "AND (task_id < $hi_task OR (task_id = $hi_task AND seed < $hi_seed))"
            params |= {"hi_task": nxt[0], "hi_seed": nxt[1]}
        df = store.df(f"""
            SELECT task_id, seed, sample_index, answer, correct, tokens, cost_usd, budget_spent FROM pool
            WHERE run_id = $run_id AND (task_id > $lo_task OR (task_id = $lo_task AND seed >= $lo_seed)) {upto}
            ORDER BY task_id, seed, sample_index""", params)
        if len(df):
            yield df


_PAGE_FIRSTS = """
    SELECT task_id, seed FROM (
        SELECT task_id, seed, row_number() OVER (ORDER BY task_id, seed) - 1 AS i
        FROM (SELECT DISTINCT task_id, seed FROM pool WHERE run_id = ? AND task_id IS NOT NULL AND seed IS NOT NULL))
    WHERE i % ? = 0 ORDER BY task_id, seed"""
"""Each page's first cell: every ``cells``-th of the run's pool cells in (task id, seed) order (a
sample without a task id or seed is in no cell, as it was in no page's join before)."""


def compute_curve(store: Store, run_id: str, cot_sc: CotScSpec, groups_of: TaskGroups | Mapping[str, Group],
                  basis: str = "tokens") -> int:
    """(Re)build the run's per-cell and group CoT-SC curves from its pool: overall, and per group
    (``groups_of``: task id → (axis or source, axis value), as a dict or held compactly —
    :class:`~.task_groups.TaskGroups`) — the groups the views use; a pool sample of a task not
    there is skipped; ``basis``:
    the suite's budget basis (the curve's ``budget_spent`` column).

    The pool is read a page of cells at a time and each page's per-cell rows are written before the
    next is read: what is held across pages is, per cell, no Python object but 8·(k_max + 3) + 8
    bytes in typed arrays — its k_max maj@k values, mean sample tokens, USD and budget spend, and
    a task and a group code: 64 bytes a cell at k_max = 4 (≈ 75 measured with the arrays' slack and
    a group's spends copied, ``tests/harness/test_curve.py``; ≈ 320 before, in Python lists)."""
    store.sql("DELETE FROM cot_sc_task_curve WHERE run_id = ?", [run_id])
    w = StoreWriter(store)
    groups = groups_of if isinstance(groups_of, TaskGroups) else TaskGroups.of(groups_of)
    cells = _read_cells(store, run_id, cot_sc, groups, w)
    rows: list[CurveRow] = []
    for (axis, value), idx in cells.groups():
        per_cell, tok, usd, tasks, spent = cells.select(idx)
        spent = spent[~np.isnan(spent)]
        mean_spent = float(np.mean(spent)) if spent.size else None
        for pt in build_curve(per_cell, tok, usd, bootstrap=cot_sc.bootstrap, tasks=tasks):
            rows.append(CurveRow(run_id=run_id, axis=axis, axis_value=value, k=pt.k, n_tasks=pt.n_tasks,
                                 accuracy=pt.accuracy, ci_lo=pt.ci_lo, ci_hi=pt.ci_hi, tokens=pt.tokens,
                                 calls=pt.calls, cost_usd=pt.cost_usd, budget_basis=basis,
                                 budget_spent=None if mean_spent is None else pt.k * mean_spent))
    w.flush()
    store.sql("DELETE FROM cot_sc_curve WHERE run_id = ?", [run_id])
    if rows:
        for r in rows:
            w.put(r)
        w.flush()
    return len(rows)


def _read_cells(store: Store, run_id: str, cot_sc: CotScSpec, groups: TaskGroups, w: StoreWriter) -> _Cells:
    """Read the pool page by page: each kept cell's maj@k rows to ``w``, its values to the cells
    returned (nothing of a page outlives it; a page's tasks are looked up in ``groups`` at once)."""
    k_max, tie = cot_sc.k_max, cot_sc.tie
    cells = _Cells(k_max)
    for df in _pool_pages(store, run_id, POOL_PAGE_CELLS):
        spend = _cell_spend(df)
        ids = [str(t) for t in df["task_id"].unique().tolist()]
        page = dict(zip(ids, groups.codes(ids).tolist()))
        for task_id, seed, answers, correct, tokens, cost in _pool_cells(df):
            code = page[task_id]
            if code < 0:
                continue
            v = cell_curve(answers, correct, k_max, tie, seed=seed, task_id=task_id)
            cells.add(task_id, groups.groups[code], v, tokens, cost, spend.get((task_id, seed), _NAN))
            for k in range(1, k_max + 1):
                w.put(TaskCurveRow(run_id=run_id, task_id=task_id, seed=seed, k=k, accuracy=float(v[k - 1]),
                                   tokens=k * tokens, cost_usd=k * cost))
    return cells


_NAN = float("nan")
_ALL = ("all", None)


class _Cells:
    """The kept cells' values for the group curves, in the order read, in typed arrays (no Python
    object per cell): k_max maj@k values, mean sample tokens, USD and budget spend (NaN: none),
    a task code and a group code. The task code counts up at each new task id: the pool is read in
    task id order (DuckDB's and Python's code point order, as numpy's), so codes sort as the ids
    do and ``np.unique`` gives the band's bootstrap the same task indices as the ids would."""

    def __init__(self, k_max: int) -> None:
        self.k_max = k_max
        self.vals, self.tok, self.usd, self.spend = array("d"), array("d"), array("d"), array("d")
        self.task, self.group = array("i"), array("i")
        self.codes: dict[tuple, int] = {}
        self.last: str | None = None

    def add(self, task_id: str, group: tuple, v: np.ndarray, tokens: float, usd: float, spend: float) -> None:
        if self.last is not None and task_id < self.last:
            raise RuntimeError(f"pool cells out of task id order: {task_id!r} after {self.last!r}")
        self.codes.setdefault(_ALL, 0)
        code = self.codes.setdefault(group, len(self.codes))
        self.task.append(0 if self.last is None else self.task[-1] + (task_id != self.last))
        self.last = task_id
        self.vals.frombytes(np.ascontiguousarray(v, dtype=np.float64).tobytes())
        self.tok.append(tokens)
        self.usd.append(usd)
        self.spend.append(spend)
        self.group.append(code)

    def groups(self) -> Iterator[tuple[tuple, np.ndarray | slice]]:
        """Each group (all cells first, then in order of first appearance) and its cells: all of
        them in order, a cell twice where its own group is also ``("all", None)`` (as when each
        cell was listed under both of its groups)."""
        group = np.frombuffer(self.group, dtype=np.int32)
        for key, code in self.codes.items():
            if code == 0:
                own = group == 0
                yield key, np.repeat(np.arange(group.size), 1 + own) if own.any() else slice(None)
            else:
                yield key, np.flatnonzero(group == code)

    def select(self, idx: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Cells ``idx``: their values (cells × k_max), tokens, USD, task codes and budget spends."""
        per_cell = np.frombuffer(self.vals, dtype=np.float64).reshape(-1, self.k_max)
        return (per_cell[idx], np.frombuffer(self.tok)[idx], np.frombuffer(self.usd)[idx],
                np.frombuffer(self.task, dtype=np.int32)[idx], np.frombuffer(self.spend)[idx])


def _pool_cells(df) -> Iterator[tuple[str, int, list[str | None], list[bool], float, float]]:
    """The pool's cells in (task id, seed) order: task id, seed, its samples' answers (None: no
    vote — pandas hands NULLs over as NaN, which would vote as one answer) and correctness in
    sample order, and its mean tokens and USD per sample (NULLs skipped, as pandas' ``mean``).
    Columns are read once and grouped by position (a pandas ``groupby`` iterated cell by cell cost
    ~1 ms a cell: seconds at 10k tasks)."""
    if not len(df):
        return
    cells: dict[tuple[str, int], list[int]] = {}
    for i, key in enumerate(zip(df["task_id"].tolist(), df["seed"].tolist())):
        cells.setdefault(key, []).append(i)
    # a NULL correct (the column is nullable) is not correct, as in the result views' coalesce(correct, false)
    answers, correct = df["answer"].tolist(), df["correct"].astype("boolean").fillna(False).astype(bool).tolist()
    tokens, usd = df["tokens"].astype(float).to_numpy(), df["cost_usd"].astype(float).to_numpy()
    for (task_id, seed), idx in sorted(cells.items()):
        yield (str(task_id), int(seed), [a if isinstance(a, str) else None for a in (answers[i] for i in idx)],
               [correct[i] for i in idx], _mean(tokens[idx]), _mean(usd[idx]))


def _mean(a: np.ndarray) -> float:
    """Mean of the non-NaN values (NaN if none), summed as pandas' ``Series.mean`` sums them (NaN
    as 0, then divided by the count)."""
    nan = np.isnan(a)
    n = a.size - int(nan.sum())
    return float(np.where(nan, 0.0, a).sum() / n) if n else float("nan")


def add_budget_spent(rows: list[CurveRow], pool, groups_of: dict[str, tuple], basis: str) -> None:
    """Set ``budget_basis`` and ``budget_spent`` (k × the group's mean per-task mean sample spend on
    the basis, as for tokens) on curve rows; ``pool`` has task_id, seed and budget_spent columns."""
    sums: dict[tuple, list[float]] = {}
    has_pool = pool is not None and bool(len(pool)) and "budget_spent" in pool
    if has_pool:
        _budget_means(pool, groups_of, sums)
    _set_budget_spent(rows, sums, basis, has_pool)


def _cell_spend(pool) -> dict[tuple[str, int], float]:
    """Each cell's mean sample spend in ``pool`` (whole cells; NaN: no spend), by (task id, seed)
    in (task id, seed) order, as pandas' grouped mean computes it."""
    if not len(pool) or "budget_spent" not in pool:
        return {}
    per_task = pool.groupby(["task_id", "seed"], sort=True)["budget_spent"].mean()
    return {(str(t), int(s)): float(v) for (t, s), v in per_task.items()}


def _budget_means(pool, groups_of: dict[str, tuple], sums: dict[tuple, list[float]]) -> None:
    """Append each cell's mean sample spend in ``pool`` (whole cells) to its groups' lists."""
    for (task_id, _seed), v in _cell_spend(pool).items():
        if task_id in groups_of and v == v:
            sums.setdefault(("all", None), []).append(float(v))
            sums.setdefault(groups_of[task_id], []).append(float(v))


def _set_budget_spent(rows: list[CurveRow], sums: dict[tuple, list[float]], basis: str, has_pool: bool) -> None:
    for r in rows:
        vals = sums.get((r.axis, r.axis_value)) if has_pool else None
        r.budget_basis, r.budget_spent = basis, r.k * float(np.mean(vals)) if vals else None
