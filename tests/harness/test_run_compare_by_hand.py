"""Runs against runs over hand-built stores, through the public functions of
masbench.harness.run_compare (no simulated run: milliseconds). The expected numbers are worked by
hand below: the exact sign-flip p of per-task differences that are all ±1 or 0 is a count of sign
patterns over 2^n; Holm multiplies the smallest of m p-values by m; the cost position follows
the tokens written."""

from __future__ import annotations

from pathlib import Path

import pytest

from masbench.harness import compute_paired
from masbench.harness.run_compare import (CHEAPER, COSTLIER, SAME, PairResult, Ref, compare_runs, cost_unit,
                                          decide_pair, resolve)
from masbench.harness.stats.decide import INCONCLUSIVE, NOT_SHOWN, NOT_WORTH, WORTH
from masbench.spec import StatsSpec
from masbench.store import Store, StoreWriter
from masbench.store.run_pairs import ONLY_A, Side, attached

TASKS = [f"t{i}" for i in range(6)]
# run -> design -> (per task t0..t5: correct, tokens per cell, budget basis)
RUNS: dict[str, dict[str, tuple[list[bool], int, str]]] = {
    "r1": {"x": ([False] * 6, 100, "tokens"), "y": ([False, False, False, False, True, True], 100, "tokens")},
    # r2:x right everywhere (Δ = +1 on all 6 tasks against r1:x), 3x the tokens
    # r2:z against r1:y: Δ = +1, +1, +1, +1, −1, 0, at half the tokens
    "r2": {"x": ([True] * 6, 300, "tokens"), "z": ([True, True, True, True, False, True], 50, "tokens")},
    # r4:x right everywhere at r1:x's tokens; its budget basis is another one
    "r4": {"x": ([True] * 6, 100, "usd")},
}


@pytest.fixture
def st(tmp_path: Path):
    s = Store(tmp_path / "runs.duckdb")
    w = StoreWriter(s)
    for run, ds in RUNS.items():
        s.sql("INSERT INTO runs(run_id, suite, status) VALUES (?, 's', 'finished')", [run])
        for design, (ok, tok, basis) in ds.items():
            for t, c in zip(TASKS, ok):
                w.add("results", {"run_id": run, "design": design, "task_id": t, "seed": 0, "correct": c, "gold": t,
                                  "tokens": tok, "calls": 1, "status": "ok", "budget_basis": basis,
                                  "budget_spent": float(tok)})
    # a task r1:x has and r2:x does not: reported, left out of the test
    w.add("results", {"run_id": "r1", "design": "x", "task_id": "t9", "seed": 0, "correct": True, "gold": "t9",
                      "tokens": 100, "calls": 1, "status": "ok", "budget_basis": "tokens", "budget_spent": 100.0})
    # r3: a run whose only task pairs with nothing
    s.sql("INSERT INTO runs(run_id, suite, status) VALUES ('r3', 's', 'finished')")
    w.add("results", {"run_id": "r3", "design": "x", "task_id": "u0", "seed": 0, "correct": True, "gold": "u0",
                      "tokens": 100, "calls": 1, "status": "ok", "budget_basis": "tokens", "budget_spent": 100.0})
    w.close()
    yield s
    s.close()


def test_refs_parse() -> None:
    assert Ref.parse("r1:x") == Ref("r1", "x") and Ref.parse(" r1 : ") == Ref("r1", None)
    assert Ref.parse("r1") == Ref("r1", None) and Ref.parse("r1:a:b") == Ref("r1", "a:b")
    with pytest.raises(ValueError, match=r"^' :x': give RUN or RUN:DESIGN$"):
        Ref.parse(" :x")


