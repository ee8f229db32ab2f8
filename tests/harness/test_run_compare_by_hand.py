"""Runs against runs over hand-built stores, through the public functions of
masbench.harness.run_compare (no simulated run: milliseconds). The expected numbers are worked by
hand below: the exact sign-flip p of per-task differences that are all ±1 or 0 is a count of sign
patterns over 2^n; Holm multiplies the smallest of m p-values by m; the cost position follows
the tokens written."""

from __future__ import annotations

from pathlib import Path

import pytest

from masbench.harness.run_compare import CHEAPER, COSTLIER, SAME, Ref, compare_runs, cost_unit, resolve
from masbench.harness.stats.decide import INCONCLUSIVE, NOT_SHOWN, WORTH
from masbench.spec import StatsSpec
from masbench.store import Store, StoreWriter
from masbench.store.run_pairs import ONLY_A, Side

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
    with pytest.raises(ValueError, match="give RUN or RUN:DESIGN"):
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
    with pytest.raises(ValueError, match=r"^2 --a and 3 --b"):
        resolve(st, [Ref("r1", "x"), Ref("r1", "y")], [Ref("r2", "x")] * 3)
    with pytest.raises(ValueError, match="give both"):
        resolve(st, [], [Ref("r2")])
    with pytest.raises(ValueError, match="give both"):
        resolve(st, [Ref("r1")], [])
    with pytest.raises(ValueError, match=r"^A: no run 'nope' in its store$"):
        resolve(st, [Ref("nope")], [Ref("r2")])
    with pytest.raises(ValueError, match=r"^B: no run 'nope' in its store$"):
        resolve(st, [Ref("r1")], [Ref("nope")])
    with pytest.raises(ValueError, match=r"^A: run 'r1' has no design 'q'"):
        resolve(st, [Ref("r1", "q")], [Ref("r2", "x")])
    # r5 has only design w: nothing in common with r2 (x, z)
    st.sql("INSERT INTO runs(run_id, suite, status) VALUES ('r5', 's', 'finished')")
    st.sql("INSERT INTO results(run_id, design, task_id, seed, status) VALUES ('r5', 'w', 't0', 0, 'ok')")
    with pytest.raises(ValueError, match=r"^runs 'r2' and 'r5' have no design in common \(A: x, z; B: w\)"):
        resolve(st, [Ref("r2")], [Ref("r5")])


def test_the_budget_unit_needs_one_basis_on_both_sides(st: Store) -> None:
    p12 = [(Side("r1", "x"), Side("r2", "x"))]
    assert cost_unit(st, p12, "tokens") == ("tokens", [])
    assert cost_unit(st, p12, "budget") == ("budget", [])
    # r4 is on the usd basis: tokens, with a note naming both bases
    p14 = [(Side("r1", "x"), Side("r4", "x"))]
    assert cost_unit(st, p12 + p14, "budget") == (
        "tokens", ["cost in tokens: the budget basis of r1:x (tokens) and of r4:x (usd) are not one basis"])
    # a side with no recorded basis
    st.sql("UPDATE results SET budget_basis = NULL WHERE run_id = 'r2'")
    assert cost_unit(st, p12, "budget")[1] == [
        "cost in tokens: the budget basis of r1:x (tokens) and of r2:x (none) are not one basis"]


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
