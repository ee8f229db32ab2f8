"""The routing-outcome views and ``fill_outcomes`` (``store/outcomes.py``) over hand-built rows,
every expectation worked by hand from the rows below.

``RESULTS``: in run ``r``, design ``A`` ran t1 (source ``arith``, no axis) on seeds 0 and 1 (seed 2
failed: it must not count, and it is t1's only simulated one), t2 (``depth`` at level 3) on seeds 0
and 1 (one simulated, one with ``simulated`` NULL) and t3 (level 0 of ``width``; its only cell
failed, so no row). Design ``B`` ran t1 in the same run and design ``A`` ran t1 again in run
``q``: each its own row. A design-less, seed-less cell (design and seed NULL) ran t4 (``logic``
at level 2 of ``width``).
"""

from __future__ import annotations

import pytest

from masbench.store.db import Store
from masbench.store.outcomes import fill_outcomes


def _res(run, design, task, seed, correct, usd, tokens, wall, calls, *, status="ok", simulated=None,
         source="arith", axis=None, level=None) -> dict:
    return dict(run_id=run, design=design, task_id=task, seed=seed, source=source, axis=axis, axis_value=level,
                correct=correct, cost_usd=usd, tokens=tokens, wall_s=wall, calls=calls, status=status,
                simulated=simulated)


RESULTS = [
    # r/A/t1: seeds 0, 1 count (seed 1 degraded still counts); seed 2 failed, the only simulated one
    _res("r", "A", "t1", 0, True, 0.10, 100, 1.0, 1),
    _res("r", "A", "t1", 1, False, 0.30, 300, 3.0, 4, status="degraded", simulated=False),
    _res("r", "A", "t1", 2, False, 9.00, 9000, 90.0, 90, status="failed", simulated=True),
    # r/A/t2: level 3 of depth, one seed simulated, the other NULL
    _res("r", "A", "t2", 0, True, 0.20, 40, 2.0, 2, simulated=True, source="depth", axis="depth",
         level=3),
    _res("r", "A", "t2", 1, True, 0.60, 80, 6.0, 6, source="depth", axis="depth", level=3),
    # r/A/t3: its only cell failed
    _res("r", "A", "t3", 0, True, 1.00, 10, 1.0, 1, status="failed", source="width", axis="width", level=0),
    # the same task id under another design and another run
    _res("r", "B", "t1", 0, False, 2.00, 500, 5.0, 5, status="budget_exhausted"),
    _res("q", "A", "t1", 0, True, 0.50, 700, 7.0, 7, simulated=False),
    # a cell without design and seed
    _res("r", None, "t4", None, True, 0.05, 20, 0.5, 1, source="logic", axis="width", level=2),
]

COLS = ("run_id", "design", "task_id", "skill", "source", "axis", "axis_value", "correct", "cost_usd", "tokens",
        "latency_s", "calls", "seeds", "simulated")


def test_design_task_outcomes_means_each_cells_seeds_without_failed_cells(view_db) -> None:
    con = view_db.make("design_task_outcomes")
    view_db.insert(con, "results", *RESULTS)
    got = {(r["run_id"], r["design"], r["task_id"]): tuple(r[c] for c in COLS)
           for r in view_db.rows(con, "SELECT * FROM design_task_outcomes")}
    ap = pytest.approx
    assert got == {
        # seeds 0, 1: correct (1 + 0) / 2, USD (0.1 + 0.3) / 2, tokens (100 + 300) / 2, wall (1 + 3) / 2,
        # calls (1 + 4) / 2; simulated NULL and false -> false (the failed seed's true is left out)
        ("r", "A", "t1"): ("r", "A", "t1", "arith", "arith", None, None, 0.5, ap(0.2), 200.0, 2.0, 2.5, 2, False),
        # both correct; USD (0.2 + 0.6) / 2, tokens (40 + 80) / 2, wall (2 + 6) / 2, calls (2 + 6) / 2;
        # simulated true or NULL -> true
        ("r", "A", "t2"): ("r", "A", "t2", "depth.L3", "depth", "depth", 3, 1.0, ap(0.4), 60.0, 4.0, 4.0, 2, True),
        ("r", "B", "t1"): ("r", "B", "t1", "arith", "arith", None, None, 0.0, ap(2.0), 500.0, 5.0, 5.0, 1, False),
        ("q", "A", "t1"): ("q", "A", "t1", "arith", "arith", None, None, 1.0, ap(0.5), 700.0, 7.0, 7.0, 1, False),
        ("r", None, "t4"): ("r", None, "t4", "logic.L2", "logic", "width", 2, 1.0, ap(0.05), 20.0, 0.5, 1.0, 1, False),
    }


def test_design_task_outcomes_labels_level_zero_and_keeps_a_cell_whose_other_seed_failed(view_db) -> None:
    con = view_db.make("design_task_outcomes")
    view_db.insert(con, "results",
                   _res("z", "A", "t3", 0, False, 0.1, 10, 1.0, 1, source="width", axis="width", level=0),
                   _res("z", "A", "t3", 1, True, 0.3, 30, 3.0, 3, status="failed", simulated=True,
                        source="width", axis="width", level=0))
    assert view_db.rows(con, "SELECT skill, correct, seeds, simulated FROM design_task_outcomes") == [
        dict(skill="width.L0", correct=0.0, seeds=1, simulated=False)]


