"""Calibration of the anytime-valid verdicts (``masbench run --until-decided``). EVERY NUMBER HERE IS SIMULATED.

Simulator: ``benchmarks/verdict_calibration.py``'s latent-difficulty model (P(gold) = σ(ability − b_t),
b_t ~ N(0, spread²), task-specific wrong-answer weights ~ Dirichlet(½)), imported from it. Per suite
a CoT-SC pool of k_max samples per task; the curve's per-task value at k is the pool's exact maj@k
(:func:`masbench.harness.stats.majk.exact_majk`, ties split). Designs are voters over k ∈ {⌊k*⌋, ⌈k*⌉}
(mean cost k* samples); a +Δ design also fixes a calibrated share of its errors. Per-task
differences: design correct − curve at the design's cost, matched *predictably* as ``--until-decided``
does (each batch at the design's mean k over earlier batches; the first batch at its own).

Tasks arrive in batches (``--batch``); after every batch the sequential rule
(:func:`masbench.harness.stats.sequential.look`: betting confidence sequence, Holm over the
anytime-valid p-values) updates every undecided design; a decided design stops receiving tasks; the
run ends when all are decided or at ``--cap`` tasks. Beside it, naive peeking: the shipped fixed-n
test (paired bootstrap-t with Holm, :func:`masbench.harness.stats.paired.paired_bootstrap`) applied
after every batch, stopping a design the first time it looks significant.

1. Null suites: three designs whose true accuracy equals the curve's at their cost (k* = 2.5, 4.5,
   6.5). Family-wise false-verdict rate (any "worth it" / "not worth it") with Wilson 95% CIs.
2. Effect suites (+5, +10, +20 pp): the +Δ design at k* = 4.5 and nulls at 2.5 and 6.5 (Holm over 3).
   Power at the cap; tasks and calls to the +Δ design's decision (mean, median); against the
   fixed-n plan: n from :func:`~masbench.harness.stats.power.n_needed` at α/3 and 80% power with the
   simulated σ, the fixed n that reaches the sequential rule's own power (normal approximation,
   :func:`~masbench.harness.stats.power.power_at`), and the fixed-n run at the cap.

Calls: a design's own calls (k per task) plus the pool's k_max per task on the tasks it received —
the pool cost it needs; the fixed-n run pays (k* + k_max) per task. Run::

    python benchmarks/sequential_calibration.py [--null-suites 500] [--effect-suites 200] [--cap 400] [--batch 20]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from verdict_calibration import calibrate_fix, design_cells, draws, sim_difficulty, wilson  # noqa: E402

from masbench.harness.stats.majk import exact_majk  # noqa: E402
from masbench.harness.stats.paired import holm, paired_bootstrap  # noqa: E402
from masbench.harness.stats.power import n_needed, power_at  # noqa: E402
from masbench.harness.stats.sequential import DEFAULT_BET, LookInput, LookResult, betting_sequence, look  # noqa: E402

BANNER = "SIMULATED — synthetic answer distributions with known truth; not measurements of real models"
NULL_K = (2.5, 4.5, 6.5)
ALT_K = 4.5
FALSE = ("worth it", "not worth it")
_MAJK: dict[tuple[int, ...], np.ndarray] = {}


def curve_values(pool: np.ndarray, m: int) -> np.ndarray:
    """Per task (row of ``pool``: answer indices, 0 = gold), exact maj@k for k = 1..k_max."""
    k_max = pool.shape[1]
    counts = np.stack([(pool == j).sum(axis=1) for j in range(m)], axis=1)
    out = np.empty((len(pool), k_max))
    for i, c in enumerate(map(tuple, counts)):
        v = _MAJK.get(c)
        if v is None:
            answers = [str(j) for j in range(m) for _ in range(c[j])]
            v = _MAJK[c] = exact_majk(answers, [a == "0" for a in answers])
        out[i] = v
    return out


def at_cost(curve: np.ndarray, k: float) -> np.ndarray:
    """The curve's per-task value at a mean cost of k samples (linear between integer k, as the curve)."""
    k = min(max(k, 1.0), curve.shape[1])
    lo = int(math.floor(k))
    hi = min(lo + 1, curve.shape[1])
    f = k - lo
    return (1 - f) * curve[:, lo - 1] + f * curve[:, hi - 1]


def predictable_diffs(ok: np.ndarray, k: np.ndarray, curve: np.ndarray, batch: int) -> np.ndarray:
    """design − curve per task, each batch matched at the mean k of the earlier batches (first: its own)."""
    out = np.empty(len(ok))
    for a in range(0, len(ok), batch):
        b = min(len(ok), a + batch)
        km = float(k[:a].mean()) if a else float(k[a:b].mean())
        out[a:b] = ok[a:b] - at_cost(curve[a:b], km)
    return out


@dataclass
class Suite:
    names: list[str]
    diffs: dict[str, np.ndarray]
    k: dict[str, np.ndarray]
    positions: dict[str, str]


