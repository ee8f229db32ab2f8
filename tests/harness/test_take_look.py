"""Three looks of a sequential run over hand-built store rows (masbench.harness.sequential_look): each
batch's matched point and every task's difference recomputed by hand from the stored batches.

Plan: tasks t1..t6 in batches of 2, matched on tokens, k_max 4, one seed. The CoT-SC pool spends 100
tokens a sample on every task but t1 (100 and 140) and t2 (80 and 80) — over t1, t2 the mean is
(100 + 140 + 80 + 80)/4 = 100 too. The design spends 300, 200 (batch 0), 100, 100 (batch 1), 1000, 1000
(batch 2).

- Look 1 (batch 0; no earlier batch, so matched on its own tasks): 250 / 100 = 2.5, within.
- Look 2 (batch 1, matched on batch 0): 2.5 again — not on t1..t4 (175 / 100 = 1.75) nor on batch 1.
- Look 3 (batch 2, matched on batches 0 and 1): (300 + 200 + 100 + 100)/4 / 100 = 1.75, within.

Per-cell maj@k of the pool (k = 1, 2, 3) and the design's correctness give the differences
(design − curve at the task's k, interpolated between floor(k) and floor(k) + 1):
  t1 at 2.5: ½·0.5 + ½·1.0 = 0.75, right → +0.25     t2 at 2.5: ½·0.0 + ½·0.5 = 0.25, wrong → −0.25
  t3 at 2.5: 1.0, right → 0.0                         t4 at 2.5: 0.0, right → +1.0
  t5 at 1.75: ¼·0.0 + ¾·1.0 = 0.75, right → +0.25     t6 at 1.75: ¼·1.0 + ¾·0.0 = 0.25, wrong → −0.25"""

from __future__ import annotations

import numpy as np
import pytest

from masbench.harness.sequence import SequencePlan
from masbench.harness.sequential_look import looked, take_look, task_diffs
from masbench.harness.stats.sequential import betting_sequence
from masbench.spec.stats import StatsSpec

CURVE = {"t1": (0.0, 0.5, 1.0), "t2": (0.0, 0.0, 0.5), "t3": (1.0, 1.0, 1.0), "t4": (0.0, 0.0, 0.0),
         "t5": (0.0, 1.0, 0.0), "t6": (1.0, 0.0, 0.0)}
DESIGN = {"t1": (300, True), "t2": (200, False), "t3": (100, True), "t4": (100, True), "t5": (1000, True),
          "t6": (1000, False)}
POOL = {"t1": (100, 140), "t2": (80, 80)}
PLAN = SequencePlan(("t1", "t2", "t3", "t4", "t5", "t6"), 2, "tokens")
HAND = [0.25, -0.25, 0.0, 1.0, 0.25, -0.25]


def _ins(store, table: str, **row) -> None:
    store.con.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))


def _batch(store, j: int) -> None:
    for t in PLAN.batch_tasks(j):
        tokens, right = DESIGN[t]
        _ins(store, "results", run_id="r", design="d", task_id=t, seed=0, tokens=tokens, correct=right, calls=2,
             cost_usd=0.5, budget_spent=float(tokens))
        for i, s in enumerate(POOL.get(t, (100, 100))):
            _ins(store, "pool", run_id="r", task_id=t, seed=0, sample_index=i, tokens=s)
        for k, acc in enumerate(CURVE[t], start=1):
            _ins(store, "cot_sc_task_curve", run_id="r", task_id=t, seed=0, k=k, accuracy=acc)
    # another run and another design on the same tasks: never read
    _ins(store, "results", run_id="other", design="d", task_id=PLAN.batch_tasks(j)[0], seed=0, tokens=9999,
         correct=False, calls=1)
    _ins(store, "results", run_id="r", design="e", task_id=PLAN.batch_tasks(j)[0], seed=0, tokens=9999,
         correct=False, calls=1)


def _rows(store):
    return store.sql("""SELECT look, k_match, position, n_tasks, n_cells, calls, tokens, mean_diff, p_anytime, family_size,
                               decided, max_tasks, batch, unit, method, alpha
                        FROM sequential_looks WHERE run_id = 'r' ORDER BY look""")


def _more(store):
    return store.sql("""SELECT cost_usd, budget_spent, cs_lo, cs_hi, p_holm, level_holm, verdict, reason
                        FROM sequential_looks WHERE run_id = 'r' ORDER BY look""")


