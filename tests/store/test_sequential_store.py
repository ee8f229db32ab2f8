"""The SQL of a sequential run on hand-built rows: per-task differences at fractional k, the
matching costs, and the ``sequential_decisions`` / ``sequential_run_saving`` views. Every
expected value is worked out by hand from the rows inserted."""

from __future__ import annotations

import pytest

from masbench.store.sequential import DESIGN_COST, POOL_SAMPLE_COST, TASK_DIFFS


def ins(store, table: str, **row) -> None:
    cols = ", ".join(row)
    store.con.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(row))})", list(row.values()))


def _curve(store, task: str, seed: int, accs: list[float]) -> None:
    for k, a in enumerate(accs, start=1):
        ins(store, "cot_sc_task_curve", run_id="r", task_id=task, seed=seed, k=k, accuracy=a)


def test_task_diffs_interpolate_each_cell_at_its_tasks_k_and_average_the_seeds(store):
    _curve(store, "t1", 0, [0.2, 0.4, 0.8])
    _curve(store, "t1", 1, [0.0, 0.5, 0.5])
    _curve(store, "t2", 0, [0.6, 0.7, 0.9])
    ins(store, "results", run_id="r", design="d", task_id="t1", seed=0, correct=True)
    ins(store, "results", run_id="r", design="d", task_id="t1", seed=1, correct=False)
    ins(store, "results", run_id="r", design="d", task_id="t2", seed=0, correct=None)  # NULL counts as wrong
    ins(store, "results", run_id="r", design="other", task_id="t2", seed=0, correct=True)
    rows = store.sql(TASK_DIFFS, {"run": "r", "design": "d", "tasks": ["t2", "t1"], "ks": [3.0, 2.25]})
    # t2 at k = 3: curve 0.9, y 0 → −0.9. t1 at k = 2.25: seed 0: 0.75·0.4 + 0.25·0.8 = 0.5, seed 1:
    # 0.75·0.5 + 0.25·0.5 = 0.5 → curve 0.5; y = (1 + 0)/2 = 0.5 → 0.0. In the order given.
    assert [(r[1], r[2]) for r in rows] == [("t2", 1), ("t1", 2)]
    assert [r[5] for r in rows] == pytest.approx([-0.9, 0.0])
    assert [r[4] for r in rows] == pytest.approx([0.9, 0.5])


def test_matching_costs_per_unit_over_the_given_tasks_only(store):
    for task, tokens, calls, usd, budget in (("t1", 250, 3, 0.02, 200.0), ("t2", 350, 5, 0.04, 300.0),
                                             ("t3", 9999, 99, 9.0, 9999.0)):
        ins(store, "results", run_id="r", design="d", task_id=task, seed=0, tokens=tokens, calls=calls,
            cost_usd=usd, budget_spent=budget)
    for task, tokens, usd, budget in (("t1", 100, 0.01, 80.0), ("t1", 140, 0.01, 120.0), ("t2", 120, 0.02, 100.0),
                                      ("t3", 5000, 5.0, 5000.0)):
        ins(store, "pool", run_id="r", task_id=task, seed=0, sample_index=0, tokens=tokens, cost_usd=usd,
            budget_spent=budget)
    tasks = ["t1", "t2"]
    cost = {u: store.sql(DESIGN_COST, {"run": "r", "design": "d", "unit": u, "tasks": tasks})[0][0]
            for u in ("tokens", "calls", "usd", "budget")}
    per = {u: store.sql(POOL_SAMPLE_COST, {"run": "r", "unit": u, "tasks": tasks})[0][0]
           for u in ("tokens", "calls", "usd", "budget")}
    assert cost == pytest.approx({"tokens": 300.0, "calls": 4.0, "usd": 0.03, "budget": 250.0})
    assert per == pytest.approx({"tokens": 120.0, "calls": 1.0, "usd": 0.04 / 3, "budget": 100.0})


def _look(store, look: int, design: str, **kw) -> None:
    row = dict(run_id="r", look=look, design=design, unit="budget", n_tasks=look * 20, n_cells=look * 20,
               calls=look * 60, tokens=look * 6000, cost_usd=0.0, budget_spent=look * 6000.0, k_match=1.5,
               position="within", mean_diff=0.1, cs_lo=-0.2, cs_hi=0.4, p_anytime=0.5, family_size=3, p_holm=1.0,
               level_holm=0.05 / 3, decided=False, verdict="inconclusive", reason="undecided", max_tasks=100,
               batch=20, method="betting CS (hedged, PrPl)", alpha=0.05, ts=0.0)
    row.update(kw)
    ins(store, "sequential_looks", **row)


