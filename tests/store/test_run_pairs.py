"""store/run_pairs.py on hand-built rows: cells pair by task and seed across two store files (the
second attached read-only), each kind of mismatch is counted, per-task differences average a
task's seeds, and the cost ratio and "same cost" follow the marginal-utility table's rule."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from masbench.store import Store, StoreWriter
from masbench.store.run_pairs import (GOLD_DIFFERS, ONLY_A, ONLY_B, Side, attached, pair_summary, pair_tasks,
                                      run_designs, run_exists, unmatched)


def _store(path: Path, run: str, design: str, cells: dict[tuple[str, int], tuple[bool, int, str]]) -> None:
    """cells: (task, seed) → (correct, tokens, gold)."""
    with Store(path) as st:
        st.sql("INSERT INTO runs(run_id, suite, status) VALUES (?, 's', 'finished')", [run])
        w = StoreWriter(st)
        for (t, s), (ok, tok, gold) in cells.items():
            w.add("results", {"run_id": run, "design": design, "task_id": t, "seed": s, "correct": ok, "gold": gold,
                              "tokens": tok, "calls": 1, "cost_usd": 0.0, "status": "ok", "budget_basis": "tokens",
                              "budget_spent": float(tok)})
        w.flush()


A_CELLS = {("t1", 0): (True, 100, "1"), ("t1", 1): (False, 100, "1"), ("t2", 0): (False, 100, "2"),
           ("t3", 0): (True, 100, "3"), ("t4", 0): (True, 100, "4")}
B_CELLS = {("t1", 0): (True, 300, "1"), ("t1", 1): (True, 300, "1"), ("t2", 0): (True, 300, "2"),
           ("t3", 0): (True, 300, "other"), ("t5", 0): (True, 300, "5")}


@pytest.fixture
def two_files(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    _store(a, "r1", "x", A_CELLS)
    _store(b, "r2", "y", B_CELLS)
    return a, b


def test_cells_pair_across_two_files_and_mismatches_are_counted(two_files):
    a_path, b_path = two_files
    with Store(a_path) as st, attached(st, b_path) as cat:
        a, b = Side("r1", "x"), Side("r2", "y", cat)
        assert run_exists(st, "r2", cat) and not run_exists(st, "r2") and run_designs(st, "r2", cat) == ["y"]
        # t1: seeds 0 (1 vs 1) and 1 (0 vs 1) → mean Δ ½; t2: 0 vs 1 → 1; t3 another gold; t4/t5 one side only
        assert pair_tasks(st, a, b) == [("t1", 2, 0.5), ("t2", 1, 1.0)]
        left = {u.kind: (u.cells, u.tasks, u.first_tasks) for u in unmatched(st, a, b)}
        assert left == {ONLY_A: (1, 1, ["t4"]), ONLY_B: (1, 1, ["t5"]), GOLD_DIFFERS: (1, 1, ["t3"])}
        s = pair_summary(st, a, b, "tokens")
        assert (s["n_tasks"], s["n_cells"]) == (2, 3)
        assert s["acc_a"] == pytest.approx(1 / 3) and s["acc_b"] == pytest.approx(1.0)
        assert s["cost_ratio"] == pytest.approx(3.0) and s["same_cost"] is False
    # detached again: the second file is not held
    duckdb.connect(str(b_path)).close()


def test_the_same_cost_rule_is_the_tables(tmp_path):
    path = tmp_path / "s.duckdb"
    cells = {(f"t{i}", 0): (True, 100, str(i)) for i in range(6)}
    _store(path, "r1", "x", cells)
    # B costs 5% more on every task: under the 10% floor → same cost
    _store(path, "r2", "x", {k: (ok, 105, g) for k, (ok, _, g) in cells.items()})
    # B costs 100 more on half the tasks and 100 less on the others: the interval holds 0 → same cost
    _store(path, "r3", "x", {k: (ok, 200 if i % 2 else 0, g) for i, (k, (ok, _, g)) in enumerate(cells.items())})
    # B costs 50% more on every task: costlier
    _store(path, "r4", "x", {k: (ok, 150, g) for k, (ok, _, g) in cells.items()})
    with Store(path) as st:
        same = {r: pair_summary(st, Side("r1", "x"), Side(r, "x"), "budget")["same_cost"] for r in ("r2", "r3", "r4")}
    assert same == {"r2": True, "r3": True, "r4": False}


def test_an_unknown_unit_is_refused(two_files):
    with Store(two_files[0]) as st, pytest.raises(ValueError, match="unknown cost unit"):
        pair_summary(st, Side("r1", "x"), Side("r1", "x"), "joules")