def make_suite(sim, rng: np.random.Generator, cap: int, k_max: int, batch: int, designs: dict[str, tuple[float, float]]) -> Suite:
    """``designs``: name → (k*, fix rate)."""
    p, w = sim(rng, cap)
    probs = np.column_stack([p, (1 - p)[:, None] * w])
    pool = draws(rng, probs, k_max)
    curve = curve_values(pool, probs.shape[1])
    diffs, ks = {}, {}
    for name, (kstar, fix) in designs.items():
        ok, _, k = design_cells(rng, probs, kstar, fix)
        diffs[name] = predictable_diffs(ok.astype(float), k.astype(float), curve, batch)
        ks[name] = k
    return Suite(list(designs), diffs, ks, {n: "within" for n in designs})


def run_sequential(s: Suite, cap: int, batch: int, alpha: float, bet: str, k_max: int) -> dict[str, tuple[int, str]]:
    """The --until-decided rule: design → (tasks at its decision or at the cap, verdict).

    Each design's anytime p-value path is computed once (``paths``); :func:`look` — the real rule
    — runs at every look where some undecided design's Holm-adjusted p-value is below α (at
    any other look nothing can be decided: a decision needs p_holm < α), so the result is the
    rule's exactly."""
    p_path = {d: betting_sequence(s.diffs[d], alpha=alpha, bet=bet, paths=True)[1][:, 2] for d in s.names}  # type: ignore[arg-type,index]
    frozen: dict[str, LookResult] = {}
    last: dict[str, tuple[int, str]] = {}
    n = 0
    for n in range(batch, cap + batch, batch):
        n = min(n, cap)
        p = [frozen[d].p_anytime if d in frozen else float(p_path[d][n - 1]) for d in s.names]
        adj, _ = holm(p, alpha)
        if any(a < alpha and d not in frozen for d, a in zip(s.names, adj)):
            inputs = [LookInput(d, s.diffs[d][:n], s.positions[d], k_max, frozen.get(d)) for d in s.names]
            for r in look(inputs, alpha, bet):  # type: ignore[arg-type]
                if r.decided and r.design not in frozen:
                    frozen[r.design] = r
        if len(frozen) == len(s.names) or n >= cap:
            break
    for d in s.names:
        last[d] = (frozen[d].n, frozen[d].verdict) if d in frozen else (n, "inconclusive")
    return last


def run_peeking(s: Suite, cap: int, batch: int, alpha: float, boot: int, seed: int) -> dict[str, tuple[int, str]]:
    """Naive peeking at the fixed-n test: Holm over bootstrap-t p-values after every batch; a design
    stops the first time it looks significant."""
    done: dict[str, tuple[int, str, float]] = {}
    for n in range(batch, cap + batch, batch):
        n = min(n, cap)
        live = [d for d in s.names if d not in done]
        bs = {d: paired_bootstrap(s.diffs[d][:n], boot, seed + n) for d in live}
        p = [done[d][2] if d in done else bs[d].p_value for d in s.names]
        adj, lv = holm(p, alpha)
        for d, pa, level in zip(s.names, adj, lv):
            if d in done:
                continue
            lo, hi = bs[d].ci(1 - level)
            if pa < alpha and (lo > 0 or hi < 0):
                done[d] = (n, "worth it" if lo > 0 else "not worth it", p[s.names.index(d)])
        if len(done) == len(s.names) or n >= cap:
            break
    return {d: (done[d][0], done[d][1]) if d in done else (cap, "inconclusive") for d in s.names}


def sigma_of(sim, delta: float, k_max: int, seed: int, n: int = 20_000) -> float:
    """SD of the +Δ design's per-task differences (matched at its true k*), from a large pilot."""
    rng = np.random.default_rng(seed + 7)
    fix = calibrate_fix(sim, delta, seed)[0] if delta else 0.0
    s = make_suite(sim, rng, n, k_max, n, {"alt": (ALT_K, fix)})
    return float(s.diffs["alt"].std(ddof=1))


