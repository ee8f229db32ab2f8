"""Runs against runs: is B better than A on the same tasks? (``masbench compare --a RUN[:DESIGN]
--b RUN[:DESIGN]``; rule in docs/metrics.md, "Runs against runs")

A and B are each a design of a run — two designs of one run, the same design in two runs (v1
against v2 of a prompt, model X against model Y), in one store file or two. Their cells are paired
by task id and seed (:mod:`masbench.store.run_pairs`); a cell without a partner, or whose task id
carries another gold answer, is reported and left out. On the matched cells, per task (seeds
averaged), Δ = B − A is tested exactly as two designs of one run are (``compare --against``,
:mod:`.paired_tests`): the exact sign-flip test of the 0/1 pairs averaged per task (McNemar
clustered by task), Holm across every pair asked. The cost ratio is B / A in the unit asked
(default the suite's ``stats.match``; the budget unit needs both sides on one budget basis, else
tokens). The verdict on B uses the words of the verdict against the CoT-SC curve
(:mod:`.stats.decide`), with A's cost in the curve's place:

| B's cost against A's | significantly better | significantly worse | neither |
|---|---|---|---|
| same (within noise) | worth it | not worth it | inconclusive, needs n ≈ lo–hi |
| cheaper | worth it | inconclusive (a trade-off) | inconclusive, needs n ≈ lo–hi |
| costlier | inconclusive (a trade-off) | not worth it | not shown worth it |
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..spec import StatsSpec
from ..store import Store
from ..store.run_pairs import Side, Unmatched, bases, pair_summary, pair_tasks, run_designs, run_exists, unmatched
from .paired_tests import NEED_LEVEL, resamples_for
from .stats.clustered import clustered_mcnemar, comparison_seed
from .stats.decide import INCONCLUSIVE, NOT_SHOWN, NOT_WORTH, WORTH, need_text
from .stats.paired import holm, holm_tiebreak
from .stats.power import n_range

import numpy as np

SAME, CHEAPER, COSTLIER = "same", "cheaper", "costlier"


@dataclass(frozen=True)
class Ref:
    """``RUN[:DESIGN]`` as given on the command line."""

    run: str
    """Run id."""
    design: str | None = None
    """Design label; None: the other side's, or every design both runs have."""

    @classmethod
    def parse(cls, text: str) -> "Ref":
        run, _, design = text.partition(":")
        if not run.strip():
            raise ValueError(f"{text!r}: give RUN or RUN:DESIGN")
        return cls(run.strip(), design.strip() or None)


@dataclass
class PairResult:
    """One A-against-B comparison: the paired test of Δ = B − A, the cost ratio and the verdict."""

    a: Side
    """The reference side."""
    b: Side
    """The side judged."""
    unit: str
    """The cost unit of the ratio and of the verdict's cost position."""
    n_tasks: int = 0
    """Matched tasks (the test's n)."""
    n_cells: int = 0
    """Matched (task, seed) cells."""
    acc_a: float | None = None
    """A's accuracy on the matched cells."""
    acc_b: float | None = None
    """B's accuracy on the matched cells."""
    mean_diff: float = math.nan
    """Mean per-task Δ = B − A (seeds averaged per task)."""
    sd: float = math.nan
    """SD of the per-task Δ."""
    ci: tuple[float, float] = (math.nan, math.nan)
    """95% interval of the mean Δ (the test's)."""
    p_value: float = math.nan
    """Two-sided p of the test."""
    method: str = ""
    """The test (as ``paired_tests.method`` says it)."""
    n_plus: int = 0
    """Tasks where B did better than A."""
    n_minus: int = 0
    """Tasks where A did better than B."""
    family_size: int = 1
    """Pairs in the Holm family (every pair asked)."""
    p_holm: float = math.nan
    """Holm-adjusted p."""
    level_holm: float = 0.05
    """The level this pair is tested at under Holm."""
    ci_holm: tuple[float, float] = (math.nan, math.nan)
    """The interval at the Holm level."""
    resamples: int = 0
    """Resamples the test was allowed (the exact test uses none)."""
    cost_a: float | None = None
    """A's mean cost per cell in ``unit``."""
    cost_b: float | None = None
    """B's mean cost per cell in ``unit``."""
    cost_ratio: float | None = None
    """B's cost / A's."""
    cost: str = SAME
    """B's cost against A's: same (within noise), cheaper or costlier."""
    verdict: str = INCONCLUSIVE
    """One of the verdict words of :mod:`.stats.decide`."""
    reason: str = ""
    """Why, in words."""
    unmatched: list[Unmatched] = field(default_factory=list)
    """What did not pair (left out)."""
    notes: list[str] = field(default_factory=list)
    """Anything the reader should know (a unit fallen back, …)."""


