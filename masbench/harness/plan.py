"""Power planning (``masbench plan``) and recomputing a stored run's statistics (``masbench stats``).

``plan`` answers "how many tasks (and seeds) detect a Δ-point gap": from the formula in
:mod:`.stats.power` (accuracy, Δ, correlation ρ), or from a finished pilot run's per-cell paired
differences against the curve (between-task and seed variance, by the ANOVA method).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..spec import CotScSpec, StatsSpec
from ..store import Store, suite_config
from .curve import compute_curve, groups_of_results
from .paired_tests import compute_paired
from .stats.power import cell_sd, components, n_needed, power_at


@dataclass(frozen=True)
class PlanRow:
    design: str
    delta: float
    sd_between: float | None
    sd_within: float | None
    seeds: int
    n_tasks: int | None
    power_now: float | None
    """Power of the pilot's own size at this Δ (pilot mode)."""
    pilot_tasks: int | None = None


def plan_formula(accuracy: float, delta: float, rho: float, seeds: list[int], alpha: float, power: float,
                 between: float = 0.0) -> list[PlanRow]:
    """Tasks needed per number of seeds; ``between`` is the share of the cell variance that is
    between tasks (seeds do not average it away)."""
    sd = cell_sd(accuracy, delta, rho)
    out = []
    for s in seeds:
        var = sd * sd * (between + (1 - between) / s)
        out.append(PlanRow("(formula)", delta, (sd * sd * between) ** 0.5, (sd * sd * (1 - between)) ** 0.5, s,
                           n_needed(delta, var ** 0.5, alpha, power), None))
    return out


def _recorded(store: Store, run_id: str) -> tuple[CotScSpec, StatsSpec]:
    """The run's recorded CoT-SC and statistics settings (defaults for a run without a config)."""
    suite, _ = suite_config(store, run_id)
    return (suite.cot_sc, suite.stats) if suite is not None else (CotScSpec(), StatsSpec())


def plan_pilot(store: Store, run_id: str, delta: float | None, seeds: list[int], alpha: float, power: float,
               unit: str | None = None, design: str | None = None) -> list[PlanRow]:
    """From a pilot run: per design against the curve (suite's matching unit), the tasks needed
    to detect ``delta`` (default: the pilot's observed mean difference) with s seeds per task.
    α is split Bonferroni-style over the pilot's non-baseline designs (Holm's first step)."""
    unit = unit or _recorded(store, run_id)[1].match
    df = store.df("""SELECT design, task_id, diff FROM paired_diffs WHERE run_id = ? AND axis = 'all' AND unit = ?""",
                  [run_id, unit])
    if unit == "budget" and df.empty:  # a pilot that recorded no budget spend: tokens, as its verdicts
        df = store.df("""SELECT design, task_id, diff FROM paired_diffs WHERE run_id = ? AND axis = 'all'
                         AND unit = 'tokens'""", [run_id])
    names = dict(store.sql("SELECT design, any_value(design_name) FROM results WHERE run_id = ? GROUP BY ALL", [run_id]))
    designs = [d for d in sorted(df["design"].unique()) if names.get(d) not in ("cot", "cot-sc")] if len(df) else []
    if design:
        designs = [d for d in designs if d == design] or ([design] if design in set(df["design"]) else [])
    m = max(1, len(designs))
    out = []
    for d in designs:
        g = df[df["design"] == d]
        comp = components(g["task_id"].to_numpy(), g["diff"].to_numpy())
        dl = float(g.groupby("task_id")["diff"].mean().mean()) if delta is None else delta
        now = power_at(comp.n_tasks, dl, comp.sd(int(round(comp.seeds))), alpha / m) if comp.n_tasks > 1 else None
        for s in seeds:
            out.append(PlanRow(d, dl, comp.between ** 0.5, comp.within ** 0.5, s,
                               n_needed(dl, comp.sd(s), alpha / m, power), now, comp.n_tasks))
    return out


def recompute(store: Store, run_id: str) -> tuple[int, int]:
    """Rebuild a stored run's exact curve and paired tests under its recorded settings
    (an older store, or after changing the code). Returns (curve rows, test rows)."""
    cot_sc, stats = _recorded(store, run_id)
    n_curve = compute_curve(store, run_id, cot_sc, groups_of_results(store, run_id)) if cot_sc.enabled else 0
    return n_curve, compute_paired(store, run_id, stats)

