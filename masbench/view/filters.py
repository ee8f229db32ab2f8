"""The grid's filters: which (design, task, seed) cells a grid page shows, each an SQL predicate
over the ``cells`` relation of :mod:`.grid` and the rule the page states in words.

``cells`` has one row per result of the run: ``correct``, ``status`` (ok | degraded |
budget_exhausted | failed), ``n_truncated`` (the cell's design calls with status 'truncated'),
``sc_k`` (the CoT-SC k matched to the design's cost, see :data:`SC_RULE`) and ``sc_acc`` (the
cell's exact maj@``sc_k`` accuracy of its pool, ``cot_sc_task_curve.accuracy``).

Add a filter with ``FILTERS.add(name, GridFilter(...))``; the grid and the export pick it up.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import Registry


@dataclass(frozen=True)
class GridFilter:
    """One grid filter."""

    title: str
    """Short name on the filter bar."""
    rule: str
    """What a matching cell is, in words (stated on the page)."""
    where: str
    """SQL predicate over a ``cells`` row."""


WRONG = "NOT coalesce(correct, false)"
"""A cell is wrong when it is not scored correct (a failed cell, without an answer, is wrong)."""

SC_RULE = ("CoT-SC majority at the design's k: k is the paired test's k_match of the design's verdict row "
           "(paired_tests, against the curve, all tasks, the run's verdict unit) rounded to the nearest stored k "
           "(ties to the smaller; below the curve k = 1, beyond it k_max); the majority is right when the cell's "
           "exact maj@k accuracy over its pool (cot_sc_task_curve) is > 0.5, wrong when < 0.5 (= 0.5, a tie, is "
           "neither).")
"""The rule the discordant filters state on the page."""

FILTERS: Registry[GridFilter] = Registry("grid filter", {
    "all": GridFilter("all", "every cell", "true"),
    "wrong": GridFilter("wrong", "the design's answer is not correct (failed cells count as wrong)", WRONG),
    "budget": GridFilter("budget-exhausted", "the cell ran out of its per-task budget (results.status = "
                         "'budget_exhausted')", "status = 'budget_exhausted'"),
    "failed": GridFilter("failed", "the cell failed (results.status = 'failed')", "status = 'failed'"),
    "truncated": GridFilter("truncated", "at least one of the cell's model calls was cut off at its token cap "
                            "(calls.status = 'truncated')", "n_truncated > 0"),
    "wrong-sc-right": GridFilter("design wrong, CoT-SC right", "the design is wrong where the CoT-SC majority is "
                                 "right (a discordant task of the paired test, against the design). " + SC_RULE,
                                 f"{WRONG} AND sc_acc > 0.5"),
    "right-sc-wrong": GridFilter("design right, CoT-SC wrong", "the design is right where the CoT-SC majority is "
                                 "wrong (a discordant task of the paired test, for the design). " + SC_RULE,
                                 f"coalesce(correct, false) AND sc_acc < 0.5"),
})
"""Filter name (the ``filter`` page parameter) → filter, in the order of the filter bar."""

__all__ = ["FILTERS", "GridFilter", "SC_RULE", "WRONG"]
