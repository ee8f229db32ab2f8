"""``masbench plan --sequential``: tasks and cost to a decision under ``--until-decided``, by simulation.

For each true effect Δ the sequential rule (:mod:`.stats.sequential`: the betting confidence
sequence's anytime-valid p-value, a look after every ``batch`` tasks, at most ``cap`` tasks) runs
on ``streams`` simulated sequences of per-task differences with mean Δ, and the plan reports the
share decided by the cap, the share decided the right way (at Δ = 0: the false decisions), and the
tasks to a decision (mean, median, 90th percentile; a stream never decided counts the cap).

The per-task differences come from

- the formula (:func:`formula_sampler`): a design cell of accuracy p + Δ against a reference cell
  of accuracy p with correlation ρ (the σ of :func:`.stats.power.cell_sd`), averaged over s seeds;
- a pilot run (:func:`pilot_sampler`): the design's per-task differences resampled, exponentially
  tilted to mean Δ (weights ∝ e^{θ·d}): the pilot's support and shape — its share of exact zeros,
  its skew — are kept; only the mass moves.

A design is taken as decided when its p-value reaches α/m, the first step of Holm over the m
designs of the family (the level it gets when the others are null; Holm gives it a larger level
once others are decided, so this is conservative). Beside it, the fixed-n plan's n
(:func:`.stats.power.n_needed` at the same level and power with the simulated σ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..store import Store
from .stats.power import n_needed
from .stats.sequential import DEFAULT_BET, Bet, p_paths

Sampler = Callable[[np.random.Generator, tuple[int, int]], np.ndarray]
"""(rng, (streams, tasks)) → per-task differences in [−1, 1]."""

DEFAULT_DELTAS = (0.0, 0.05, -0.05, 0.10, -0.10, 0.20, -0.20)


@dataclass(frozen=True)
class SeqPlanRow:
    """The sequential rule at one true effect."""

    design: str
    delta: float
    sd: float
    """SD of the simulated per-task differences."""
    decided: float
    """Share of streams decided (either way) by the cap."""
    right: float
    """Share decided in the direction of Δ (Δ = 0: decided at all, i.e. falsely)."""
    tasks_mean: float
    tasks_median: float
    tasks_p90: float
    """Tasks to a decision (the cap when undecided)."""
    calls_per_task: float | None
    """The design's calls per task plus the pool's (None: unknown, cost not shown)."""
    fixed_n: int | None
    """The fixed-n plan's tasks at this Δ (None at Δ = 0)."""
    cap: int
    batch: int
    level: float

    @property
    def calls_mean(self) -> float | None:
        return None if self.calls_per_task is None else self.tasks_mean * self.calls_per_task


def simulate(sampler: Sampler, *, delta: float, cap: int, batch: int, level: float, alpha: float = 0.05,
             bet: Bet = DEFAULT_BET, streams: int = 1000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, float]:
    """(tasks at the decision or the cap, direction decided (+1, −1, 0 undecided), SD of the differences)."""
    rng = np.random.default_rng(seed)
    d = sampler(rng, (streams, cap))
    p = p_paths(d, alpha=alpha, bet=bet)
    looks = np.minimum(np.arange(batch, cap + batch, batch), cap) - 1
    hit = p[:, looks] <= level
    ever = hit.any(axis=1)
    at = looks[np.argmax(hit, axis=1)] + 1
    tasks = np.where(ever, at, cap)
    means = np.cumsum(d, axis=1)[np.arange(streams), tasks - 1] / tasks
    side = np.where(ever, np.sign(means), 0).astype(int)
    return tasks, side, float(d.std())


def _row(design: str, delta: float, sampler: Sampler, calls_per_task: float | None, *, cap: int, batch: int,
         level: float, power: float, alpha: float, bet: Bet, streams: int, seed: int) -> SeqPlanRow:
    tasks, side, sd = simulate(sampler, delta=delta, cap=cap, batch=batch, level=level, alpha=alpha, bet=bet,
                               streams=streams, seed=seed)
    right = float((side != 0).mean()) if delta == 0 else float((side == np.sign(delta)).mean())
    return SeqPlanRow(design, delta, sd, float((side != 0).mean()), right, float(tasks.mean()),
                      float(np.median(tasks)), float(np.percentile(tasks, 90)), calls_per_task,
                      n_needed(delta, sd, level, power), cap, batch, level)