# routing_decisions over RESULTS: (decision, run, design, task, seed, handbook, node, chosen, outcome)
DECISIONS = [
    # r/A, hb1, n1, small on arith: seeds 0 and 1 scored (true, false), seed 2 (the failed cell) not yet
    ("d1", "r", "A", "t1", 0, "hb1", "n1", "small", True),
    ("d2", "r", "A", "t1", 1, "hb1", "n1", "small", False),
    ("d3", "r", "A", "t1", 2, "hb1", "n1", "small", None),
    # big on depth.L3: two scored, both true
    ("d4", "r", "A", "t2", 0, "hb1", "n1", "big", True),
    ("d5", "r", "A", "t2", 1, "hb1", "n1", "big", True),
    # the same cell at another node, and under another handbook: groups of their own
    ("d6", "r", "A", "t1", 0, "hb1", "n2", "small", False),
    ("d7", "r", "A", "t1", 0, "hb2", "n1", "small", True),
    # a decision whose cell has no result row: skill NULL, still counted
    ("d8", "r", "A", "t9", 0, "hb1", "n1", "small", None),
    # design-less, seed-less: matched to the t4 result by IS NOT DISTINCT FROM
    ("d9", "r", None, "t4", None, "hb1", "n1", "big", False),
    # the same task id and seed under design B and in run q
    ("d10", "r", "B", "t1", 0, "hb1", "n1", "small", None),
    ("d11", "q", "A", "t1", 0, "hb1", "n1", "big", True),
]


def _decisions(con, view_db, rows) -> None:
    keys = ("decision_id", "run_id", "design", "task_id", "seed", "handbook", "node", "chosen", "outcome")
    view_db.insert(con, "routing_decisions", *[dict(zip(keys, d)) for d in rows])


def test_routing_choices_counts_choices_and_scored_per_node_chosen_handbook_and_skill(view_db) -> None:
    con = view_db.make("routing_choices")
    view_db.insert(con, "results", *RESULTS)
    _decisions(con, view_db, DECISIONS)
    got = sorted(tuple(r.values()) for r in view_db.rows(
        con, "SELECT run_id, coalesce(design, '-'), handbook, node, chosen, coalesce(skill, '-'), choices, scored, "
             "accuracy FROM routing_choices"))
    assert got == [
        ("q", "A", "hb1", "n1", "big", "arith", 1, 1, 1.0),
        ("r", "-", "hb1", "n1", "big", "logic.L2", 1, 1, 0.0),
        ("r", "A", "hb1", "n1", "big", "depth.L3", 2, 2, 1.0),
        # d8 (no result row: no skill), a group of its own; then d1, d2, d3: 3 choices, 2 scored, 1 of 2 correct
        ("r", "A", "hb1", "n1", "small", "-", 1, 0, None),
        ("r", "A", "hb1", "n1", "small", "arith", 3, 2, 0.5),
        ("r", "A", "hb1", "n2", "small", "arith", 1, 1, 0.0),
        ("r", "A", "hb2", "n1", "small", "arith", 1, 1, 1.0),
        ("r", "B", "hb1", "n1", "small", "arith", 1, 0, None),
    ]


def test_routing_choices_reads_the_skill_of_the_decisions_own_cell(view_db) -> None:
    """One decision per cell, each cell's task of another skill: the skill is read from the result of
    the same run, design, task and seed, not from a neighbour sharing three of the four."""
    con = view_db.make("routing_choices")
    view_db.insert(con, "results",
                   _res("r", "A", "t1", 0, True, 0, 0, 0, 0, source="s1"),
                   _res("r", "A", "t1", 1, True, 0, 0, 0, 0, source="s2"),
                   _res("r", "B", "t1", 0, True, 0, 0, 0, 0, source="s3"),
                   _res("q", "A", "t1", 0, True, 0, 0, 0, 0, source="s4"),
                   _res("r", "A", "t2", 0, True, 0, 0, 0, 0, source="s5"),
                   _res("r", None, "t1", None, True, 0, 0, 0, 0, source="s6"))
    _decisions(con, view_db, [("a", "r", "A", "t1", 0, "h", "n", "m", True),
                              ("b", "r", None, "t1", None, "h", "n", "m", True)])
    got = view_db.rows(con, "SELECT design, skill, choices FROM routing_choices ORDER BY design NULLS LAST")
    assert got == [dict(design="A", skill="s1", choices=1), dict(design=None, skill="s6", choices=1)]


def test_fill_outcomes_sets_each_decisions_outcome_from_its_own_cell(view_db) -> None:
    store = Store()
    try:
        view_db.insert(store.con, "results", *RESULTS)
        # d1..d11 with every outcome unset, except d6 (already false; its cell says true: kept)
        rows = [d[:-1] + ((False,) if d[0] == "d6" else (None,)) for d in DECISIONS]
        _decisions(store.con, view_db, rows)
        # run r: d1 true, d2 false, d3 false (the failed seed's row is scored false), d4 and d5 true,
        # d7 true, d9 true (NULL design and seed), d10 false (B's row); d8 has no result; d6 was set
        assert fill_outcomes(store, "r") == 8
        out = dict(store.sql("SELECT decision_id, outcome FROM routing_decisions"))
        assert out == {"d1": True, "d2": False, "d3": False, "d4": True, "d5": True, "d6": False, "d7": True,
                       "d8": None, "d9": True, "d10": False, "d11": None}
        assert fill_outcomes(store, "r") == 0
        # every run: only q's d11 is left to fill (true: q/A/t1/0), d8 still has no result
        assert fill_outcomes(store) == 1
        assert dict(store.sql("SELECT decision_id, outcome FROM routing_decisions"))["d11"] is True
        assert fill_outcomes(store) == 0
    finally:
        store.close()