def test_three_looks_match_each_batch_on_the_batches_before_it(store):
    spec = StatsSpec()
    results = []
    for j in range(3):
        _batch(store, j)
        state = looked(store, "r")
        assert state.looks == j
        (res,) = take_look(store, "r", PLAN, ["d"], 4, spec, state)
        assert res.n == 2 * (j + 1)
        results.append(res)
    # cost and budget of the design so far: $0.5 a cell; its budget_spent is its tokens (300 + 200, + 200, + 2000);
    # the interval is the sequence's own on the hand differences; one design: Holm's p is its p, its level α
    for look, (m, res) in enumerate(zip(_more(store), results), start=1):
        diffs = np.array(HAND[:2 * look])
        lo, hi = betting_sequence(diffs)[0].interval(0.95)
        p = betting_sequence(diffs)[0].p_value()
        assert m[:2] == (0.5 * 2 * look, [500.0, 700.0, 2700.0][look - 1])
        assert m[2:6] == (pytest.approx(lo), pytest.approx(hi), pytest.approx(p), pytest.approx(0.05))
        assert m[6:] == (res.verdict, res.reason) and res.reason
    rows = _rows(store)
    assert [(r[0], r[1], r[2]) for r in rows] == [(1, 2.5, "within"), (2, 2.5, "within"), (3, 1.75, "within")]
    # n tasks, cells, calls (2 each) and tokens of the design so far: 300 + 200, + 200, + 2000
    assert [(r[3], r[4], r[5], r[6]) for r in rows] == [(2, 2, 4, 500), (4, 4, 8, 700), (6, 6, 12, 2700)]
    for look, r in enumerate(rows, start=1):
        diffs = np.array(HAND[:2 * look])
        assert r[7] == pytest.approx(diffs.mean())
        assert r[8] == pytest.approx(betting_sequence(diffs)[0].p_value())
        assert r[9:] == (1, False, 6, 2, "tokens", "betting CS (hedged, aGRAPA)", 0.05)
    state = looked(store, "r")
    assert state.looks == 3 and state.k_match == {"d": [2.5, 2.5, 1.75]} and state.frozen == {}


def test_the_differences_by_hand(store):
    for j in range(3):
        _batch(store, j)
    got = task_diffs(store, "r", "d", PLAN.order, [2.5, 2.5, 2.5, 2.5, 1.75, 1.75])
    np.testing.assert_allclose(got, HAND)
    # in the order asked, whatever the storage order; an integer k reads that k's value
    np.testing.assert_allclose(task_diffs(store, "r", "d", ("t6", "t1"), [1.0, 3.0]), [0 - 1.0, 1 - 1.0])
    # past the last stored k the curve stays at its last value
    np.testing.assert_allclose(task_diffs(store, "r", "d", ("t2",), [3.5]), [0 - 0.5])


def test_a_look_that_finds_fewer_earlier_batches_than_its_number_refuses(store):
    _batch(store, 0)
    _batch(store, 1)
    state = looked(store, "r")
    state.looks = 1  # the store says one look, but the design's history is missing
    with pytest.raises(RuntimeError, match=r"sequential look 2 of r: design 'd' has 0 earlier looks"):
        take_look(store, "r", PLAN, ["d"], 4, StatsSpec(), state)


def test_looked_reads_decisions_and_k_per_design(store):
    base = dict(run_id="r", unit="tokens", n_tasks=4, mean_diff=0.3, cs_lo=0.1, cs_hi=0.5, p_anytime=0.01,
                family_size=2, p_holm=0.02, level_holm=0.025, verdict="worth it", reason="why")
    _ins(store, "sequential_looks", look=1, design="a", k_match=2.0, position="within", decided=False, **base)
    _ins(store, "sequential_looks", look=2, design="a", k_match=3.0, position="below", decided=True, **base)
    _ins(store, "sequential_looks", look=3, design="a", k_match=None, position="below", decided=True,
         **{**base, "n_tasks": 4})
    _ins(store, "sequential_looks", look=1, design="b", k_match=1.5, position="beyond", decided=False, **base)
    _ins(store, "sequential_looks", look=9, design="a", k_match=9.0, position="x", decided=True,
         **{**base, "run_id": "other"})
    state = looked(store, "r")
    assert state.looks == 3 and state.k_match == {"a": [2.0, 3.0], "b": [1.5]}
    assert set(state.frozen) == {"a"} and state.positions == {"a": "below"}
    f = state.frozen["a"]
    assert (f.design, f.n, f.mean, f.cs_lo, f.cs_hi, f.p_anytime, f.family_size, f.p_holm, f.level_holm, f.decided,
            f.verdict, f.reason) == ("a", 4, 0.3, 0.1, 0.5, 0.01, 2, 0.02, 0.025, True, "worth it", "why")
    assert looked(store, "new").looks == 0


