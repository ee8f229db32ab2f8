"""Calibration of the paired verdicts. EVERY NUMBER HERE IS SIMULATED.

Each simulated *suite* has n tasks; each task has a true answer distribution (P(gold) and a
distribution over 3 wrong answers). The CoT-SC pool draws k_max samples per task; designs are
CoT-SC-like voters with a known true accuracy, scored on the same tasks. Every suite goes through
the real pipeline: rows into a DuckDB store, ``compute_curve`` (exact maj@k), the paired views,
``compute_paired`` (bootstrap, Holm, verdict rule). The study reports:

1. **False verdicts under the null** — three designs per suite whose true accuracy *equals* the
   curve's at their cost (a vote over k samples with k ∈ {⌊k*⌋, ⌈k*⌉} mixed so the mean cost sits at
   k* = 2.5, 4.5, 6.5 samples; the curve at that cost is the same mixture in expectation). Any
   "worth it" / "not worth it" is false. Rate per design and family-wise (any of the three), with
   Wilson 95% intervals. Target: ≤ 5% family-wise (Holm controls it).
2. **Power** — one design at k* = 4.5 that also fixes a fraction of its wrong answers, so its true
   accuracy is +Δ over the curve at its cost (Δ = 10 pp by default; the fix rate is calibrated on
   a 200k-task pilot of the same simulator). Rate of "worth it". Target: ≥ 80% at n = 300.
3. **Paired vs unpaired** — the paired 95% CI's width divided by today's unpaired comparison's
   (design Wilson half-width + the curve band's half-width at the design's cost, ×2: the overlap
   test's implied interval), and by the independent-samples interval √(hw_d² + hw_c²)·2.

Simulators (``--sim``): ``difficulty`` (latent task difficulty, item-response style: P(gold) =
σ(ability − b_t), b_t ~ N(0, spread²); task-specific wrong-answer weights ~ Dirichlet(½), so
errors are shared by samples of a task), ``iid`` (today's ``sim/``: the same P(gold) and wrong
weights for every task, independent coins), or ``module:function`` returning
``(p_gold[n], wrong_weights[n, m])`` for ``(rng, n)`` — e.g. issue 14's simulator once it lands.

Run::

    python benchmarks/verdict_calibration.py [--sim difficulty] [--suites 200] [--tasks 300]
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import time
from typing import Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import numpy as np  # noqa: E402

from masbench.harness import compute_curve, compute_paired  # noqa: E402
from masbench.harness.stats.paired import unpaired_halfwidth  # noqa: E402
from masbench.report.data import comparison  # noqa: E402
from masbench.spec import CotScSpec, StatsSpec  # noqa: E402
from masbench.store import Store, StoreWriter  # noqa: E402

BANNER = "SIMULATED — synthetic answer distributions with known truth; not measurements of real models"
NULL_K = (2.5, 4.5, 6.5)
ALT_K = 4.5
TOKENS_PER_SAMPLE = 200.0

Sim = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]


def sim_difficulty(spread: float, ability: float) -> Sim:
    def f(rng: np.random.Generator, n: int):
        b = rng.normal(0.0, spread, n)
        p = 1 / (1 + np.exp(-(ability - b)))
        return p, rng.dirichlet([0.5, 0.5, 0.5], size=n)
    return f


def sim_iid(p_gold: float) -> Sim:
    def f(rng: np.random.Generator, n: int):
        return np.full(n, p_gold), np.tile([0.5, 0.3, 0.2], (n, 1))
    return f


def load_sim(name: str, spread: float, ability: float) -> Sim:
    if name == "difficulty":
        return sim_difficulty(spread, ability)
    if name == "iid":
        return sim_iid(1 / (1 + math.exp(-ability)))
    mod, _, fn = name.partition(":")
    return getattr(importlib.import_module(mod), fn)


def draws(rng: np.random.Generator, probs: np.ndarray, k: int) -> np.ndarray:
    """k categorical draws per task (row of ``probs``); 0 = gold."""
    cum = np.cumsum(probs, axis=1)
    u = rng.random((probs.shape[0], k))
    return np.minimum((u[:, :, None] > cum[:, None, :]).sum(axis=2), probs.shape[1] - 1)


def vote(rng: np.random.Generator, samples: np.ndarray, k: np.ndarray, m: int) -> np.ndarray:
    """Majority of the first k[i] samples of row i, ties split by a uniform draw; True if gold."""
    mask = np.arange(samples.shape[1])[None, :] < k[:, None]
    counts = np.stack([((samples == j) & mask).sum(axis=1) for j in range(m)], axis=1).astype(float)
    return np.argmax(counts + rng.random(counts.shape) * 0.5, axis=1) == 0


def mixed_k(rng: np.random.Generator, kstar: float, n: int) -> np.ndarray:
    lo = math.floor(kstar)
    return lo + (rng.random(n) < kstar - lo).astype(int)


def design_cells(rng, probs, kstar, fix: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = mixed_k(rng, kstar, probs.shape[0])
    s = draws(rng, probs, int(k.max()))
    ok = vote(rng, s, k, probs.shape[1])
    if fix:
        ok |= rng.random(len(ok)) < fix
    tokens = (k * TOKENS_PER_SAMPLE + rng.normal(0, 15, len(k)) * np.sqrt(k)).round()
    return ok, tokens, k


def calibrate_fix(sim: Sim, delta: float, seed: int) -> tuple[float, float]:
    """Fix rate π with π · (1 − acc) = Δ for the design at ALT_K, from a 200k-task pilot."""
    rng = np.random.default_rng(seed + 99)
    p, w = sim(rng, 200_000)
    probs = np.column_stack([p, (1 - p)[:, None] * w])
    ok, _, _ = design_cells(rng, probs, ALT_K)
    acc = float(ok.mean())
    return delta / (1 - acc), acc


def one_suite(sim: Sim, rng: np.random.Generator, n: int, k_max: int, fix: float | None, stats: StatsSpec) -> dict:
    """One suite through the real pipeline: the null designs, plus the +Δ design unless ``fix`` is None."""
    p, w = sim(rng, n)
    probs = np.column_stack([p, (1 - p)[:, None] * w])
    labels = np.array([str(7 + i) for i in range(probs.shape[1])])  # gold "7", then one label per wrong answer
    st = Store(":memory:")
    rid = "cal"
    st.sql("INSERT INTO runs(run_id, suite, status, simulated) VALUES (?, 'calibration', 'finished', true)", [rid])
    wr = StoreWriter(st)
    pool = draws(rng, probs, k_max)
    ptok = np.maximum(1.0, TOKENS_PER_SAMPLE + rng.normal(0, 15, pool.shape)).round()
    for t in range(n):
        for j in range(k_max):
            wr.add("pool", {"run_id": rid, "task_id": f"t{t}", "seed": 0, "sample_index": j,
                            "answer": labels[pool[t, j]], "correct": bool(pool[t, j] == 0),
                            "tokens": int(ptok[t, j]), "cost_usd": 0.0})
    designs = {f"null@{k}": design_cells(rng, probs, k) for k in NULL_K}
    if fix is not None:
        designs["alt"] = design_cells(rng, probs, ALT_K, fix)
    for name, (ok, tokens, k) in designs.items():
        for t in range(n):
            wr.add("results", {"run_id": rid, "design": name, "design_name": name, "task_id": f"t{t}", "seed": 0,
                               "source": "sim", "correct": bool(ok[t]), "tokens": int(tokens[t]),
                               "calls": int(k[t]), "cost_usd": 0.0, "status": "ok", "simulated": True})
    wr.flush()
    compute_curve(st, rid, CotScSpec(k_max=k_max, bootstrap=500), {f"t{t}": ("sim", None) for t in range(n)})
    # the designs of a suite form one Holm family, as the designs of one run do
    compute_paired(st, rid, stats)
    tests = {r["design"]: r for r in st.df(
        "SELECT * FROM paired_tests WHERE against = 'curve' AND axis = 'all' AND unit = 'tokens'").to_dict("records")}
    comp = {r["design"]: r for r in comparison(st, rid).to_dict("records")}
    st.close()
    out = {}
    for name, r in tests.items():
        c = comp[name]
        hw_u = unpaired_halfwidth(float(c["accuracy"]), int(c["n"]),
                                  (float(c["curve_ci_lo_at_tokens"]), float(c["curve_ci_hi_at_tokens"])))
        hw_c = (float(c["curve_ci_hi_at_tokens"]) - float(c["curve_ci_lo_at_tokens"])) / 2
        out[name] = {"verdict": r["verdict"], "width": r["ci_hi"] - r["ci_lo"], "unpaired": 2 * hw_u,
                     "indep": 2 * math.sqrt((hw_u - hw_c) ** 2 + hw_c ** 2), "diff": r["mean_diff"],
                     "position": r["position"], "family": r["family_size"]}
    return out


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, c - h), min(1.0, c + h)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", default="difficulty", help="difficulty | iid | module:function")
    ap.add_argument("--suites", type=int, default=200, help="null suites")
    ap.add_argument("--power-suites", type=int, default=None, help="suites with the +Δ design (default: --suites)")
    ap.add_argument("--tasks", type=int, default=300)
    ap.add_argument("--k-max", type=int, default=8)
    ap.add_argument("--delta", type=float, default=0.10)
    ap.add_argument("--spread", type=float, default=1.5, help="SD of task difficulty (difficulty sim)")
    ap.add_argument("--ability", type=float, default=0.4, help="logit of P(gold) at difficulty 0")
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(BANNER)
    sim = load_sim(a.sim, a.spread, a.ability)
    fix, base_acc = calibrate_fix(sim, a.delta, a.seed)
    print(f"simulator {a.sim} (spread {a.spread}, ability {a.ability}); {a.suites} suites × {a.tasks} tasks, "
          f"k_max {a.k_max}; null designs at k* = {', '.join(map(str, NULL_K))}; alternative at k* = {ALT_K} "
          f"fixing {fix:.3f} of its errors (true accuracy {base_acc:.3f} → +{100 * a.delta:.1f} pp)")
    stats = StatsSpec(bootstrap=a.bootstrap, seed=a.seed)
    rng = np.random.default_rng(a.seed)
    t0 = time.perf_counter()
    null = [one_suite(sim, rng, a.tasks, a.k_max, None, stats) for _ in range(a.suites)]
    n_alt = a.suites if a.power_suites is None else a.power_suites
    alt = [one_suite(sim, rng, a.tasks, a.k_max, fix, stats) for _ in range(n_alt)]
    wall = time.perf_counter() - t0
    names = [f"null@{k}" for k in NULL_K]
    false = ("worth it", "not worth it")
    for title, res in (("null suites (3 null designs, Holm over 3)", null),
                       ("power suites' nulls (3 null designs + the +Δ design, Holm over 4)", alt)):
        if not res:
            continue
        print(f"\n{title}\n{'design':10} {'position':9} {'false verdicts':>15} {'rate [95% CI]':>22} {'mean Δ (pp)':>12}")
        for name in names:
            bad = sum(r[name]["verdict"] in false for r in res)
            lo, hi = wilson(bad, len(res))
            print(f"{name:10} {res[0][name]['position']:9} {bad:>8} / {len(res):<5} {100 * bad / len(res):6.1f}% "
                  f"[{100 * lo:.1f}, {100 * hi:.1f}] {100 * np.mean([r[name]['diff'] for r in res]):+12.2f}")
        anyf = sum(any(r[name]["verdict"] in false for name in names) for r in res)
        lo, hi = wilson(anyf, len(res))
        print(f"{'any null':10} {'(FWER)':9} {anyf:>8} / {len(res):<5} {100 * anyf / len(res):6.1f}% "
              f"[{100 * lo:.1f}, {100 * hi:.1f}]   target ≤ 5%")
    if not alt:
        print(f"\n{len(null)} null suites in {time.perf_counter() - t0:.0f}s (2 cores, shared, noisy)")
        return
    wins = sum(r["alt"]["verdict"] == "worth it" for r in alt)
    lo, hi = wilson(wins, len(alt))
    print(f"\npower: the +{100 * a.delta:.0f} pp design is called 'worth it' in {wins} / {len(alt)} = "
          f"{100 * wins / len(alt):.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] of suites at n = {a.tasks} "
          f"(Holm over 4 designs; mean observed Δ {100 * np.mean([r['alt']['diff'] for r in alt]):+.2f} pp)  "
          "target ≥ 80%")
    print(f"\n{'design':10} {'paired CI width':>16} {'unpaired (overlap)':>19} {'ratio':>6} "
          f"{'unpaired (indep.)':>18} {'ratio':>6}")
    for name in names + ["alt"]:
        pw = np.mean([r[name]["width"] for r in alt])
        uw = np.mean([r[name]["unpaired"] for r in alt])
        iw = np.mean([r[name]["indep"] for r in alt])
        print(f"{name:10} {100 * pw:13.1f} pp {100 * uw:16.1f} pp {pw / uw:6.2f} {100 * iw:15.1f} pp {pw / iw:6.2f}")
    print(f"\n{len(null)} + {len(alt)} suites in {wall:.0f}s (2 cores, shared, noisy)")


if __name__ == "__main__":
    main()