def test_resolve_fills_designs_broadcasts_and_names_what_is_missing(st: Store) -> None:
    # no design named: the labels both runs have (r1: x, y; r2: x, z -> x only)
    assert resolve(st, [Ref("r1")], [Ref("r2")]) == [(Side("r1", "x"), Side("r2", "x"))]
    # one side named: the other side takes its label (r2 has no y)
    with pytest.raises(ValueError, match=r"^B: run 'r2' has no design 'y' \(designs: x, z\)$"):
        resolve(st, [Ref("r1", "y")], [Ref("r2")])
    assert resolve(st, [Ref("r1")], [Ref("r2", "x")]) == [(Side("r1", "x"), Side("r2", "x"))]
    # one --a for two --b; the catalog goes to B's side only; a pair asked twice is tested once
    got = resolve(st, [Ref("r1", "x")], [Ref("r2", "x"), Ref("r4", "x"), Ref("r2", "x")], b_catalog="")
    assert got == [(Side("r1", "x"), Side("r2", "x")), (Side("r1", "x"), Side("r4", "x"))]
    two_a = resolve(st, [Ref("r1", "x"), Ref("r1", "y")], [Ref("r2", "z")])
    assert two_a == [(Side("r1", "x"), Side("r2", "z")), (Side("r1", "y"), Side("r2", "z"))]
    with pytest.raises(ValueError, match=r"^2 --a and 3 --b: give as many of each, or one of either$"):
        resolve(st, [Ref("r1", "x"), Ref("r1", "y")], [Ref("r2", "x")] * 3)
    # two of each: zipped in order, not refused
    assert resolve(st, [Ref("r1", "x"), Ref("r1", "y")], [Ref("r2", "x"), Ref("r2", "z")]) == [
        (Side("r1", "x"), Side("r2", "x")), (Side("r1", "y"), Side("r2", "z"))]
    give_both = r"^give both --a RUN\[:DESIGN\] and --b RUN\[:DESIGN\]$"
    with pytest.raises(ValueError, match=give_both):
        resolve(st, [], [Ref("r2")])
    with pytest.raises(ValueError, match=give_both):
        resolve(st, [Ref("r1")], [])
    with pytest.raises(ValueError, match=r"^A: no run 'nope' in its store$"):
        resolve(st, [Ref("nope")], [Ref("r2")])
    with pytest.raises(ValueError, match=r"^B: no run 'nope' in its store$"):
        resolve(st, [Ref("r1")], [Ref("nope")])
    with pytest.raises(ValueError, match=r"^A: run 'r1' has no design 'q' \(designs: x, y\)$"):
        resolve(st, [Ref("r1", "q")], [Ref("r2", "x")])
    # r5 has designs v and w: nothing in common with r2 (x, z); both lists are written out
    st.sql("INSERT INTO runs(run_id, suite, status) VALUES ('r5', 's', 'finished')")
    st.sql("INSERT INTO results(run_id, design, task_id, seed, status) VALUES ('r5', 'w', 't0', 0, 'ok'), "
           "('r5', 'v', 't0', 0, 'ok')")
    with pytest.raises(ValueError, match=r"^runs 'r2' and 'r5' have no design in common \(A: x, z; B: v, w\): "
                                         r"name them, RUN:DESIGN$"):
        resolve(st, [Ref("r2")], [Ref("r5")])


def test_resolve_reads_b_in_the_attached_store(st: Store, tmp_path: Path) -> None:
    """B's run is looked up (and its side labelled) in the attached file only; A's in the store's own."""
    with Store(tmp_path / "b.duckdb") as other:
        other.sql("INSERT INTO runs(run_id, suite, status) VALUES ('rb', 's', 'finished')")
        other.sql("INSERT INTO results(run_id, design, task_id, seed, status) VALUES ('rb', 'x', 't0', 0, 'ok'), "
                  "('rb', 'w', 't0', 0, 'ok')")
    with attached(st, tmp_path / "b.duckdb") as cat:
        # no design named: rb has w and x, r1 has x and y: x
        assert resolve(st, [Ref("r1")], [Ref("rb")], cat) == [(Side("r1", "x"), Side("rb", "x", cat))]
        assert resolve(st, [Ref("r1", "y")], [Ref("rb", "w")], cat) == [(Side("r1", "y"), Side("rb", "w", cat))]
        with pytest.raises(ValueError, match=r"^B: run 'rb' has no design 'y' \(designs: w, x\)$"):
            resolve(st, [Ref("r1", "y")], [Ref("rb")], cat)
        # r1 is in the store's own file, not in the attached one
        with pytest.raises(ValueError, match=r"^B: no run 'r1' in its store$"):
            resolve(st, [Ref("r1")], [Ref("r1")], cat)


