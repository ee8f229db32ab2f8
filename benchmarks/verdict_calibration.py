"""Calibration of the paired verdicts. EVERY NUMBER HERE IS SIMULATED.

Each simulated *suite* has n tasks; each task has a true answer distribution (P(gold) and a
distribution over 3 wrong answers). The CoT-SC pool draws k_max samples per task; designs are
CoT-SC-like voters with a known true accuracy, scored on the same tasks. Every suite goes through
the real pipeline once: rows into a DuckDB store, ``compute_curve`` (exact maj@k), the paired
views; then every registered fixed-n test (``stats.test``: sign-flip, student-t, bootstrap-t = the
earlier rule with pseudo-tasks, bootstrap-t-plain) is applied to the same per-task differences
(``paired_task_diffs``) through the shipped verdict code (``curve_rows``: matched-cost adjustment,
Holm, ``decide``). The study reports, per test and per n (``--tasks 40,300``):

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

    python benchmarks/verdict_calibration.py [--sim difficulty] [--suites 2000] [--power-suites 1000] [--tasks 40,300]
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

from masbench.harness import compute_curve  # noqa: E402
from masbench.harness.paired_tests import curve_rows  # noqa: E402
from masbench.registry import PAIRED_TESTS  # noqa: E402
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


def one_suite(sim: Sim, rng: np.random.Generator, n: int, k_max: int, fix: float | None, specs: dict[str, StatsSpec],
              widths: bool = False) -> dict:
    """One suite through the real pipeline: the null designs, plus the +Δ design unless ``fix`` is
    None; every test of ``specs`` on the same per-task differences. → {test: {design: row}}."""
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
    compute_curve(st, rid, CotScSpec(k_max=k_max, bootstrap=500 if widths else 0),
                  {f"t{t}": ("sim", None) for t in range(n)})
    # the verdict unit only (tokens: these stores record no budget spend), all tasks: one Holm family
    tasks = st.df("SELECT * FROM paired_task_diffs WHERE run_id = ? AND axis = 'all' AND unit = 'tokens' "
                  "ORDER BY ALL", [rid])
    names = {d: d for d in designs}
    out: dict[str, dict] = {}
    for test, spec in specs.items():
        out[test] = {r["design"]: {"verdict": r["verdict"], "diff": r["mean_diff"], "position": r["position"],
                                   "width": r["ci_hi"] - r["ci_lo"], "family": r["family_size"],
                                   "sd": r["sd_task"]}
                     for r in curve_rows(rid, tasks, names, spec)}
    if widths:
        comp = {r["design"]: r for r in comparison(st, rid).to_dict("records")}
        for name, r in out[next(iter(specs))].items():
            c = comp[name]
            hw_u = unpaired_halfwidth(float(c["accuracy"]), int(c["n"]),
                                      (float(c["curve_ci_lo_at_tokens"]), float(c["curve_ci_hi_at_tokens"])))
            hw_c = (float(c["curve_ci_hi_at_tokens"]) - float(c["curve_ci_lo_at_tokens"])) / 2
            r.update(unpaired=2 * hw_u, indep=2 * math.sqrt((hw_u - hw_c) ** 2 + hw_c ** 2))
    st.close()
    return out


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, c - h), min(1.0, c + h)


FALSE = ("worth it", "not worth it")


def _rate(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{100 * k / n:5.1f}% [{100 * lo:4.1f}, {100 * hi:4.1f}]"


def report(n_tasks: int, tests: list[str], null: list[dict], alt: list[dict], delta: float) -> None:
    names = [f"null@{k}" for k in NULL_K]
    print(f"\nn = {n_tasks} tasks: {len(null)} null suites (3 null designs, Holm over 3), {len(alt)} power suites "
          f"(3 nulls + the +{100 * delta:.0f} pp design, Holm over 4). SIMULATED")
    print(f"{'test':18} {'FWER [95% CI]':>20} {'per null design (k* = 2.5 / 4.5 / 6.5)':>42} "
          f"{'power [95% CI]':>20} {'FWER, power suites':>20}")
    for test in tests:
        fw = sum(any(r[test][d]["verdict"] in FALSE for d in names) for r in null)
        per = " / ".join(f"{100 * sum(r[test][d]['verdict'] in FALSE for r in null) / len(null):4.1f}%" for d in names)
        pw = _rate(sum(r[test]["alt"]["verdict"] == "worth it" for r in alt), len(alt)) if alt else "-"
        fa = _rate(sum(any(r[test][d]["verdict"] in FALSE for d in names) for r in alt), len(alt)) if alt else "-"
        print(f"{test:18} {_rate(fw, len(null)):>20} {per:>42} {pw:>20} {fa:>20}")
    print("targets: FWER within [3%, 5%]; power at least Student t's")
    if alt:
        print(f"mean observed Δ of the +Δ design: {100 * np.mean([r[tests[0]]['alt']['diff'] for r in alt]):+.2f} pp; "
              f"of the nulls: " + ", ".join(f"{100 * np.mean([r[tests[0]][d]['diff'] for r in null]):+.2f}"
                                            for d in names) + " pp")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sim", default="difficulty", help="difficulty | iid | module:function")
    ap.add_argument("--suites", type=int, default=2000, help="null suites per n")
    ap.add_argument("--power-suites", type=int, default=None, help="suites with the +Δ design per n (default: half of --suites)")
    ap.add_argument("--width-suites", type=int, default=50, help="power suites whose CI widths are compared with the unpaired ones")
    ap.add_argument("--tasks", default="40,300", help="comma-separated n")
    ap.add_argument("--tests", default=",".join(PAIRED_TESTS.names()), help="registered tests to compare")
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
    tests = a.tests.split(",")
    specs = {t: StatsSpec(bootstrap=a.bootstrap, seed=a.seed, test=t) for t in tests}
    n_alt = a.suites // 2 if a.power_suites is None else a.power_suites
    print(f"simulator {a.sim} (spread {a.spread}, ability {a.ability}), k_max {a.k_max}; null designs at k* = "
          f"{', '.join(map(str, NULL_K))}; alternative at k* = {ALT_K} fixing {fix:.3f} of its errors (true accuracy "
          f"{base_acc:.3f} → +{100 * a.delta:.1f} pp); tests {', '.join(tests)}; B = {a.bootstrap} (raised per family)")
    print(f"machine: {os.cpu_count()} cores; load at start: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}")
    t_all = time.perf_counter()
    for n_tasks in (int(x) for x in a.tasks.split(",")):
        rng = np.random.default_rng(a.seed + n_tasks)
        t0 = time.perf_counter()
        null = [one_suite(sim, rng, n_tasks, a.k_max, None, specs) for _ in range(a.suites)]
        alt = [one_suite(sim, rng, n_tasks, a.k_max, fix, specs, widths=i < a.width_suites) for i in range(n_alt)]
        report(n_tasks, tests, null, alt, a.delta)
        wide = [r for r in alt if "unpaired" in r[tests[0]]["alt"]]
        if wide:
            print(f"\n{'design':10} {'paired CI width':>16} {'unpaired (overlap)':>19} {'ratio':>6} "
                  f"{'unpaired (indep.)':>18} {'ratio':>6}   ({tests[0]}, {len(wide)} suites)")
            for name in [f"null@{k}" for k in NULL_K] + ["alt"]:
                pw = np.mean([r[tests[0]][name]["width"] for r in wide])
                uw = np.mean([r[tests[0]][name]["unpaired"] for r in wide])
                iw = np.mean([r[tests[0]][name]["indep"] for r in wide])
                print(f"{name:10} {100 * pw:13.1f} pp {100 * uw:16.1f} pp {pw / uw:6.2f} {100 * iw:15.1f} pp "
                      f"{pw / iw:6.2f}")
        print(f"n = {n_tasks}: {len(null)} + {len(alt)} suites in {time.perf_counter() - t0:.0f}s; load now "
              f"{os.getloadavg()[0]:.2f} (2 cores, shared)")
    print(f"\ntotal {time.perf_counter() - t_all:.0f}s")


if __name__ == "__main__":
    main()
