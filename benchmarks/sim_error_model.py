"""SIMULATED: what the simulator's error model implies, in figures.

For each profile (independent coins, the two presets, and optionally one fitted to a real pool):
mean accuracy over tasks, the correlation of two calls' correctness on a task (what pairing
exploits), exact maj@k for k = 1, 3, 5, 9, 16 (saturation), round-one unanimity of 3 debaters
(premature consensus), and the paired/unpaired CI width ratio for "CoT vs CoT-SC@5 on the same
tasks" (the mean over repetitions of SE(paired difference) / SE(difference of two unpaired means)).
Draws for the CI ratio are Bernoulli from the exact per-task probabilities the simulator uses.

    .venv/bin/python benchmarks/sim_error_model.py [--tasks 300] [--reps 200] [--fit-store STORE.duckdb]

``--fit-store`` fits (accuracy, spread) to the CoT-SC pool of the latest run in a store (per-task
count of correct samples) with :func:`masbench.llm.sim.fit_difficulty`, and the wrong-answer
concentration (agreement among a task's wrong samples) with :func:`fit_concentration`, and adds
that profile.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from masbench.llm.sim import (correctness_correlation, expected_unanimity, fit_concentration, fit_difficulty, maj_at_k,
                              pool_curve, sim_model)
from masbench.spec.model import SimProfile
from masbench.spec.sim import SimDifficulty, SimErrors

DISTRACTORS = 20
"""Wrong answers per task of the fitted profile (a weak model's errors are many and diverse)."""


def fitted_from_store(path: str) -> tuple[SimProfile, str]:
    import duckdb

    con = duckdb.connect(path, read_only=True)
    try:
        run = con.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 1").fetchall()[0][0]
        rows = con.execute("SELECT task_id, count(*), sum(CAST(correct AS INTEGER)) FROM pool WHERE run_id = ? "
                           "GROUP BY task_id", [run]).fetchall()
        wrong = con.execute("SELECT list(answer) FROM pool WHERE run_id = ? AND NOT correct AND answer <> '' "
                            "GROUP BY task_id", [run]).fetchall()
    finally:
        con.close()
    k = min(n for _, n, _ in rows)
    counts = [int(c) for _, n, c in rows if n == k]
    acc, spread, between = fit_difficulty(counts, k)
    agree, alpha = fit_concentration([w for (w,) in wrong], DISTRACTORS)
    ph = np.array(counts) / k
    note = (f"fitted to {len(counts)} tasks x {k} samples of run {run}: accuracy {acc:.3f}, per-task accuracy sd "
            f"{ph.std(ddof=1):.3f} (between-task sd of P(correct) {math.sqrt(between):.3f}), "
            f"{(ph == 0).mean():.0%} of tasks never right, {(ph == 1).mean():.0%} always -> spread {spread:.2f}; "
            f"two wrong samples agree {agree:.3f} -> concentration {alpha:.2f} over {DISTRACTORS} wrong answers")
    return SimProfile(accuracy={"default": acc}, difficulty=SimDifficulty(spread=spread),
                      errors=SimErrors(distractors=DISTRACTORS, concentration=alpha, overlap=1.0)), note


def ci_ratio(m, tasks: list[tuple[str, list[str]]], reps: int, rng: np.random.Generator) -> float:
    pa = np.array([m.p_correct(t) for t, _ in tasks])
    pb = np.array([maj_at_k(m.answer_distribution(t, g), g, 5) for t, g in tasks])
    ratios = []
    for _ in range(reps):
        a = rng.random(len(tasks)) < pa
        b = rng.random(len(tasks)) < pb
        d = a.astype(float) - b
        unpaired = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        if unpaired > 0:
            ratios.append(d.std(ddof=1) / math.sqrt(len(d)) / unpaired)
    return float(np.mean(ratios))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=300)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--fit-store")
    args = ap.parse_args()
    profiles: list[tuple[str, object]] = [
        ("coins p=0.6 (fixed)", sim_model("sim/p60")),
        ("sim/frontier", sim_model("sim/frontier")),
        ("sim/7b", sim_model("sim/7b")),
    ]
    if args.fit_store:
        prof, note = fitted_from_store(args.fit_store)
        print("SIMULATED profile", note)
        profiles.append(("fitted to the store", sim_model("sim/fitted", prof)))
    tasks = [(f"bench-{i:04d}", ["12"]) for i in range(args.tasks)]
    rng = np.random.default_rng(0)
    print(f"SIMULATED — the simulator's error model on {args.tasks} task ids (exact expectations)")
    head = f"{'profile':24} {'acc':>6} {'corr':>6}  " + " ".join(f"maj@{k:<3}" for k in (1, 3, 5, 9, 16)) + \
        f" {'unan@3':>7} {'paired/unpaired CI':>19}"
    print(head)
    for name, m in profiles:
        curve = pool_curve(m, tasks, 16)
        corr = correctness_correlation(m)
        un = expected_unanimity(m, tasks, 3)
        r = ci_ratio(m, tasks, args.reps, rng)
        print(f"{name:24} {curve[0]:6.3f} {corr:6.3f}  " + " ".join(f"{curve[k - 1]:6.3f}" for k in (1, 3, 5, 9, 16))
              + f" {un:7.3f} {r:19.3f}")
    print(f"frontier vs 7b correctness correlation (one call each): "
          f"{correctness_correlation(sim_model('sim/frontier'), sim_model('sim/7b')):.3f}")


if __name__ == "__main__":
    main()