def test_the_budget_unit_needs_one_basis_on_both_sides(st: Store) -> None:
    p12 = [(Side("r1", "x"), Side("r2", "x"))]
    assert cost_unit(st, p12, "tokens") == ("tokens", [])
    assert cost_unit(st, p12, "budget") == ("budget", [])
    # r4 is on the usd basis: tokens, with a note naming both bases
    p14 = [(Side("r1", "x"), Side("r4", "x"))]
    assert cost_unit(st, p12 + p14, "budget") == (
        "tokens", ["cost in tokens: the budget basis of r1:x (tokens) and of r4:x (usd) are not one basis"])
    # a side with no recorded basis, on either side
    st.sql("UPDATE results SET budget_basis = NULL WHERE run_id = 'r2'")
    assert cost_unit(st, p12, "budget")[1] == [
        "cost in tokens: the budget basis of r1:x (tokens) and of r2:x (none) are not one basis"]
    assert cost_unit(st, [(Side("r2", "x"), Side("r1", "x"))], "budget")[1] == [
        "cost in tokens: the budget basis of r2:x (none) and of r1:x (tokens) are not one basis"]
    # a side on two bases (one cell of r1:x on usd): both listed, sorted, on either side
    st.sql("UPDATE results SET budget_basis = 'usd' WHERE run_id = 'r1' AND design = 'x' AND task_id = 't0'")
    assert cost_unit(st, [(Side("r1", "x"), Side("r4", "x"))], "budget")[1] == [
        "cost in tokens: the budget basis of r1:x (tokens, usd) and of r4:x (usd) are not one basis"]
    assert cost_unit(st, [(Side("r4", "x"), Side("r1", "x"))], "budget")[1] == [
        "cost in tokens: the budget basis of r4:x (usd) and of r1:x (tokens, usd) are not one basis"]


def test_two_pairs_tested_by_hand_with_holm(st: Store) -> None:
    p1 = (Side("r1", "x"), Side("r2", "x"))
    p2 = (Side("r1", "y"), Side("r2", "z"))
    r1, r2 = compare_runs(st, [p1, p2], StatsSpec(), "tokens")
    # pair 1: Δ = +1 on 6 tasks; of the 2^6 sign patterns only all-plus and all-minus reach |mean| = 1:
    # p = 2/64 = 0.03125. Pair 2: Δ = +1 x4, −1, 0; the 5 non-zero signs give |sum| >= 3 when 0, 1, 4 or 5 are
    # negative: (1 + 5 + 5 + 1)/32 = 0.375. Holm, m = 2: 2 x 0.03125 = 0.0625, then max(0.0625, 0.375)
    assert r1.p_value == pytest.approx(2 / 64) and r2.p_value == pytest.approx(12 / 32)
    assert (r1.p_holm, r2.p_holm) == (pytest.approx(0.0625), pytest.approx(0.375))
    assert (r1.level_holm, r2.level_holm) == (pytest.approx(0.025), pytest.approx(0.05))
    assert (r1.family_size, r2.family_size) == (2, 2)
    assert (r1.n_tasks, r1.n_cells, r1.n_plus, r1.n_minus) == (6, 6, 6, 0)
    assert (r2.n_tasks, r2.n_cells, r2.n_plus, r2.n_minus) == (6, 6, 4, 1)
    assert r1.mean_diff == pytest.approx(1.0) and r2.mean_diff == pytest.approx(3 / 6)
    # pair 2's SD: Δ = 1,1,1,1,−1,0 around ½: (4 x ¼ + 9/4 + ¼)/5 = 3.5/5 = 0.7
    assert r2.sd == pytest.approx(0.7 ** 0.5)
    # accuracies on the matched cells (t9, only in r1:x, left out): 0 and 1; 2/6 and 5/6
    assert (r1.acc_a, r1.acc_b) == (pytest.approx(0.0), pytest.approx(1.0))
    assert (r2.acc_a, r2.acc_b) == (pytest.approx(2 / 6), pytest.approx(5 / 6))
    assert [(u.kind, u.cells, u.first_tasks) for u in r1.unmatched] == [(ONLY_A, 1, ["t9"])] and r2.unmatched == []
    # costs: 300 against 100 tokens (costlier, 3x), 50 against 100 (cheaper, ½)
    assert (r1.cost_a, r1.cost_b, r1.cost_ratio, r1.cost) == (100, 300, pytest.approx(3.0), COSTLIER)
    assert (r2.cost_a, r2.cost_b, r2.cost_ratio, r2.cost) == (100, 50, pytest.approx(0.5), CHEAPER)
    # pair 1 is not significant after Holm (0.0625 > 0.05) and costs more: not shown worth it;
    # pair 2: cheaper, nothing shown: inconclusive, with the n it needs
    assert r1.verdict == NOT_SHOWN and r1.reason.startswith("costs 3.00\u00d7 as much as A, no gain shown")
    assert r2.verdict == INCONCLUSIVE
    assert r1.unit == r2.unit == "tokens" and r1.resamples == r2.resamples > 0


