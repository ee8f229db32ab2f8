"""The CoT-SC curve from one pool of samples: maj@k for every k ≤ k_max, no reruns.

For each (task, seed) the pool holds k_max independent CoT samples. maj@k accuracy of a task is
the *expected* accuracy of a majority vote over a uniformly random k-subset of its pool, with
ties split uniformly (a tie between the gold answer and t−1 others earns 1/t). We estimate that
expectation by seeded subsampling (exact at k = k_max, where there is one subset), average over
tasks, and put a percentile bootstrap CI (resampling tasks) around it. Because subsets of an
i.i.d. pool are i.i.d. draws, this is an unbiased estimate of maj@k for the sampling
distribution — the property the tests check against the exact multinomial expectation.

Cost at k is k times the task's mean sample cost (tokens, calls, USD, and the spend on the suite's
budget basis): what CoT-SC@k would have spent in expectation. (The vote itself is free.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


def task_maj_accuracy(answer_ids: np.ndarray, correct_id: int | set[int] | None, k: int, draws: int,
                      rng: np.random.Generator) -> float:
    """Expected maj@k for one task. ``answer_ids``: pool answers as small ints (−1 = no answer,
    which never wins a vote); ``correct_id``: the id of the gold answer, or the ids of every answer
    string scored correct (a raw-string vote can hold several, e.g. ``9`` and ``9.0``); None if absent."""
    n = len(answer_ids)
    if correct_id is None or n == 0:
        return 0.0
    correct_ids = {correct_id} if isinstance(correct_id, (int, np.integer)) else set(correct_id)
    if not correct_ids:
        return 0.0
    k = min(k, n)
    m = int(answer_ids.max()) + 1 if answer_ids.max() >= 0 else 0
    if m == 0:
        return 0.0
    if k == n:
        subsets = answer_ids[None, :]
    else:
        # draws × n random keys; the k smallest per row give a uniform k-subset
        keys = rng.random((draws, n))
        idx = np.argpartition(keys, k - 1, axis=1)[:, :k]
        subsets = answer_ids[idx]
    counts = np.zeros((subsets.shape[0], m), dtype=np.int32)
    for j in range(m):
        counts[:, j] = (subsets == j).sum(axis=1)
    top = counts.max(axis=1)
    winners = counts == top[:, None]
    ties = winners.sum(axis=1)
    is_correct = np.zeros(m, dtype=bool)
    is_correct[[c for c in correct_ids if 0 <= c < m]] = True
    credit = np.where(top > 0, (winners & is_correct[None, :]).sum(axis=1) / ties, 0.0)
    return float(credit.mean())


def build_curve(pools: list[tuple[list[str | None], list[bool], list[float], list[float]]], k_max: int,
                bootstrap: int = 500, draws: int = 256, seed: int = 0) -> list[CurvePoint]:
    """``pools``: per (task, seed) cell: (normalized answers, correct flags, tokens, usd) of its
    samples. Returns one point per k = 1..k_max."""
    rng = np.random.default_rng(seed)
    if not pools:
        return []
    per_task = np.zeros((len(pools), k_max))
    tok = np.zeros(len(pools))
    usd = np.zeros(len(pools))
    for t, (answers, correct, tokens, cost) in enumerate(pools):
        ids: dict[str, int] = {}
        arr = np.array([ids.setdefault(a, len(ids)) if a not in (None, "") else -1 for a in answers], dtype=np.int64)
        gold_ids = {ids[a] for a, c in zip(answers, correct) if c and a not in (None, "")}
        correct_id = gold_ids or None  # every answer string scored correct counts as gold
        for k in range(1, k_max + 1):
            per_task[t, k - 1] = task_maj_accuracy(arr, correct_id, k, draws, rng)
        tok[t] = float(np.mean(tokens)) if tokens else 0.0
        usd[t] = float(np.mean(cost)) if cost else 0.0
    n = len(pools)
    acc = per_task.mean(axis=0)
    if bootstrap > 0 and n > 1:
        idx = rng.integers(0, n, size=(bootstrap, n))
        boot = per_task[idx].mean(axis=1)  # bootstrap × k
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
    else:
        lo = hi = acc
    return [CurvePoint(k, n, float(acc[k - 1]), float(lo[k - 1]), float(hi[k - 1]), k * float(tok.mean()),
                       float(k), k * float(usd.mean())) for k in range(1, k_max + 1)]


def add_budget_spent(rows: list[dict], pool, groups_of: dict[str, tuple], basis: str) -> None:
    """Set ``budget_basis`` and ``budget_spent`` (k × the group's mean per-task mean sample spend on
    the basis, as for tokens) on curve rows; ``pool`` has task_id, seed and budget_spent columns."""
    if not rows or pool is None or not len(pool) or "budget_spent" not in pool:
        for r in rows:
            r.update(budget_basis=basis, budget_spent=None)
        return
    per_task = pool.groupby(["task_id", "seed"], sort=True)["budget_spent"].mean()
    sums: dict[tuple, list[float]] = {}
    for (task_id, _seed), v in per_task.items():
        if task_id in groups_of and v == v:
            sums.setdefault(("all", None), []).append(float(v))
            sums.setdefault(groups_of[task_id], []).append(float(v))
    for r in rows:
        vals = sums.get((r["axis"], r["axis_value"]))
        r.update(budget_basis=basis, budget_spent=r["k"] * float(np.mean(vals)) if vals else None)