def pct(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k:>4} / {n:<4} {100 * k / n:5.1f}% [{100 * lo:4.1f}, {100 * hi:4.1f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--null-suites", type=int, default=500)
    ap.add_argument("--effect-suites", type=int, default=200, help="suites per effect size")
    ap.add_argument("--effects", default="5,10,20", help="effect sizes in pp")
    ap.add_argument("--cap", type=int, default=400, help="task cap (--max-tasks)")
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--k-max", type=int, default=8)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--bet", default=DEFAULT_BET)
    ap.add_argument("--bootstrap", type=int, default=1000, help="resamples of the peeked fixed-n test")
    ap.add_argument("--spread", type=float, default=1.5)
    ap.add_argument("--ability", type=float, default=0.4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(BANNER)
    t_start, load0 = time.perf_counter(), os.getloadavg()
    sim = sim_difficulty(a.spread, a.ability)
    rng = np.random.default_rng(a.seed)
    print(f"latent-difficulty simulator (spread {a.spread}, ability {a.ability}), k_max {a.k_max}; cap {a.cap} tasks, "
          f"a look after every {a.batch}; α = {a.alpha}, bet {a.bet}; predictable matching (each batch at the "
          f"design's mean k over earlier batches)")

    # 1. null suites: FWER of the sequential rule vs naive peeking at the fixed-n test
    names = [f"null@{k}" for k in NULL_K]
    seq_bad, peek_bad, seq_any, peek_any, tasks_null = {n: 0 for n in names}, {n: 0 for n in names}, 0, 0, []
    for _ in range(a.null_suites):
        s = make_suite(sim, rng, a.cap, a.k_max, a.batch, {n: (k, 0.0) for n, k in zip(names, NULL_K)})
        rs = run_sequential(s, a.cap, a.batch, a.alpha, a.bet, a.k_max)
        rp = run_peeking(s, a.cap, a.batch, a.alpha, a.bootstrap, a.seed)
        for n in names:
            seq_bad[n] += rs[n][1] in FALSE
            peek_bad[n] += rp[n][1] in FALSE
        seq_any += any(rs[n][1] in FALSE for n in names)
        peek_any += any(rp[n][1] in FALSE for n in names)
        tasks_null.append(max(r[0] for r in rs.values()))
    N = a.null_suites
    print(f"\n1. null suites ({N}; 3 designs equal to the curve at their cost, Holm over 3): false verdicts, Wilson 95% CI")
    print(f"{'design':11} {'sequential (--until-decided)':>32} {'naive peeking at fixed-n':>32}")
    for n in names:
        print(f"{n:11} {pct(seq_bad[n], N):>32} {pct(peek_bad[n], N):>32}")
    print(f"{'any (FWER)':11} {pct(seq_any, N):>32} {pct(peek_any, N):>32}   target ≤ 5% (sequential)")
    print(f"tasks run per null suite: mean {np.mean(tasks_null):.0f}, median {np.median(tasks_null):.0f} (cap {a.cap})")

    # 2. effect suites
    print(f"\n2. effect suites ({a.effect_suites} per effect; the +Δ design at k* = {ALT_K}, nulls at 2.5 and 6.5, Holm over 3)")
    per_task_fixed = ALT_K + a.k_max
    hdr = (f"{'Δ':>5} {'σ':>6} {'power@cap [95% CI]':>26} {'tasks mean':>10} {'median':>6} {'p90':>5} {'calls mean':>10} "
           f"{'median':>6} | {'n80':>4} {'n=':>4} {'fixed@cap':>9} | {'saved vs n=':>11} {'vs n80':>7} {'vs cap':>7}")
    print(hdr)
    rows = []
    for eff in [float(e) / 100 for e in a.effects.split(",")]:
        fix, acc = calibrate_fix(sim, eff, a.seed)
        sd = sigma_of(sim, eff, a.k_max, a.seed)
        wins, tasks, calls = 0, [], []
        for _ in range(a.effect_suites):
            s = make_suite(sim, rng, a.cap, a.k_max, a.batch,
                           {"alt": (ALT_K, fix), "null@2.5": (2.5, 0.0), "null@6.5": (6.5, 0.0)})
            r = run_sequential(s, a.cap, a.batch, a.alpha, a.bet, a.k_max)["alt"]
            wins += r[1] == "worth it"
            tasks.append(r[0])
            calls.append(float(s.k["alt"][: r[0]].sum()) + a.k_max * r[0])
        pw = wins / a.effect_suites
        lvl = a.alpha / 3
        n80 = n_needed(eff, sd, lvl, 0.8) or a.cap
        # the fixed n whose (normal-approximation) power equals the sequential rule's power at the cap
        n_same = next((n for n in range(2, 100 * a.cap) if power_at(n, eff, sd, lvl) >= min(pw, 0.999)), None)
        mc = float(np.mean(calls))
        fixed = lambda n: n * per_task_fixed  # noqa: E731
        print(f"{100 * eff:+4.0f}pp {sd:6.3f} {pct(wins, a.effect_suites):>26} {np.mean(tasks):10.1f} {np.median(tasks):6.0f} "
              f"{np.percentile(tasks, 90):5.0f} {mc:10.0f} {np.median(calls):6.0f} | {n80:4d} {n_same or 0:4d} {a.cap:9d} | "
              f"{100 * (1 - mc / fixed(n_same)) if n_same else float('nan'):10.0f}% {100 * (1 - mc / fixed(n80)):6.0f}% "
              f"{100 * (1 - mc / fixed(a.cap)):6.0f}%")
        rows.append((eff, pw, np.mean(tasks), n_same))
    print(f"\nn80: n_needed at α/3 and 80% power with the simulated σ; n=: the fixed n whose power (normal approx.) "
          f"equals the sequential rule's power at the cap (capped at 99.9%); fixed@cap: the fixed-n run at the cap. "
          f"Calls: the design's own (k per task) plus the pool's {a.k_max} per task it received; a fixed-n run pays "
          f"{per_task_fixed:g} per task. 'saved' = 1 − sequential mean calls / fixed-n calls.")
    print(f"\nwall {time.perf_counter() - t_start:.0f}s; load average at start {load0[0]:.2f}, at end "
          f"{os.getloadavg()[0]:.2f} (2 cores, shared)")


if __name__ == "__main__":
    main()