def test_one_pair_alone_is_significant_and_a_pair_with_no_common_cell_is_not_tested(st: Store) -> None:
    p1 = (Side("r1", "x"), Side("r2", "x"))
    lonely = (Side("r1", "x"), Side("r3", "x"))
    r1, r3 = compare_runs(st, [p1, lonely], StatsSpec(), "tokens")
    # the pair without a common cell is left out of the family: pair 1 alone, p = 0.03125 < 0.05, CI above 0,
    # but at 3x the cost: a trade-off
    assert (r1.family_size, r1.p_holm, r1.level_holm) == (1, pytest.approx(2 / 64), pytest.approx(0.05))
    assert r1.ci_holm[0] > 0 and r1.verdict == INCONCLUSIVE and "trade-off" in r1.reason
    assert (r3.n_tasks, r3.reason, r3.verdict) == (0, "no matched cells", INCONCLUSIVE)
    assert r3.notes == ["no task and seed in common: nothing to test"]
    # r4:x: right everywhere at the same tokens: worth it
    (r4,) = compare_runs(st, [(Side("r1", "x"), Side("r4", "x"))], StatsSpec(), "tokens")
    assert (r4.cost, r4.verdict, r4.reason) == (SAME, WORTH, "significantly better than A at the same cost")
    # asked for the budget unit across two bases: tokens, and the note is on every pair
    (rb,) = compare_runs(st, [(Side("r1", "x"), Side("r4", "x"))], StatsSpec(), "budget")
    assert rb.unit == "tokens" and rb.notes and rb.notes[0].startswith("cost in tokens")
    # the unit defaults to the spec's match unit
    (rd,) = compare_runs(st, [p1], StatsSpec(match="calls"))
    assert rd.unit == "calls" and rd.cost == SAME and rd.cost_ratio == pytest.approx(1.0)


def test_a_pair_with_nothing_to_test_does_not_stop_the_pairs_after_it(st: Store) -> None:
    lonely, p1 = (Side("r1", "x"), Side("r3", "x")), (Side("r1", "x"), Side("r2", "x"))
    r3, r1 = compare_runs(st, [lonely, p1], StatsSpec(), "tokens")
    # no matched cell: SUMMARY's sum of seeds over no task is NULL, read as 0 cells
    assert (r3.n_tasks, r3.n_cells, r3.family_size) == (0, 0, 1)
    # the pair after it is tested alone (Δ = +1 on 6 tasks: p = 2/64, as above); the exact McNemar method,
    # and B = max(stats.bootstrap 2000, 20·2/0.05 = 800) = 2000 resamples for the two pairs asked
    assert (r1.n_tasks, r1.family_size, r1.p_holm) == (6, 1, pytest.approx(2 / 64))
    assert r1.method == "exact McNemar (clustered by task)" and r1.resamples == 2000
    # Δ = +1 on every task: every sign vector's threshold τ = (S − A)/(n − E) is (6 − E)/(6 − E) = 1, so
    # the interval is [1, 1] at any level
    assert r1.ci == pytest.approx((1.0, 1.0)) and r1.ci_holm == pytest.approx((1.0, 1.0))


def test_tied_p_values_are_ranked_by_label_at_the_asked_alpha(st: Store) -> None:
    """r1:x against r4:x and against r2:x: the same Δ = +1 on t0..t5 (p = 2/64, the same t), so Holm's
    order is the label's: "r1:x|r2:x" before "r1:x|r4:x", whatever order they are asked in. At α = 0.1:
    r2's pair is tested at 0.1/2 = 0.05, r4's at 0.1/1; both Holm p are max(2·2/64, 1·2/64) = 0.0625 < 0.1."""
    r4, r2 = compare_runs(st, [(Side("r1", "x"), Side("r4", "x")), (Side("r1", "x"), Side("r2", "x"))],
                          StatsSpec(alpha=0.1), "tokens")
    assert (r2.level_holm, r4.level_holm) == (pytest.approx(0.05), pytest.approx(0.1))
    assert (r2.p_holm, r4.p_holm) == (pytest.approx(0.0625), pytest.approx(0.0625))
    # significant and the interval [1, 1] above 0: r4 at the same tokens is worth it; r2 at 3x is a trade-off
    assert (r4.verdict, r4.reason) == (WORTH, "significantly better than A at the same cost")
    assert (r2.verdict, r2.reason) == (INCONCLUSIVE, "significantly better than A but costs 3.00\u00d7 as much: "
                                                     "a trade-off")


