"""The grid's discordant filters on a hand-built store, where the rules' edges decide: a design's
k_match halfway between two stored k (ties go to the smaller k) and a cell whose CoT-SC majority
is an exact tie (0.5: neither right nor wrong). Expected cells worked out by hand below."""

from __future__ import annotations

from pathlib import Path

from masbench.store import ResultRow, Store, StoreWriter
from masbench.view.grid import grid_page, matched_k

RUN = "hand-run"
# maj@k accuracy of each cell's pool, at k = 1, 2, 3
CURVE = {"t0": (0.6, 0.5, 0.9), "t1": (0.6, 0.8, 0.1), "t2": (0.4, 0.2, 0.9), "t3": (0.4, 0.8, 0.1),
         "t4": (0.6, 0.5, 0.1)}
CORRECT = {"t0": False, "t1": False, "t2": True, "t3": True, "t4": True}


def _store(path: Path) -> Store:
    st = Store(path)
    st.sql("INSERT INTO runs(run_id, suite, status) VALUES (?, 'hand', 'finished')", [RUN])
    w = StoreWriter(st)
    for t, accs in CURVE.items():
        w.put(ResultRow(run_id=RUN, design="d", task_id=t, seed=0, correct=CORRECT[t], status="ok", answer="x",
                        tokens=10, calls=1, ts=1.0))
        for k, a in enumerate(accs, start=1):
            w.add("cot_sc_task_curve", {"run_id": RUN, "task_id": t, "seed": 0, "k": k, "accuracy": a})
    w.add("paired_tests", {"run_id": RUN, "axis": "all", "design": "d", "against": "curve", "unit": "tokens",
                           "k_match": 2.5, "is_verdict": True})
    w.close()
    return st


def _tasks(st: Store, filter: str) -> set[str]:
    return {r.task for r in grid_page(st, RUN, filter, "d", 1).rows}


def test_k_match_halfway_rounds_down_and_a_tied_majority_is_neither(tmp_path: Path) -> None:
    st = _store(tmp_path / "s.duckdb")
    try:
        assert matched_k(st, RUN) == [("d", 2.5, 2)]  # 2.5 is as near 2 as 3: the smaller k
        # at k = 2: t0 wrong and t4 right with a tied majority (0.5: neither listed), t1 wrong where SC
        # is right (0.8), t2 right where SC is wrong (0.2), t3 right where SC is right (0.8)
        assert _tasks(st, "wrong-sc-right") == {"t1"}
        assert _tasks(st, "right-sc-wrong") == {"t2"}
        assert _tasks(st, "wrong") == {"t0", "t1"} and _tasks(st, "all") == set(CURVE)
    finally:
        st.close()
