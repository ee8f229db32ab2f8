"""store/run_pairs.py on hand-built rows: cells pair by task and seed across two store files (the
second attached read-only), each kind of mismatch is counted, per-task differences average a
task's seeds, and the cost ratio and "same cost" follow the marginal-utility table's rule."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from masbench.store import Store, StoreWriter
from masbench.store.run_pairs import (GOLD_DIFFERS, MATCHED, ONLY_A, ONLY_B, Side, attached, bases, cells_sql,
                                      pair_summary, pair_tasks, run_config_json, run_designs, run_exists, run_header,
                                      unmatched)


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
        # the unit defaults to tokens: 300 against 100 (in calls, 1 against 1, the ratio would be 1)
        assert pair_summary(st, a, b)["cost_ratio"] == pytest.approx(3.0)
        assert pair_summary(st, a, b, "calls")["cost_ratio"] == pytest.approx(1.0)
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


def test_the_unknown_unit_message_names_every_unit(two_files):
    with Store(two_files[0]) as st, pytest.raises(
            ValueError, match=r"^unknown cost unit 'joules' \(units: tokens, calls, usd, budget\)$"):
        pair_tasks(st, Side("r1", "x"), Side("r1", "x"), "joules")


def test_attach_names_a_catalog_and_quotes_the_path(tmp_path):
    """The default catalog name is runs_b; a path with a quote in it attaches (the quote doubled in
    the SQL literal); an alias that is not an identifier is refused before any SQL."""
    odd = tmp_path / "o'brien"
    odd.mkdir()
    _store(odd / "b.duckdb", "r2", "y", B_CELLS)
    _store(tmp_path / "a.duckdb", "r1", "x", A_CELLS)
    with Store(tmp_path / "a.duckdb") as st:
        with attached(st, odd / "b.duckdb") as cat:
            assert cat == "runs_b" and run_designs(st, "r2", cat) == ["y"]
        with pytest.raises(ValueError, match=r"^not a catalog name: 'b; DROP TABLE runs'$"), \
                attached(st, odd / "b.duckdb", "b; DROP TABLE runs"):
            pass
        assert run_exists(st, "r1")


def test_runs_designs_bases_header_and_config_in_either_file(tmp_path):
    """Read from the store's own file and through the attached catalog: the designs sorted, the
    distinct non-null budget bases of one design, the header with "simulated" set by the run or by
    any one of its results, the stored config; None / empty for a run that is not there."""
    a_path, b_path = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    for path, run in ((a_path, "r1"), (b_path, "r2")):
        with Store(path) as st:
            st.sql("INSERT INTO runs(run_id, suite, status, created_at, finished_at, models, config, simulated) "
                   "VALUES (?, 'swap', 'finished', TIMESTAMP '2020-01-02 03:04:05', TIMESTAMP '2020-01-02 04:00:00', "
                   "'{\"default\": \"sim/p30\"}', '{\"seed\": 7}', NULL)", [run])
            # a run flagged simulated by the run row, none of its results flagged
            st.sql("INSERT INTO runs(run_id, suite, status, simulated) VALUES ('sim', 'swap', 'running', true)")
            w = StoreWriter(st)
            for t, design, basis, sim in (("t1", "y", "usd", False), ("t2", "y", None, False),
                                          ("t3", "y", "tokens", True), ("t1", "b", "tokens", False)):
                w.add("results", {"run_id": run, "design": design, "task_id": t, "seed": 0, "status": "ok",
                                  "budget_basis": basis, "simulated": sim})
            w.flush()
    with Store(a_path) as st, attached(st, b_path) as cat:
        for run, catalog in (("r1", ""), ("r2", cat)):
            assert run_exists(st, run, catalog) and run_designs(st, run, catalog) == ["b", "y"]
            # y's bases: usd, NULL (left out), tokens → sorted, distinct; b's: tokens
            assert bases(st, Side(run, "y", catalog)) == ["tokens", "usd"]
            assert bases(st, Side(run, "b", catalog)) == ["tokens"]
            header = run_header(st, run, catalog)
            assert header is not None
            suite, status, created, finished, models, simulated = header
            assert (suite, status, str(created), str(finished)) == ("swap", "finished", "2020-01-02 03:04:05",
                                                                     "2020-01-02 04:00:00")
            assert json.loads(models) == {"default": "sim/p30"} and simulated is True  # t3's result is simulated
            assert json.loads(run_config_json(st, run, catalog)) == {"seed": 7}
            sim = run_header(st, "sim", catalog)
            assert sim is not None and sim[:2] == ("swap", "running") and sim[5] is True
        # r2 is only in the attached file, r1 only in the store's own
        assert not run_exists(st, "r2") and not run_exists(st, "r1", cat)
        assert run_designs(st, "r2") == [] and run_designs(st, "r1", cat) == []
        assert run_header(st, "r2") is None and run_header(st, "r1", cat) is None
        assert run_config_json(st, "r2") is None and run_config_json(st, "r1", cat) is None
        # a run whose row and results both say not simulated
        st.sql("UPDATE results SET simulated = false WHERE run_id = 'r1'")
        st.sql("UPDATE runs SET simulated = false WHERE run_id = 'r1'")
        assert (run_header(st, "r1") or ())[5:] == (False,)
        st.sql("UPDATE runs SET simulated = NULL WHERE run_id = 'r1'")
        assert (run_header(st, "r1") or ())[5:] == (False,)  # NULL on the run, none of its results: not simulated


def test_the_cells_relation_row_by_row(two_files):
    """cells_sql as the viewer's A-vs-B grid reads it (the unit left to its default, tokens): one row
    per (task, seed) of either side, with its kind of match, both 0/1 outcomes, Δ = y_b − y_a and both
    costs, read off A_CELLS and B_CELLS above."""
    a_path, b_path = two_files
    with Store(a_path) as st, attached(st, b_path) as cat:
        a, b = Side("r1", "x"), Side("r2", "y", cat)
        rows = st.sql(f"SELECT task_id, seed, match, y_a, y_b, diff, cost_a, cost_b, gold FROM ({cells_sql(a, b)}) "
                      "ORDER BY task_id, seed", {"run_a": "r1", "design_a": "x", "run_b": "r2", "design_b": "y"})
    assert [tuple(r) for r in rows] == [
        ("t1", 0, MATCHED, 1.0, 1.0, 0.0, 100.0, 300.0, "1"),
        ("t1", 1, MATCHED, 0.0, 1.0, 1.0, 100.0, 300.0, "1"),
        ("t2", 0, MATCHED, 0.0, 1.0, 1.0, 100.0, 300.0, "2"),
        ("t3", 0, GOLD_DIFFERS, 1.0, 1.0, 0.0, 100.0, 300.0, "3"),  # A's gold first
        ("t4", 0, ONLY_A, 1.0, None, None, 100.0, None, "4"),
        ("t5", 0, ONLY_B, None, 1.0, None, None, 300.0, "5"),
    ]