def _within_run_store(path: Path) -> Store:
    """One run, designs x and y on 16 tasks with 1, 2 or 3 seeds (task i has 1 + i mod 3): more than
    log2(2000) tasks, so the interval is Monte Carlo and depends on the resampling seed."""
    s = Store(path)
    w = StoreWriter(s)
    s.sql("INSERT INTO runs(run_id, suite, status) VALUES ('r', 's', 'finished')")
    for i in range(16):
        for seed in range(1 + i % 3):
            for design, ok in (("x", (i + seed) % 3 == 0), ("y", (7 * i + 2 * seed) % 5 > 1)):
                w.add("results", {"run_id": "r", "design": design, "design_name": design, "source": "src",
                                  "task_id": f"t{i:02d}", "seed": seed, "correct": ok, "gold": str(i), "tokens": 100,
                                  "calls": 1, "status": "ok", "budget_basis": "tokens", "budget_spent": 100.0})
    w.close()
    return s


def test_two_designs_of_one_run_give_the_within_run_test(tmp_path: Path) -> None:
    """The independent method: ``compute_paired``'s between-design row of the same two designs (its
    own frame, seed and lattice). Its row is x − y; B − A with A = x, B = y is its negative. The interval
    is Monte Carlo (16 tasks, 2^16 > 2000 resamples): only the same resampling seed gives the same one;
    the p-value is the exact clustered McNemar on the lattice of 1/6 (tasks of 1, 2 and 3 seeds)."""
    spec = StatsSpec(match="tokens")
    with _within_run_store(tmp_path / "w.duckdb") as s:
        compute_paired(s, "r", spec)
        (row,) = s.df("SELECT * FROM paired_tests WHERE axis = 'all' AND design = 'x' AND against = 'y'")\
            .to_dict("records")
        (got,) = compare_runs(s, [(Side("r", "x"), Side("r", "y"))], spec)
    assert (got.n_tasks, got.n_cells) == (row["n_tasks"], row["n_cells"]) == (16, 31)  # 6·1 + 5·2 + 5·3
    assert got.mean_diff == pytest.approx(-row["mean_diff"], abs=1e-12)
    assert got.p_value == pytest.approx(row["p_value"], abs=1e-12)
    assert sorted(-x for x in got.ci) == pytest.approx([row["ci_lo"], row["ci_hi"]], abs=1e-8)
    assert sorted(-x for x in got.ci_holm) == pytest.approx([row["ci_lo_holm"], row["ci_hi_holm"]], abs=1e-8)
    assert got.method == row["method"] and got.resamples == row["bootstrap"]


# decide_pair over hand-set results: n = 30 tasks, SD 0.3, "needs n" from the interval given as the test's
# 50% interval. n(δ) = ⌈((z(1 − level/2) + z(0.8))·0.3/|δ|)²⌉, z from the normal quantiles:
# level 0.05: (1.959964 + 0.841621)·0.3 = 0.840476 → δ = 0.2: 17.66 → 18; δ = 0.05: 282.56 → 283;
# level 0.025: (2.241403 + 0.841621)·0.3 = 0.924907 → 21.39 → 22 and 342.18 → 343;
# δ = 10⁻⁶: > 10⁹ tasks, unbounded.
NEED_18_283 = "needs n \u2248 18\u2013283 tasks (has 30)"
NONE_SHOWN = "no difference shown at n = 30"
ABOVE, BELOW, AROUND = (0.05, 0.2), (-0.2, -0.05), (-0.1, 0.1)


def _decide(cost: str, p: float, ci: tuple[float, float], need: tuple[float, float] | None = None,
            ratio: float | None = 1.0, power: float = 0.8, **kw) -> tuple[str, str]:
    r = PairResult(Side("r1", "x"), Side("r2", "x"), "tokens", n_tasks=kw.pop("n_tasks", 30), sd=0.3, p_holm=p,
                   ci_holm=ci, cost=cost, cost_ratio=ratio, **kw)
    return decide_pair(r, 0.05, power, need or ci)