def test_a_decided_design_keeps_its_numbers_and_gets_no_match(store):
    """Design f was decided at look 1 (n = 2, below the curve): look 2 tests d alone against the
    family of two, and writes f's row again from its decision: no k, its position, its numbers."""
    base = dict(run_id="r", unit="tokens", cs_lo=0.1, cs_hi=0.5, p_holm=0.002, level_holm=0.025, reason="why")
    _ins(store, "sequential_looks", look=1, design="f", k_match=0.5, position="below", decided=True, n_tasks=2,
         mean_diff=0.5, p_anytime=0.001, family_size=2, verdict="worth it", **base)
    _ins(store, "sequential_looks", look=1, design="d", k_match=2.5, position="within", decided=False, n_tasks=2,
         mean_diff=0.0, p_anytime=1.0, family_size=2, verdict="inconclusive", **base)
    _batch(store, 0)
    _batch(store, 1)
    _ins(store, "results", run_id="r", design="f", task_id="t1", seed=0, tokens=10, correct=True, calls=1)
    state = looked(store, "r")
    out = {r.design: r for r in take_look(store, "r", PLAN, ["d", "f"], 4, StatsSpec(), state)}
    f = out["f"]
    assert (f.n, f.mean, f.p_anytime, f.decided, f.verdict, f.family_size) == (2, 0.5, 0.001, True, "worth it", 2)
    assert out["d"].n == 4 and out["d"].mean == pytest.approx(np.mean(HAND[:4]))
    # d's Holm: its p against f's frozen 0.001 (f ranks first), so d is tested at α/1 after f at α/2
    assert out["d"].level_holm == pytest.approx(0.05) and f.level_holm == 0.025
    row = store.sql("""SELECT k_match, position, n_tasks, n_cells, decided, verdict, family_size FROM sequential_looks
                       WHERE run_id = 'r' AND look = 2 AND design = 'f'""")
    assert row == [(None, "below", 2, 1, True, "worth it", 2)]
    assert store.sql("SELECT k_match FROM sequential_looks WHERE look = 2 AND design = 'd'") == [(2.5,)]


def test_decided_designs_below_and_beyond_the_curve(store):
    """32 tasks in one batch, the pool at 100 tokens a sample, the curve at 0.5 for every k. 'cheap'
    spends 50 tokens (k = 0.5: below, compared at k = 1) and is always right (+0.5 a task); 'dear'
    spends 600 (k = 6: beyond, compared at k_max = 4) and is always wrong (−0.5). Both are decided;
    the position and k_max reach the verdict's reason."""
    plan = SequencePlan(tuple(f"s{i:02d}" for i in range(32)), 32, "tokens")
    for t in plan.order:
        curve = 0.5
        for k in range(1, 5):
            _ins(store, "cot_sc_task_curve", run_id="r", task_id=t, seed=0, k=k, accuracy=curve)
        _ins(store, "pool", run_id="r", task_id=t, seed=0, sample_index=0, tokens=100)
        _ins(store, "results", run_id="r", design="cheap", task_id=t, seed=0, tokens=50, correct=True, calls=1)
        _ins(store, "results", run_id="r", design="dear", task_id=t, seed=0, tokens=600, correct=False, calls=3)
    out = {r.design: r for r in take_look(store, "r", plan, ["cheap", "dear"], 4, StatsSpec(), looked(store, "r"))}
    assert out["cheap"].decided and out["cheap"].verdict == "worth it"
    assert out["cheap"].reason == "cheaper than one CoT sample and significantly better"
    assert out["dear"].decided and out["dear"].verdict == "not worth it"
    assert out["dear"].reason == "significantly worse than CoT-SC@4, which is cheaper"
    rows = store.sql("SELECT design, k_match, position FROM sequential_looks ORDER BY design")
    assert rows == [("cheap", 1.0, "below"), ("dear", 4.0, "beyond")]


def test_a_decided_design_first_in_the_family_does_not_stop_the_others(store):
    base = dict(run_id="r", unit="tokens", cs_lo=0.1, cs_hi=0.5, p_holm=0.002, level_holm=0.025, reason="why")
    _ins(store, "sequential_looks", look=1, design="f", k_match=0.5, position="below", decided=True, n_tasks=2,
         mean_diff=0.5, p_anytime=0.001, family_size=2, verdict="worth it", **base)
    _ins(store, "sequential_looks", look=1, design="d", k_match=2.5, position="within", decided=False, n_tasks=2,
         mean_diff=0.0, p_anytime=1.0, family_size=2, verdict="inconclusive", **base)
    _batch(store, 0)
    _batch(store, 1)
    out = take_look(store, "r", PLAN, ["f", "d"], 4, StatsSpec(), looked(store, "r"))
    assert [r.design for r in out] == ["f", "d"] and out[1].n == 4


def test_the_suites_bet_and_the_time_of_the_look_are_recorded(store):
    """12 tasks, the curve at 0.5, the design always right (+0.5 a task): PrPl's p differs from aGRAPA's."""
    import time as _time
    plan = SequencePlan(tuple(f"s{i:02d}" for i in range(12)), 12, "tokens")
    for t in plan.order:
        for k in range(1, 5):
            _ins(store, "cot_sc_task_curve", run_id="r", task_id=t, seed=0, k=k, accuracy=0.5)
        _ins(store, "pool", run_id="r", task_id=t, seed=0, sample_index=0, tokens=100)
        _ins(store, "results", run_id="r", design="d", task_id=t, seed=0, tokens=200, correct=True, calls=1)
    t0 = _time.time()
    (r,) = take_look(store, "r", plan, ["d"], 4, StatsSpec(bet="prpl"), looked(store, "r"))
    t1 = _time.time()
    prpl = betting_sequence(np.full(12, 0.5), bet="prpl")[0].p_value()
    assert r.p_anytime == pytest.approx(prpl) and prpl != pytest.approx(betting_sequence(np.full(12, 0.5))[0].p_value())
    (method, ts), = store.sql("SELECT method, ts FROM sequential_looks WHERE run_id = 'r'")
    assert method == "betting CS (hedged, PrPl)" and t0 <= ts <= t1
