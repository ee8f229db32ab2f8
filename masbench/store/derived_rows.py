"""The records of the derived tables the verdicts come from — ``cot_sc_curve``,
``cot_sc_task_curve``, ``paired_tests``, ``sequential_looks`` — written once a run's cells are in
(the curve, the paired tests) or at each look of a sequential run. ``tests/store/test_rows.py``
checks each against the migrated schema, as it does the run's own rows (:mod:`.rows`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .row_base import Row


@dataclass(kw_only=True, slots=True)
class CurveRow(Row):
    """One point of a group's CoT-SC curve: maj@k over the group's cells with its bootstrap CI."""

    TABLE: ClassVar[str] = "cot_sc_curve"
    run_id: str
    axis: str
    """'all' for the whole run, else the task axis (depth, ...) or source."""
    k: int
    axis_value: int | None = None
    """None for 'all'."""
    n_tasks: int | None = None
    """(task, seed) cells in the pool."""
    accuracy: float | None = None
    """Expected maj@k accuracy (ties split uniformly)."""
    ci_lo: float | None = None
    ci_hi: float | None = None
    tokens: float | None = None
    """Mean tokens per task at k samples."""
    calls: float | None = None
    cost_usd: float | None = None
    budget_basis: str | None = None
    budget_spent: float | None = None
    """Mean spend per task at k samples, on the basis."""


@dataclass(kw_only=True, slots=True)
class TaskCurveRow(Row):
    """One cell's maj@k at one k (the paired tests read these)."""

    TABLE: ClassVar[str] = "cot_sc_task_curve"
    run_id: str
    task_id: str
    seed: int
    k: int
    accuracy: float | None = None
    """Exact maj@k of this cell's pool (expectation over all k-subsets)."""
    tokens: float | None = None
    """k × mean tokens of the cell's samples."""
    cost_usd: float | None = None
    """k × mean USD of the cell's samples."""


@dataclass(kw_only=True, slots=True)
class PairedTestRow(Row):
    """One paired test of a design against a reference ('curve', 'cot' or another design's label),
    with its Holm correction and, against the curve, its verdict."""

    TABLE: ClassVar[str] = "paired_tests"
    run_id: str
    axis: str
    design: str
    against: str
    """'curve' | 'cot' | another design's label."""
    axis_value: int | None = None
    unit: str | None = None
    """Cost matching unit: tokens | calls | usd | budget ('-' when no matching)."""
    position: str | None = None
    """Against the curve: within | below | beyond."""
    k_match: float | None = None
    n_tasks: int | None = None
    n_cells: int | None = None
    mean_diff: float | None = None
    sd_task: float | None = None
    ci_lo: float | None = None
    ci_hi: float | None = None
    p_value: float | None = None
    method: str | None = None
    n_discordant_plus: int | None = None
    n_discordant_minus: int | None = None
    family_size: int | None = None
    p_holm: float | None = None
    level_holm: float | None = None
    ci_lo_holm: float | None = None
    ci_hi_holm: float | None = None
    n_needed: int | None = None
    n_needed_hi: int | None = None
    family: str | None = None
    """'group' (the designs of one group) or 'axis' (every design at every value of one axis)."""
    verdict: str | None = None
    """One of the verdict words of :mod:`masbench.harness.stats.decide`."""
    reason: str | None = None
    is_verdict: bool | None = None
    bootstrap: int | None = None
    alpha: float | None = None
    power: float | None = None


@dataclass(kw_only=True, slots=True)
class SequentialLookRow(Row):
    """One design at one look of a sequential run: what the anytime-valid test said."""

    TABLE: ClassVar[str] = "sequential_looks"
    run_id: str
    look: int
    design: str
    unit: str | None = None
    n_tasks: int | None = None
    n_cells: int | None = None
    calls: int | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    budget_spent: float | None = None
    k_match: float | None = None
    position: str | None = None
    mean_diff: float | None = None
    cs_lo: float | None = None
    cs_hi: float | None = None
    p_anytime: float | None = None
    family_size: int | None = None
    p_holm: float | None = None
    level_holm: float | None = None
    decided: bool | None = None
    verdict: str | None = None
    """One of the verdict words of :mod:`masbench.harness.stats.decide`."""
    reason: str | None = None
    max_tasks: int | None = None
    batch: int | None = None
    method: str | None = None
    alpha: float | None = None
    ts: float | None = None


__all__ = ["CurveRow", "PairedTestRow", "SequentialLookRow", "TaskCurveRow"]