@pytest.mark.parametrize("cost,ratio,p,ci,expected", [
    (SAME, 1.0, 0.01, ABOVE, (WORTH, "significantly better than A at the same cost")),
    (SAME, 1.0, 0.01, BELOW, (NOT_WORTH, "significantly worse than A at the same cost")),
    (SAME, 1.0, 0.5, AROUND, (INCONCLUSIVE, NONE_SHOWN)),
    (CHEAPER, 0.5, 0.01, ABOVE, (WORTH, "cheaper than A (0.50\u00d7) and significantly better")),
    (CHEAPER, 0.5, 0.01, BELOW, (INCONCLUSIVE, "cheaper than A (0.50\u00d7) but significantly less accurate: "
                                               "a trade-off")),
    (CHEAPER, 0.5, 0.5, AROUND, (INCONCLUSIVE, NONE_SHOWN)),
    (COSTLIER, 2.0, 0.01, ABOVE, (INCONCLUSIVE, "significantly better than A but costs 2.00\u00d7 as much: "
                                                "a trade-off")),
    (COSTLIER, 2.0, 0.01, BELOW, (NOT_WORTH, "significantly worse than A and costs 2.00\u00d7 as much")),
    (COSTLIER, 2.0, 0.5, AROUND, (NOT_SHOWN, f"costs 2.00\u00d7 as much as A, no gain shown; {NONE_SHOWN}")),
    (COSTLIER, None, 0.5, AROUND, (NOT_SHOWN, f"costs n/a as much as A, no gain shown; {NONE_SHOWN}")),
    # not significant, the interval off 0 (p and interval at different levels): the needs-n words
    (SAME, 1.0, 0.5, ABOVE, (INCONCLUSIVE, NEED_18_283)),
    (SAME, 1.0, 0.5, BELOW, (INCONCLUSIVE, NEED_18_283)),
    (CHEAPER, 0.5, 0.5, ABOVE, (INCONCLUSIVE, NEED_18_283)),
    (COSTLIER, 2.0, 0.5, BELOW, (NOT_SHOWN, f"costs 2.00\u00d7 as much as A, no gain shown; {NEED_18_283}")),
    # at the edges: p equal to α is not significant; an interval ending at 0 does not exclude it
    (SAME, 1.0, 0.05, ABOVE, (INCONCLUSIVE, NEED_18_283)),
    (SAME, 1.0, 0.05, BELOW, (INCONCLUSIVE, NEED_18_283)),
    (SAME, 1.0, 0.01, (0.0, 0.2), (INCONCLUSIVE, NONE_SHOWN)),
    (SAME, 1.0, 0.01, (-0.2, 0.0), (INCONCLUSIVE, NONE_SHOWN)),
    (SAME, 1.0, 0.01, AROUND, (INCONCLUSIVE, NONE_SHOWN)),
])
def test_each_verdict_and_its_whole_reason(cost, ratio, p, ci, expected) -> None:
    assert _decide(cost, p, ci, ratio=ratio) == expected


def test_the_needed_n_reads_the_holm_level_and_the_task_count() -> None:
    # at the Holm level 0.025, not α: 22–343
    assert _decide(SAME, 0.5, ABOVE, level_holm=0.025)[1] == "needs n \u2248 22\u2013343 tasks (has 30)"
    # at power 0.9: z(0.9) = 1.281552, (1.959964 + 1.281552)·0.3 = 0.972455 → 23.64 → 24 and 378.27 → 379
    assert _decide(SAME, 0.5, ABOVE, power=0.9)[1] == "needs n \u2248 24\u2013379 tasks (has 30)"
    # the nearer end too close to 0 for any suite: unbounded above
    assert _decide(SAME, 0.5, (1e-6, 0.2))[1] == "needs n \u2265 18 tasks (has 30)"
    # one task claims no n (its SD says nothing); two tasks do
    assert _decide(SAME, 0.5, ABOVE, n_tasks=1)[1] == "no difference shown at n = 1"
    assert _decide(SAME, 0.5, ABOVE, n_tasks=2)[1] == "needs n \u2248 18\u2013283 tasks (has 2)"
