"""One look of a sequential run: every undecided design's per-task differences against the CoT-SC
curve, the anytime-valid test over the family (:func:`~.stats.sequential.look`), and one
``sequential_looks`` row per design (docs/sequential.md).

The differences are *predictable*: the tasks of batch j are matched to the curve at the design's
mean cost over the tasks of the batches before j (the first batch: at its own mean cost), with the
curve's cost per sample over the same tasks — so a task's difference is fixed when its batch is
looked at and never revised later (the row of look j records that batch's ``k_match``; a later
look reads it back). The cost queries and the per-cell curve values are SQL
(:mod:`masbench.store.sequential`); matching, like the fixed-n test: k = cost / cost per sample,
``below`` (k < 1) is compared at k = 1, ``beyond`` (k > k_max) at k_max, else ``within`` at the
fractional k (the per-cell maj@k linearly interpolated).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..spec import StatsSpec
from ..store import Store, StoreWriter
from ..store.rows import SequentialLookRow
from ..store.sequential import DESIGN_COST, DESIGN_TOTALS, POOL_SAMPLE_COST, TASK_DIFFS
from .sequence import SequencePlan, SequentialError
from .stats.sequential import LookInput, LookResult, look

METHOD = {"prpl": "betting CS (hedged, PrPl)", "agrapa": "betting CS (hedged, aGRAPA)"}
"""``sequential_looks.method`` by the suite's ``stats.bet``."""


@dataclass
class Looked:
    """What the store holds of a run's looks so far."""

    looks: int = 0
    """Looks written (the next batch is batch ``looks``, 0-based)."""
    frozen: dict[str, LookResult] = field(default_factory=dict)
    """Decided designs: their result at the look that decided them."""
    positions: dict[str, str] = field(default_factory=dict)
    """Where each decided design's cost fell on the curve at that look."""
    k_match: dict[str, list[float]] = field(default_factory=dict)
    """Per design, the matched k of every batch it received, in batch order."""


def looked(store: Store, run_id: str) -> Looked:
    """The looks stored for ``run_id`` (none for a new run)."""
    rows = store.sql("""SELECT look, design, n_tasks, mean_diff, cs_lo, cs_hi, p_anytime, family_size, p_holm,
                               level_holm, decided, verdict, reason, k_match, position
                        FROM sequential_looks WHERE run_id = ? ORDER BY look, design""", [run_id])
    out = Looked(looks=max((int(r[0]) for r in rows), default=0))
    for (_look, d, n, mean, lo, hi, p_any, fam, p_holm, level, decided, verdict, reason, k, pos) in rows:
        if k is not None:  # a batch this design received
            out.k_match.setdefault(d, []).append(float(k))
        if decided and d not in out.frozen:
            out.frozen[d] = LookResult(d, int(n), float(mean), float(lo), float(hi), float(p_any), int(fam),
                                       float(p_holm), float(level), True, str(verdict), str(reason))
            out.positions[d] = str(pos)
    return out


def match_k(store: Store, run_id: str, design: str, unit: str, tasks: tuple[str, ...], k_max: int) -> tuple[float, str]:
    """(k, position) at which a design whose mean cost over ``tasks`` is c meets the curve."""
    params = {"run": run_id, "design": design, "unit": unit, "tasks": list(tasks)}
    cost = store.sql(DESIGN_COST, params)[0][0]
    per_sample = store.sql(POOL_SAMPLE_COST, {k: v for k, v in params.items() if k != "design"})[0][0]
    if cost is None or per_sample is None or per_sample <= 0:
        raise SequentialError(f"design {design!r}: no cost on the matching unit {unit!r} to match with the CoT-SC "
                              f"curve (the pool recorded {per_sample!r} per sample); set stats.match to tokens or calls")
    k = float(cost) / float(per_sample)
    if k < 1:
        return 1.0, "below"
    if k > k_max:
        return float(k_max), "beyond"
    return k, "within"


def task_diffs(store: Store, run_id: str, design: str, tasks: tuple[str, ...], ks: list[float]) -> np.ndarray:
    """Per-task differences (design − curve at each task's k), in the order of ``tasks``."""
    rows = store.sql(TASK_DIFFS, {"run": run_id, "design": design, "tasks": list(tasks), "ks": ks})
    return np.array([float(r[5]) for r in rows], dtype=float)


def take_look(store: Store, run_id: str, plan: SequencePlan, family: list[str], k_max: int, spec: StatsSpec,
              state: Looked) -> list[LookResult]:
    """Look after batch ``state.looks`` (0-based): test the family, write look ``state.looks + 1``."""
    j = state.looks + 1
    drawn = plan.drawn(j)
    earlier = plan.drawn(j - 1) or plan.batch_tasks(0)
    inputs: list[LookInput] = []
    matched: dict[str, tuple[float, str]] = {}
    for d in family:
        if d in state.frozen:
            inputs.append(LookInput(d, np.empty(0), state.positions[d], k_max, state.frozen[d]))
            continue
        k, pos = match_k(store, run_id, d, plan.match, earlier, k_max)
        ks = state.k_match.get(d, []) + [k]
        if len(ks) != j:
            raise RuntimeError(f"sequential look {j} of {run_id}: design {d!r} has {len(ks) - 1} earlier looks")
        per_task = [ks[i // plan.batch] for i in range(len(drawn))]
        matched[d] = (k, pos)
        inputs.append(LookInput(d, task_diffs(store, run_id, d, drawn, per_task), pos, k_max))
    results = look(inputs, spec.alpha, spec.bet)
    w = StoreWriter(store)
    now = time.time()
    for i, r in zip(inputs, results):
        n_tasks, n_cells, calls, tokens, usd, budget = store.sql(DESIGN_TOTALS, {"run": run_id, "design": i.design})[0]
        k, pos = matched.get(i.design, (None, i.position))
        w.put(SequentialLookRow(
            run_id=run_id, look=j, design=i.design, unit=plan.match, n_tasks=r.n,
            n_cells=int(n_cells), calls=int(calls), tokens=int(tokens), cost_usd=float(usd),
            budget_spent=float(budget), k_match=k, position=pos,
            mean_diff=r.mean, cs_lo=r.cs_lo, cs_hi=r.cs_hi, p_anytime=r.p_anytime,
            family_size=r.family_size, p_holm=r.p_holm, level_holm=r.level_holm, decided=r.decided,
            verdict=r.verdict, reason=r.reason, max_tasks=plan.max_tasks, batch=plan.batch,
            method=METHOD[spec.bet], alpha=spec.alpha, ts=now))
    w.flush()  # one transaction: a look is written whole or not at all
    return results


def look_line(j: int, plan: SequencePlan, results: list[LookResult]) -> str:
    """The progress line of look ``j``: tasks drawn, the decided designs (verdict at n), the rest."""
    decided = [f"{r.design} ({r.verdict} at n = {r.n})" for r in results if r.decided]
    open_ = [r.design for r in results if not r.decided]
    parts = [f"look {j}: {len(plan.drawn(j))} of {plan.max_tasks} tasks"]
    if decided:
        parts.append("decided: " + ", ".join(decided))
    if open_:
        parts.append("undecided: " + ", ".join(open_))
    return "; ".join(parts)


__all__ = ["METHOD", "Looked", "look_line", "looked", "match_k", "take_look", "task_diffs"]