def formula_sampler(accuracy: float, delta: float, rho: float = 0.0, seeds: int = 1) -> Sampler:
    """Per-task differences of s seeds: cells (design, reference) ~ Bernoulli(p + Δ), Bernoulli(p)
    with correlation ρ (clamped to the feasible range), difference averaged over the seeds."""
    p0, p1 = accuracy, min(1.0, max(0.0, accuracy + delta))
    p11 = p1 * p0 + rho * math.sqrt(p1 * (1 - p1) * p0 * (1 - p0))
    p11 = min(max(p11, max(0.0, p1 + p0 - 1)), min(p1, p0))
    win, loss = p1 - p11, p0 - p11  # P(design right, reference wrong), and the reverse

    def f(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        u = rng.random(shape + (seeds,))
        return ((u < win).astype(float) - ((u >= win) & (u < win + loss))).mean(axis=-1)
    return f


def tilt(values: np.ndarray, target: float) -> np.ndarray:
    """Resampling weights ∝ e^{θ·v} with weighted mean ``target`` (clamped inside the values' range)."""
    v = np.asarray(values, dtype=float)
    lo, hi = float(v.min()), float(v.max())
    if hi - lo < 1e-12:
        return np.full(len(v), 1 / len(v))
    target = min(max(target, lo + 1e-6 * (hi - lo)), hi - 1e-6 * (hi - lo))

    def mean_at(theta: float) -> tuple[float, np.ndarray]:
        w = np.exp(theta * (v - v.max() if theta > 0 else v - v.min()))
        w /= w.sum()
        return float(w @ v), w

    a, b = -1.0, 1.0
    while mean_at(a)[0] > target:
        a *= 2
    while mean_at(b)[0] < target:
        b *= 2
    for _ in range(100):  # bisection: the tilted mean increases in θ
        c = (a + b) / 2
        if mean_at(c)[0] < target:
            a = c
        else:
            b = c
    return mean_at((a + b) / 2)[1]


def pilot_sampler(diffs: np.ndarray, delta: float) -> Sampler:
    """The pilot's per-task differences resampled with replacement, tilted to mean Δ."""
    v = np.asarray(diffs, dtype=float)
    w = tilt(v, delta)

    def f(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        return v[rng.choice(len(v), size=shape, p=w)]
    return f


def plan_sequential_formula(accuracy: float, rho: float, deltas: list[float], *, seeds: int = 1, level: float = 0.05,
                            power: float = 0.8, cap: int = 400, batch: int = 20, alpha: float = 0.05,
                            bet: Bet = DEFAULT_BET, streams: int = 1000, seed: int = 0,
                            calls_per_task: float | None = None) -> list[SeqPlanRow]:
    """One row per Δ from the formula's per-task differences; ``level`` = α/designs."""
    return [_row("(formula)", dl, formula_sampler(accuracy, dl, rho, seeds), calls_per_task, cap=cap, batch=batch,
                 level=level, power=power, alpha=alpha, bet=bet, streams=streams, seed=seed) for dl in deltas]


def pilot_diffs(store: Store, run_id: str, unit: str) -> dict[str, tuple[np.ndarray, float | None]]:
    """Per non-baseline design of a pilot: its per-task differences against the curve (mean over
    seeds) and its calls per task plus the pool's (None without calls)."""
    df = store.df("""SELECT design, task_id, avg(diff) AS diff FROM paired_diffs
                     WHERE run_id = ? AND axis = 'all' AND unit = ? GROUP BY ALL ORDER BY design, task_id""",
                  [run_id, unit])
    names = dict(store.sql("SELECT design, any_value(design_name) FROM results WHERE run_id = ? GROUP BY ALL", [run_id]))
    calls = dict(store.sql("""SELECT design, sum(calls) / count(DISTINCT task_id) FROM results
                              WHERE run_id = ? GROUP BY ALL""", [run_id]))
    pool = store.sql("SELECT count(*) / nullif(count(DISTINCT task_id), 0) FROM pool WHERE run_id = ?", [run_id])
    pool_calls = float(pool[0][0]) if pool and pool[0][0] is not None else 0.0
    out = {}
    for d in sorted(df["design"].unique()) if len(df) else []:
        if names.get(d) in ("cot", "cot-sc"):
            continue
        c = calls.get(d)
        out[d] = (df[df["design"] == d]["diff"].to_numpy(), None if c is None else float(c) + pool_calls)
    return out


def plan_sequential_pilot(store: Store, run_id: str, deltas: list[float] | None, *, unit: str, alpha: float = 0.05,
                          power: float = 0.8, cap: int = 400, batch: int = 20, bet: Bet = DEFAULT_BET,
                          streams: int = 1000, seed: int = 0, design: str | None = None) -> list[SeqPlanRow]:
    """Per design of a pilot run, one row per Δ (default: 0, ±5, ±10, ±20 pp and the pilot's own
    mean difference), from its resampled, tilted per-task differences; level α/(pilot's designs)."""
    per = pilot_diffs(store, run_id, unit)
    level = alpha / max(1, len(per))
    out = []
    for d, (v, cpt) in per.items():
        if design and d != design:
            continue
        ds = list(deltas) if deltas is not None else sorted({*DEFAULT_DELTAS, round(float(v.mean()), 4)})
        for dl in ds:
            out.append(_row(d, dl, pilot_sampler(v, dl), cpt, cap=cap, batch=batch, level=level, power=power,
                            alpha=alpha, bet=bet, streams=streams, seed=seed))
    return out