def resolve(store: Store, a_refs: list[Ref], b_refs: list[Ref], b_catalog: str = "") -> list[tuple[Side, Side]]:
    """The pairs asked: ``--a`` and ``--b`` in order (one of them may be given once for all); a
    missing design is the other side's; both missing: every design label both runs have, one pair
    each. ``ValueError`` naming the run or design that is not there."""
    if not a_refs or not b_refs:
        raise ValueError("give both --a RUN[:DESIGN] and --b RUN[:DESIGN]")
    if len(a_refs) != len(b_refs) and 1 not in (len(a_refs), len(b_refs)):
        raise ValueError(f"{len(a_refs)} --a and {len(b_refs)} --b: give as many of each, or one of either")
    n = max(len(a_refs), len(b_refs))
    a_refs, b_refs = a_refs * (n // len(a_refs)), b_refs * (n // len(b_refs))
    out: list[tuple[Side, Side]] = []
    for ra, rb in zip(a_refs, b_refs):
        da = _designs(store, ra.run, "", "A")
        db = _designs(store, rb.run, b_catalog, "B")
        if ra.design is None and rb.design is None:
            common = [d for d in da if d in db]
            if not common:
                raise ValueError(f"runs {ra.run!r} and {rb.run!r} have no design in common "
                                 f"(A: {', '.join(da)}; B: {', '.join(db)}): name them, RUN:DESIGN")
            labels = [(d, d) for d in common]
        else:
            labels = [(ra.design or rb.design or "", rb.design or ra.design or "")]
        for x, y in labels:
            for d, have, r, side in ((x, da, ra.run, "A"), (y, db, rb.run, "B")):
                if d not in have:
                    raise ValueError(f"{side}: run {r!r} has no design {d!r} (designs: {', '.join(have)})")
            out.append((Side(ra.run, x), Side(rb.run, y, b_catalog)))
    return list(dict.fromkeys(out))


def _designs(store: Store, run: str, catalog: str, side: str) -> list[str]:
    if not run_exists(store, run, catalog):
        raise ValueError(f"{side}: no run {run!r} in its store")
    return run_designs(store, run, catalog)


def cost_unit(store: Store, pairs: list[tuple[Side, Side]], asked: str) -> tuple[str, list[str]]:
    """The unit the pairs' costs are read in: ``asked``, except ``budget`` where a pair's sides are
    on different (or no recorded) budget bases: then tokens, with a note."""
    if asked != "budget":
        return asked, []
    for a, b in pairs:
        ba, bb = bases(store, a), bases(store, b)
        if len(ba) != 1 or ba != bb:
            return "tokens", [f"cost in tokens: the budget basis of {a.run}:{a.design} ({', '.join(ba) or 'none'}) "
                              f"and of {b.run}:{b.design} ({', '.join(bb) or 'none'}) are not one basis"]
    return "budget", []


def decide_pair(res: PairResult, alpha: float, power: float, ci_need: tuple[float, float]) -> tuple[str, str]:
    """(verdict, reason) of B against A (the table in the module docstring)."""
    lo, hi = res.ci_holm
    better = res.p_holm < alpha and lo > 0
    worse = res.p_holm < alpha and hi < 0
    need = n_range(ci_need, res.sd, res.level_holm, power) if res.n_tasks > 1 else None
    n_lo, n_hi = need if need is not None else (None, None)
    need_words = need_text(n_lo, res.n_tasks, n_hi, unbounded=n_lo is not None and n_hi is None)
    ratio = "n/a" if res.cost_ratio is None else f"{res.cost_ratio:.2f}\u00d7"
    if res.cost == COSTLIER:
        if better:
            return INCONCLUSIVE, f"significantly better than A but costs {ratio} as much: a trade-off"
        if worse:
            return NOT_WORTH, f"significantly worse than A and costs {ratio} as much"
        return NOT_SHOWN, f"costs {ratio} as much as A, no gain shown; {need_words}"
    if res.cost == CHEAPER:
        if better:
            return WORTH, f"cheaper than A ({ratio}) and significantly better"
        if worse:
            return INCONCLUSIVE, f"cheaper than A ({ratio}) but significantly less accurate: a trade-off"
        return INCONCLUSIVE, need_words
    if better:
        return WORTH, "significantly better than A at the same cost"
    if worse:
        return NOT_WORTH, "significantly worse than A at the same cost"
    return INCONCLUSIVE, need_words


def pair_seed(spec: StatsSpec, a: Side, b: Side) -> int:
    """The resampling seed of a pair (the interval is Monte Carlo; the p-value is exact): the one
    the within-run test of the two design labels uses (all tasks), so two designs of one run split
    into two runs give the identical interval (its group value is the NULL axis value of 'all' as
    the within-run frame reads it: ``<NA>``; tests/harness/test_run_compare.py holds them equal)."""
    return comparison_seed(spec.seed, "all", "<NA>", *sorted((a.design, b.design)))


def _cost_position(s: dict[str, Any]) -> str:
    same, a, b = s.get("same_cost"), s.get("cost_a"), s.get("cost_b")
    if same is None or bool(same) or a is None or b is None:
        return SAME
    return CHEAPER if b < a else COSTLIER


def compare_runs(store: Store, pairs: list[tuple[Side, Side]], spec: StatsSpec | None = None,
                 unit: str | None = None) -> list[PairResult]:
    """Test every pair (Holm across them all) and decide each verdict."""
    spec = spec or StatsSpec()
    unit, notes = cost_unit(store, pairs, unit or spec.match)
    b_f = resamples_for(len(pairs), spec)
    out: list[PairResult] = []
    tests = []
    for a, b in pairs:
        res = PairResult(a, b, unit, unmatched=unmatched(store, a, b), notes=list(notes))
        tasks = pair_tasks(store, a, b, unit)
        s = pair_summary(store, a, b, unit)
        res.n_tasks, res.n_cells = len(tasks), int(s.get("n_cells") or 0)
        res.acc_a, res.acc_b = s.get("acc_a"), s.get("acc_b")
        res.cost_a, res.cost_b, res.cost_ratio = s.get("cost_a"), s.get("cost_b"), s.get("cost_ratio")
        res.cost = _cost_position(s)
        if not tasks:
            res.notes.append("no task and seed in common: nothing to test")
            res.reason = "no matched cells"
            out.append(res)
            tests.append(None)
            continue
        d = np.array([t[2] for t in tasks], dtype=float)
        t, kw = clustered_mcnemar(d, np.array([t[1] for t in tasks]), b_f, pair_seed(spec, a, b))
        res.mean_diff, res.sd, res.ci, res.p_value = t.mean, t.sd, t.ci(0.95), t.p_value
        res.method, res.n_plus, res.n_minus, res.resamples = kw["method"], kw["n_discordant_plus"], \
            kw["n_discordant_minus"], b_f
        out.append(res)
        tests.append(t)
    done = [(r, t) for r, t in zip(out, tests) if t is not None]
    if done:
        ties = [holm_tiebreak(t.t, f"{r.a.run}:{r.a.design}|{r.b.run}:{r.b.design}") for r, t in done]
        adj, levels = holm([r.p_value for r, _ in done], spec.alpha, ties=ties)
        for (r, t), pa, lv in zip(done, adj, levels):
            r.family_size, r.p_holm, r.level_holm, r.ci_holm = len(done), pa, lv, t.ci(1 - lv)
            r.verdict, r.reason = decide_pair(r, spec.alpha, spec.power, t.ci(NEED_LEVEL))
    return out


__all__ = ["CHEAPER", "COSTLIER", "PairResult", "Ref", "SAME", "compare_runs", "cost_unit", "decide_pair", "resolve"]