def test_sequential_decisions_take_the_first_decided_look_or_the_last(store):
    # a: decided at look 2 (40 tasks, 120 calls), frozen after; b: never decided, ran to the cap (look 5);
    # c: undecided at look 3 of a run that stopped there (60 of 100 tasks drawn)
    for j in range(1, 6):
        _look(store, j, "a", **({} if j < 2 else dict(decided=True, verdict="worth it", n_tasks=40, calls=120)))
        _look(store, j, "b")
    for j in range(1, 4):
        _look(store, j, "c", run_id="r2")
    # d: decided at the last look, at the cap (decided, so not "at the cap undecided"); z: no calls yet
    # (saved_calls has no calls per task to scale: NULL, while saved_tasks is 1 − 40/100); e: no task at all
    for j in range(1, 6):
        _look(store, j, "d", **({} if j < 5 else dict(decided=True, verdict="not worth it")))
    _look(store, 2, "z", calls=0)
    _look(store, 1, "e", n_tasks=0, calls=0)
    # r2's a: decided at look 1 (its own span; r's a is decided at look 2)
    _look(store, 1, "a", run_id="r2", decided=True, verdict="not worth it", n_tasks=20, calls=20)
    got = {(r[0], r[1]): r[2:] for r in store.sql(
        "SELECT run_id, design, look, looks, decided, verdict, n_tasks, calls, calls_at_cap, saved_calls, "
        "saved_tasks, at_cap, tasks_drawn FROM sequential_decisions")}
    # a: 120 calls on 40 tasks = 3 per task; at the cap 300; saved 1 − 120/300 = 0.6 = 1 − 40/100
    assert got[("r", "a")][:4] == (2, 5, True, "worth it")
    assert got[("r", "a")][4:6] == (40, 120)
    assert got[("r", "a")][6:9] == pytest.approx((300.0, 0.6, 0.6))
    assert got[("r", "a")][9:] == (False, 40)
    # b: look 5, 100 tasks, 300 calls: saved nothing, at the cap
    assert got[("r", "b")][:6] == (5, 5, False, "inconclusive", 100, 300)
    assert got[("r", "b")][6:9] == pytest.approx((300.0, 0.0, 0.0))
    assert got[("r", "b")][9:] == (True, 100)
    # c: look 3 of 5: 60 drawn, not at the cap
    assert got[("r2", "c")][9:] == (False, 60)
    assert got[("r", "d")][:3] == (5, 5, True) and got[("r", "d")][9:] == (False, 100)
    assert got[("r", "z")][4:6] == (40, 0)
    assert got[("r", "z")][6] == 0 and got[("r", "z")][7] is None and got[("r", "z")][8] == pytest.approx(0.6)
    assert got[("r", "e")][6:9] == (None, None, 1.0)  # no task: no calls per task to scale
    assert got[("r2", "a")][:6] == (1, 1, True, "not worth it", 20, 20)
    assert got[("r2", "a")][6:9] == pytest.approx((100.0, 0.8, 0.8))
    n = store.sql("SELECT count(*) FROM sequential_decisions")[0][0]
    assert n == len(got) == 7  # one row per (run, design)


def test_sequential_run_saving_scales_each_design_and_the_pool_to_the_cap(store):
    _look(store, 1, "a")  # max_tasks = 100, on every look of the run
    _look(store, 2, "a")
    _look(store, 1, "b")
    for i in range(10):  # design a: 10 tasks, 2 seeds, 3 calls a cell; design b: 40 tasks, 1 call each
        for seed in (0, 1):
            ins(store, "results", run_id="r", design="a", task_id=f"t{i}", seed=seed, calls=3)
    for i in range(40):
        ins(store, "results", run_id="r", design="b", task_id=f"t{i}", seed=0, calls=1)
        for j in range(4):  # the pool: 4 calls per task on 40 tasks
            ins(store, "calls", call_id=f"p{i}-{j}", run_id="r", purpose="pool", task_id=f"t{i}", seed=0)
        # the designs' own calls are in calls too: not the pool's
        ins(store, "calls", call_id=f"b{i}", run_id="r", purpose="design", design="b", task_id=f"t{i}", seed=0)
    ins(store, "results", run_id="fixed", design="a", task_id="t0", seed=0, calls=3)  # a run without looks: absent
    # a sequential run none of whose cells made a call: nothing to scale, saved_calls NULL
    _look(store, 1, "a", run_id="r0")
    ins(store, "results", run_id="r0", design="a", task_id="t0", seed=0, calls=0)
    got = {r[0]: r[1:] for r in store.sql(
        "SELECT run_id, max_tasks, calls, calls_fixed_n, saved_calls FROM sequential_run_saving")}
    assert set(got) == {"r", "r0"}
    (cap, calls, fixed, saved) = got["r"]
    # made: 60 + 40 + 160 = 260; fixed-n at 100 tasks: 600 (6 a task) + 100 + 400 = 1100; saved 1 − 260/1100
    assert (cap, calls) == (100, 260)
    assert fixed == pytest.approx(1100.0) and saved == pytest.approx(1 - 260 / 1100)
    assert got["r0"] == (100, 0, 0.0, None)
