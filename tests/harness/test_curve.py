"""The CoT-SC curve from a hand-built pool: every maj@k worked out by listing the k-subsets (in the
comments), costs as k times the cell's mean sample cost, groups, and the bootstrap band checked
against the normal approximation it must agree with on a large sample."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from masbench.bench.types import TaskInstance
from masbench.harness.curve import (
    add_budget_spent,
    build_curve,
    cell_curve,
    _mean,
    compute_curve,
    groups_of_results,
    groups_of_tasks,
)
from masbench.spec import CotScSpec
from masbench.store.rows import CurveRow


def ins(store, table: str, **row) -> None:
    cols = ", ".join(row)
    store.con.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(row))})", list(row.values()))


# cell t1/0: a, a, b with a gold. k=1: 2/3. k=2: {a,a} 1, {a,b} 1/2, {a,b} 1/2 -> 2/3. k=3: a wins 2-1 -> 1.
T1 = [2 / 3, 2 / 3, 1.0]
# cell t2/0: b, (no answer: NULL in the store), a with a gold. k=1: 1/3. k=2: {b,-} 0, {b,a} 1/2, {-,a} 1 -> 1/2. k=3: 1-1 tie -> 1/2.
T2 = [1 / 3, 0.5, 0.5]


def _pool(store) -> None:
    cells = {("t1", 0): [("a", True, 10, 0.1, 1.0), ("a", True, 20, 0.2, 2.0), ("b", False, 30, 0.3, 3.0)],
             ("t2", 0): [("b", False, 40, 0.4, 4.0), (None, False, 40, 0.4, 4.0), ("a", True, 40, 0.4, 4.0)],
             ("t3", 0): [("a", True, 1, 0.0, 0.0)] * 3}  # a task outside the groups: left out
    for (task, seed), samples in cells.items():
        for i, (ans, ok, tok, usd, spent) in enumerate(samples):
            ins(store, "pool", run_id="r", task_id=task, seed=seed, sample_index=i, answer=ans, correct=ok,
                tokens=tok, cost_usd=usd, budget_spent=spent)
    ins(store, "pool", run_id="other", task_id="t1", seed=0, sample_index=0, answer="b", correct=False, tokens=5,
        cost_usd=0.0, budget_spent=0.0)  # another run's pool is not read


def test_compute_curve_from_a_hand_built_pool(store) -> None:
    _pool(store)
    groups = {"t1": ("depth", 2), "t2": ("depth", 3)}
    n = compute_curve(store, "r", CotScSpec(k_max=3, bootstrap=0), groups, basis="completion")
    assert n == 9  # 3 groups (all, depth 2, depth 3) x k = 1..3
    rows = store.sql("SELECT axis, axis_value, k, n_tasks, accuracy, ci_lo, ci_hi, tokens, calls, cost_usd, "
                     "budget_basis, budget_spent FROM cot_sc_curve WHERE run_id = 'r' ORDER BY axis, axis_value, k")
    want = []
    for (axis, value), acc, tok, usd, spent, n_tasks in (
            (("all", None), [(a + b) / 2 for a, b in zip(T1, T2)], 30.0, 0.3, 3.0, 2),  # means over the two cells
            (("depth", 2), T1, 20.0, 0.2, 2.0, 1), (("depth", 3), T2, 40.0, 0.4, 4.0, 1)):
        for k in (1, 2, 3):
            want.append((axis, value, k, n_tasks, acc[k - 1], acc[k - 1], acc[k - 1], k * tok, float(k), k * usd,
                         "completion", k * spent))
    assert len(rows) == len(want)
    for got, exp in zip(rows, want):
        assert got[:4] == exp[:4] and got[10] == exp[10]
        assert got[4:10] + (got[11],) == pytest.approx(exp[4:10] + (exp[11],), abs=1e-12), got
    cells = store.sql("SELECT task_id, seed, k, accuracy, tokens, cost_usd FROM cot_sc_task_curve "
                      "WHERE run_id = 'r' ORDER BY ALL")
    assert [c[:3] for c in cells] == [("t1", 0, 1), ("t1", 0, 2), ("t1", 0, 3), ("t2", 0, 1), ("t2", 0, 2), ("t2", 0, 3)]
    want_cells = [(T1[k - 1], 20.0 * k, 0.2 * k) for k in (1, 2, 3)] + [(T2[k - 1], 40.0 * k, 0.4 * k) for k in (1, 2, 3)]
    for got, exp in zip(cells, want_cells):
        assert got[3:] == pytest.approx(exp, abs=1e-12), got
    # recomputing replaces the rows (no duplicates); the other run's rows are untouched
    ins(store, "cot_sc_curve", run_id="other", axis="all", k=1, accuracy=0.123)
    assert compute_curve(store, "r", CotScSpec(k_max=3, bootstrap=0), groups, basis="completion") == 9
    assert store.sql("SELECT count(*) FROM cot_sc_curve WHERE run_id = 'r'") == [(9,)]
    assert store.sql("SELECT count(*) FROM cot_sc_task_curve WHERE run_id = 'r'") == [(6,)]
    assert store.sql("SELECT accuracy FROM cot_sc_curve WHERE run_id = 'other'") == [(0.123,)]


def test_compute_curve_under_each_tie_rule_passes_the_cell_key(store) -> None:
    # one cell a, b with a gold: k=2 is a 1-1 tie; split -> 1/2, first -> 1 (a seen first), and random ->
    # whichever of a, b has the higher priority in cell (task t1, seed 3)
    from masbench.runtime.ties import priority

    for i, (ans, ok) in enumerate([("a", True), ("b", False)]):
        ins(store, "pool", run_id="r", task_id="t1", seed=3, sample_index=i, answer=ans, correct=ok, tokens=1,
            cost_usd=0.0, budget_spent=1.0)
    for tie, k2 in (("split", 0.5), ("first", 1.0),
                    ("random", float(priority(3, "t1", "a") > priority(3, "t1", "b")))):
        compute_curve(store, "r", CotScSpec(k_max=2, bootstrap=0, tie=tie), {"t1": ("src", None)})
        assert store.sql("SELECT accuracy FROM cot_sc_task_curve WHERE k = 2") == [(k2,)], tie
    # the random rule depends on the cell: some seed gives the other winner (the key is not ignored)
    wins = {priority(s, "t1", "a") > priority(s, "t1", "b") for s in range(10)}
    assert wins == {True, False}


def test_a_sample_without_a_price_is_left_out_of_its_cells_mean_cost(store) -> None:
    # cell t1/0: USD 0.2, NULL (an unpriced sample), 0.4 -> the mean sample cost is (0.2 + 0.4) / 2 = 0.3,
    # not 0.6 / 3 = 0.2; a cell with every sample unpriced has no mean (NULL); tokens 10, 20, 30 -> 20
    for task, costs in (("t1", [0.2, None, 0.4]), ("t2", [None, None])):
        for i, usd in enumerate(costs):
            ins(store, "pool", run_id="r", task_id=task, seed=0, sample_index=i, answer="a", correct=True,
                tokens=10 * (i + 1), cost_usd=usd, budget_spent=0.0)
    compute_curve(store, "r", CotScSpec(k_max=2, bootstrap=0), {"t1": ("g", 1), "t2": ("g", 2)})
    got = store.sql("SELECT task_id, k, tokens, cost_usd FROM cot_sc_task_curve WHERE run_id = 'r' ORDER BY ALL")
    assert [g[:3] for g in got] == [("t1", 1, 20.0), ("t1", 2, 40.0), ("t2", 1, 15.0), ("t2", 2, 30.0)]
    assert [g[3] for g in got[:2]] == pytest.approx([0.3, 0.6], abs=1e-12)
    assert all(g[3] is None or math.isnan(g[3]) for g in got[2:])


def test_compute_curve_on_an_empty_pool_writes_nothing(store) -> None:
    assert compute_curve(store, "r", CotScSpec(k_max=3), {"t1": ("all", None)}) == 0
    assert store.sql("SELECT count(*) FROM cot_sc_curve") == [(0,)]


def _point(axis: str, value: int | None, k: int) -> CurveRow:
    return CurveRow(run_id="r", axis=axis, axis_value=value, k=k)


def test_budget_spent_without_spend_is_null_not_zero() -> None:
    rows = [_point("all", None, 2)]
    add_budget_spent(rows, None, {}, "tokens")
    assert rows == [CurveRow(run_id="r", axis="all", axis_value=None, k=2, budget_basis="tokens", budget_spent=None)]
    import pandas as pd

    pool = pd.DataFrame({"task_id": ["t1", "t1", "t2"], "seed": [0, 0, 0], "budget_spent": [1.0, 3.0, float("nan")]})
    rows = [_point("all", None, 3), _point("g", 1, 1), _point("g", 2, 1)]
    add_budget_spent(rows, pool, {"t1": ("g", 1), "t2": ("g", 2)}, "usd")
    # t1's mean spend 2; t2 spent nothing known (NaN): left out, so its group has none
    assert [(r.budget_basis, r.budget_spent) for r in rows] == [("usd", 6.0), ("usd", 2.0), ("usd", None)]
    rows = [_point("all", None, 1)]
    add_budget_spent(rows, pool.drop(columns="budget_spent"), {"t1": ("g", 1)}, "tokens")
    assert rows[0].budget_spent is None


def test_cell_curve_pads_a_short_pool_and_cuts_a_long_one() -> None:
    assert cell_curve(["a", "b"], [True, False], 4).tolist() == [0.5, 0.5, 0.5, 0.5]  # stays at its own size
    assert cell_curve(["a", "a", "b"], [True, True, False], 2).tolist() == pytest.approx(T1[:2])
    assert cell_curve([], [], 3).tolist() == [0.0, 0.0, 0.0]
    assert cell_curve(["a", "b"], [True, False], 2, "first").tolist() == [0.5, 1.0]


def test_build_curve_means_and_costs_by_hand() -> None:
    per_cell = np.array([[1.0, 0.0], [0.0, 0.5], [0.5, 1.0]])
    pts = build_curve(per_cell, np.array([10.0, 20.0, 60.0]), np.array([0.1, 0.2, 0.6]), bootstrap=0)
    assert [(p.k, p.n_tasks, p.calls) for p in pts] == [(1, 3, 1.0), (2, 3, 2.0)]
    assert [p.accuracy for p in pts] == pytest.approx([0.5, 0.5])
    assert [p.ci_lo for p in pts] == pytest.approx([0.5, 0.5]) and [p.ci_hi for p in pts] == pytest.approx([0.5, 0.5])
    assert [p.tokens for p in pts] == pytest.approx([30.0, 60.0]) and [p.cost_usd for p in pts] == pytest.approx([0.3, 0.6])
    one = build_curve(per_cell[:1], np.array([10.0]), np.array([0.1]), bootstrap=200)  # one cell: no band
    assert [(p.accuracy, p.ci_lo, p.ci_hi) for p in one] == [(1.0, 1.0, 1.0), (0.0, 0.0, 0.0)]
    assert build_curve(np.zeros((0, 0)), np.zeros(0), np.zeros(0)) == []


@pytest.mark.slow
def test_build_curve_band_is_the_95_percent_bootstrap_of_the_cell_mean() -> None:
    # 400 cells, k=1 values 0/1 with mean 0.45: the percentile band of the mean of cells resampled
    # must match the normal interval mean ± 1.96·sd/√n (the bootstrap distribution of a mean of
    # 400 values is close to normal); a 90% or 99% band would miss by > 8% of the half-width
    rng = np.random.default_rng(5)
    n = 400
    col = (rng.random(n) < 0.45).astype(float)
    per_cell = np.column_stack([col, np.full(n, 0.7)])
    pts = build_curve(per_cell, np.ones(n), np.zeros(n), bootstrap=20000, seed=1)
    half = 1.959964 * col.std(ddof=0) / math.sqrt(n)
    assert pts[0].ci_lo == pytest.approx(col.mean() - half, abs=0.04 * half)
    assert pts[0].ci_hi == pytest.approx(col.mean() + half, abs=0.04 * half)
    assert (pts[1].ci_lo, pts[1].ci_hi) == pytest.approx((0.7, 0.7))  # a constant column has no width
    again = build_curve(per_cell, np.ones(n), np.zeros(n), bootstrap=20000, seed=1)
    assert (again[0].ci_lo, again[0].ci_hi) == (pts[0].ci_lo, pts[0].ci_hi)  # seeded


def test_groups_of_tasks_and_of_results(store) -> None:
    tasks = [TaskInstance(id="t1", source="gsm8k", question="q", answers=["1"]),
             TaskInstance(id="t2", source="masbench", question="q", answers=["1"], axis="depth", axis_value=3)]
    assert groups_of_tasks(tasks) == {"t1": ("gsm8k", None), "t2": ("depth", 3)}
    ins(store, "results", run_id="r", design="cot", task_id="t1", seed=0, source="gsm8k")
    ins(store, "results", run_id="r", design="cot", task_id="t2", seed=0, source="masbench", axis="depth",
        axis_value=3)
    ins(store, "results", run_id="r", design="cot", task_id="t2", seed=1, source="masbench", axis="depth",
        axis_value=3)
    ins(store, "results", run_id="x", design="cot", task_id="t9", seed=0, source="other")
    assert groups_of_results(store, "r") == {"t1": ("gsm8k", None), "t2": ("depth", 3)}


def test_cell_curve_pads_with_the_value_at_the_pool_size() -> None:
    # pool a, a, b (T1 above): k = 4, 5 keep maj@3 = 1, not an earlier value
    assert cell_curve(["a", "a", "b"], [True, True, False], 5).tolist() == pytest.approx(T1 + [1.0, 1.0])


def test_cell_curve_default_cell_key_is_seed_0_and_no_task() -> None:
    from masbench.runtime.ties import priority

    labels = [f"x{i}" for i in range(6)]
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            want = float(priority(0, "", a) > priority(0, "", b))  # a 1-1 tie at k = 2
            assert cell_curve([a, b], [True, False], 2, "random")[1] == want, (a, b)


def test_compute_curve_skips_unknown_tasks_wherever_they_sort_and_defaults_to_the_tokens_basis(store) -> None:
    _pool(store)
    ins(store, "pool", run_id="r", task_id="t0", seed=0, sample_index=0, answer="z", correct=True, tokens=1,
        cost_usd=0.0, budget_spent=0.0)  # sorts first, in no group
    compute_curve(store, "r", CotScSpec(k_max=3, bootstrap=0), {"t1": ("depth", 2), "t2": ("depth", 3)})
    assert store.sql("SELECT DISTINCT task_id FROM cot_sc_task_curve ORDER BY 1") == [("t1",), ("t2",)]
    assert store.sql("SELECT DISTINCT budget_basis FROM cot_sc_curve") == [("tokens",)]


def test_build_curve_band_on_two_cells_and_the_seed() -> None:
    # two cells scoring 0 and 1: a resample of two cells has mean 0, 1/2 or 1 (chances 1/4, 1/2, 1/4),
    # so the 2.5% and 97.5% points of many resamples are 0 and 1
    pts = build_curve(np.array([[0.0], [1.0]]), np.ones(2), np.zeros(2), bootstrap=2000)
    assert (pts[0].ci_lo, pts[0].accuracy, pts[0].ci_hi) == (0.0, 0.5, 1.0)
    # continuous cell values: the band depends on the seed, and the default is seed 0 with 500 resamples
    rng = np.random.default_rng(9)
    per_cell = rng.random((30, 1))
    bands = {s: (p.ci_lo, p.ci_hi) for s in (0, 1) for p in build_curve(per_cell, np.ones(30), np.zeros(30), seed=s)}
    assert bands[0] != bands[1]
    d = build_curve(per_cell, np.ones(30), np.zeros(30))[0]
    e = build_curve(per_cell, np.ones(30), np.zeros(30), bootstrap=500, seed=0)[0]
    assert (d.ci_lo, d.ci_hi) == (e.ci_lo, e.ci_hi) == bands[0]
    assert (d.ci_lo, d.ci_hi) != (build_curve(per_cell, np.ones(30), np.zeros(30), bootstrap=501)[0].ci_lo,
                                  build_curve(per_cell, np.ones(30), np.zeros(30), bootstrap=501)[0].ci_hi)


def test_build_curve_band_from_one_resample() -> None:
    # one resample of three cells 0, 1, 10: its mean is (a + b + c) / 3 over draws of cells, and the band
    # collapses to that one mean (it is a band of one value, not "no band")
    vals = np.array([[0.0], [1.0], [10.0]])
    attainable = {(a + b + c) / 3 for a in (0, 1, 10) for b in (0, 1, 10) for c in (0, 1, 10)}
    bands = []
    for seed in range(5):
        p = build_curve(vals, np.ones(3), np.zeros(3), bootstrap=1, seed=seed)[0]
        assert p.ci_lo == p.ci_hi and min(attainable, key=lambda m: abs(m - p.ci_lo)) == pytest.approx(p.ci_lo)
        bands.append(p.ci_lo)
    assert any(b != pytest.approx(11 / 3) for b in bands)


def test_build_curve_on_nothing_does_no_work() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a mean of an empty slice
        assert build_curve(np.zeros(0), np.zeros(0), np.zeros(0)) == []
        assert build_curve(np.zeros((0, 3)), np.zeros(0), np.zeros(0)) == []


def test_the_band_resamples_tasks_not_cells() -> None:
    """Seeds that copy their task add no evidence: the band of 4 copies per task resampled by task
    is the band of one seed (the same draws), and wider than resampling the 4n cells."""
    rng = np.random.default_rng(2)
    n = 200
    one = np.column_stack([(rng.random(n) < 0.5).astype(float), rng.random(n)])
    four = np.repeat(one, 4, axis=0)
    tasks = np.repeat([f"t{i:03d}" for i in range(n)], 4)
    a = build_curve(one, np.ones(n), np.zeros(n), bootstrap=2000, seed=3)
    b = build_curve(four, np.ones(4 * n), np.zeros(4 * n), bootstrap=2000, seed=3, tasks=tasks)
    c = build_curve(four, np.ones(4 * n), np.zeros(4 * n), bootstrap=2000, seed=3)
    assert [x for p in b for x in (p.ci_lo, p.ci_hi)] == pytest.approx([x for p in a for x in (p.ci_lo, p.ci_hi)], abs=1e-12)
    w_task, w_cell = b[0].ci_hi - b[0].ci_lo, c[0].ci_hi - c[0].ci_lo
    assert w_task / w_cell == pytest.approx(2.0, rel=0.15)  # √4: cells counted as independent are too narrow


def test_compute_curve_band_resamples_the_pools_tasks(store) -> None:
    """Task a: one seed, right; task b: three seeds, wrong (one sample a cell). Resampling the two
    tasks (a cell's task passed through): {a, a} mean 1 (p 1/4), {b, b} 0 (1/4), {a, b} 1/4 (1/2),
    so with 500 draws the 2.5 / 97.5% band is exactly [0, 1]. Resampling the 4 cells as tasks
    reaches mean 1 only when all 4 draws are a's cell (p 1/256 < 2.5%): its top is below 1; and
    with no task per cell there would be one task and no band (.25 .. .25)."""
    for task, seeds, ok in (("a", [0], True), ("b", [0, 1, 2], False)):
        for seed in seeds:
            ins(store, "pool", run_id="r", task_id=task, seed=seed, sample_index=0, answer="x" if ok else "y",
                correct=ok, tokens=10, cost_usd=0.1, budget_spent=1.0)
    compute_curve(store, "r", CotScSpec(k_max=1, bootstrap=500), {"a": ("g", 1), "b": ("g", 1)})
    rows = store.sql("SELECT axis, accuracy, ci_lo, ci_hi FROM cot_sc_curve WHERE run_id = 'r' ORDER BY axis")
    assert rows == [("all", 0.25, 0.0, 1.0), ("g", 0.25, 0.0, 1.0)]


def test_a_pool_sample_with_unknown_correctness_does_not_make_its_answer_gold(store) -> None:
    # cell t1/0: x (correct NULL: not scored), y (wrong): no gold answer, so every k scores 0
    for i, (ans, ok) in enumerate((("x", None), ("y", False))):
        ins(store, "pool", run_id="r", task_id="t1", seed=0, sample_index=i, answer=ans, correct=ok, tokens=10,
            cost_usd=0.1, budget_spent=1.0)
    compute_curve(store, "r", CotScSpec(k_max=2, bootstrap=0), {"t1": ("g", 1)})
    assert store.sql("SELECT k, accuracy FROM cot_sc_task_curve WHERE run_id = 'r' ORDER BY k") == [(1, 0.0), (2, 0.0)]


def test_one_task_with_many_seeds_has_no_band() -> None:
    """Ten seeds of one task: nothing to resample, the band is the mean itself, exactly (a bootstrap
    of the one task would give its cells' sum over their count, 0.09999999999999999, not 0.1)."""
    pts = build_curve(np.full((10, 1), 0.1), np.ones(10), np.zeros(10), bootstrap=200, tasks=np.array(["t"] * 10))
    assert [(p.accuracy, p.ci_lo, p.ci_hi) for p in pts] == [(0.1, 0.1, 0.1)]


def test_the_mean_of_no_priced_sample_is_nan_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 / 0 RuntimeWarning: the empty case is decided before dividing
        assert math.isnan(_mean(np.array([np.nan, np.nan])))
        assert _mean(np.array([0.2, np.nan, 0.4])) == pytest.approx(0.3, abs=1e-15)


@pytest.mark.parametrize("page", [1, 2])
def test_the_pool_read_a_few_cells_at_a_time_gives_the_same_curves(store, monkeypatch, page) -> None:
    """compute_curve reads the pool in pages of whole cells (bounded memory at any pool size): a
    page of one or two cells, with the connection released between pages as a running writer's is,
    writes exactly the rows one page does."""
    import masbench.harness.curve as curve_mod

    _pool(store)
    rng = np.random.default_rng(3)
    for t in range(4, 9):  # more cells, several seeds, a cell whose pool is short
        for seed in (0, 1):
            for i in range(3 if t != 6 else 1):
                ins(store, "pool", run_id="r", task_id=f"t{t}", seed=seed, sample_index=i,
                    answer=str(rng.integers(0, 3)), correct=bool(rng.integers(0, 2)), tokens=int(rng.integers(5, 50)),
                    cost_usd=float(rng.random()), budget_spent=float(rng.random()))
    groups = {"t1": ("depth", 2), "t2": ("depth", 3), **{f"t{t}": ("depth", t % 2) for t in range(4, 9)}}
    spec = CotScSpec(k_max=3, bootstrap=50)

    def rows():
        return (store.sql("SELECT * FROM cot_sc_curve WHERE run_id = 'r' ORDER BY ALL"),
                store.sql("SELECT * FROM cot_sc_task_curve WHERE run_id = 'r' ORDER BY ALL"))

    compute_curve(store, "r", spec, groups, basis="completion")
    whole = rows()
    monkeypatch.setattr(curve_mod, "POOL_PAGE_CELLS", page)
    released = []
    real_df = store.df

    def df_then_release(*a, **k):
        out = real_df(*a, **k)
        store.release()  # what a brief (running) store's writer does between flushes
        released.append(1)
        return out

    monkeypatch.setattr(store, "df", df_then_release)
    compute_curve(store, "r", spec, groups, basis="completion")
    assert len(released) == -(-13 // page)  # one query per page of the pool's 13 cells (t3 in no group)
    assert rows() == whole
    assert len(whole[1]) == 12 * 3


def test_the_band_bootstrap_is_the_same_whatever_its_chunk(monkeypatch):
    """The band's resamples are drawn in chunks of at most ``_BAND_CELLS`` task indices (bounded
    memory): the B resampled means are identical with one chunk per resample, a few, or all in one."""
    import masbench.harness.curve as curve

    rng = np.random.default_rng(3)
    per_cell, tasks = rng.random((300, 4)), np.array([f"t{i % 120}" for i in range(300)])  # 120 tasks, seeds
    monkeypatch.setattr(curve, "_BAND_CELLS", 10**9)  # every resample in one chunk
    whole = curve.task_bootstrap(per_cell, tasks, 50, 9)
    for cells in (1, 120 * 7, 120 * 13 + 5):  # 1 → one resample a chunk
        monkeypatch.setattr(curve, "_BAND_CELLS", cells)
        assert np.array_equal(curve.task_bootstrap(per_cell, tasks, 50, 9), whole)
    assert whole.shape == (50, 4)


def _many_cells(store, n: int) -> dict[str, tuple[str, int | None]]:
    """``n`` cells of two samples each in run "r" (one seed a task), in two groups."""
    store.con.execute("""INSERT INTO pool (run_id, task_id, seed, sample_index, answer, correct, tokens, cost_usd, budget_spent)
        SELECT 'r', 't' || lpad(CAST(i AS VARCHAR), 7, '0'), 0, j, CAST((i + j) % 3 AS VARCHAR), (i + j) % 3 = 0,
               10 + j, 0.001 * j, 1.0 + j FROM range(?) a(i), range(2) b(j)""", [n])
    return {f"t{i:07d}": ("g", i % 2) for i in range(n)}


@pytest.mark.slow
def test_the_cells_held_for_the_group_curves_take_a_few_bytes_each(store, monkeypatch) -> None:
    """What compute_curve holds per cell once the pool is read (at its first build_curve) is its
    k_max values, tokens, USD and budget spend and a task and a group code in typed arrays:
    8·(4 + 3) + 8 = 64 bytes at k_max = 4, plus the arrays' growth slack (≤ 1/16) and, for the
    group being built, its non-NaN spends (8 + 1 bytes a cell). Measured with tracemalloc over the
    blocks allocated in curve.py itself (the pool's pages and the store's writer are elsewhere), as
    the growth from 1,000 to 3,000 cells so fixed costs cancel; per-cell Python objects (a float in
    a list is 32 bytes; the lists before came to ~320 bytes a cell here) would pass 100."""
    import gc
    import tracemalloc

    import masbench.harness.curve as curve_mod

    monkeypatch.setattr(curve_mod, "POOL_PAGE_CELLS", 500)
    held = {}
    real = curve_mod.build_curve

    def first_build(*a, **k):
        if run not in held:
            gc.collect()  # the last page's frame (pandas frames hold reference cycles)
            snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, curve_mod.__file__)])
            held[run] = sum(s.size for s in snap.statistics("filename"))
        return real(*a, **k)

    monkeypatch.setattr(curve_mod, "build_curve", first_build)
    for run, n in (("small", 1000), ("large", 3000)):
        store.sql("DELETE FROM pool")
        groups = _many_cells(store, n)
        tracemalloc.start()
        try:
            compute_curve(store, "r", CotScSpec(k_max=4, bootstrap=0), groups)
        finally:
            tracemalloc.stop()
    per_cell = (held["large"] - held["small"]) / 2000
    assert 64 <= per_cell < 100, per_cell


def test_pool_cells_out_of_task_id_order_are_refused(store, monkeypatch) -> None:
    """Task codes count up in the order the pool is read, which must be the task ids' order for the
    band's bootstrap to index tasks as the ids sort: pages handed over in reverse are refused."""
    import masbench.harness.curve as curve_mod

    groups = _many_cells(store, 4)
    real = curve_mod._pool_pages
    monkeypatch.setattr(curve_mod, "_pool_pages", lambda *a: reversed(list(real(store, "r", 2))))
    with pytest.raises(RuntimeError, match="out of task id order: 't0000000' after 't0000003'"):
        compute_curve(store, "r", CotScSpec(k_max=2, bootstrap=0), groups)
    monkeypatch.setattr(curve_mod, "_pool_pages", lambda *a: real(store, "r", 2))
    assert compute_curve(store, "r", CotScSpec(k_max=2, bootstrap=0), groups) == 3 * 2  # all, g 0, g 1


def test_a_task_whose_group_is_all_counts_twice_in_all(store) -> None:
    """A cell goes to ("all", None) and to its own group; a task whose own group is ("all", None) is
    thus counted twice there (the behaviour kept when the cells went into arrays). By hand: t1's
    cell is 1 (both samples right), t2's 0, so "all" is (1 + 1 + 0) / 3 over three cells."""
    for task, ok in (("t1", True), ("t2", False)):
        for i in range(2):
            ins(store, "pool", run_id="r", task_id=task, seed=0, sample_index=i, answer="a", correct=ok,
                tokens=10, cost_usd=0.0, budget_spent=1.0 + (task == "t2"))
    compute_curve(store, "r", CotScSpec(k_max=1, bootstrap=0), {"t1": ("all", None), "t2": ("g", 1)})
    rows = store.sql("SELECT axis, axis_value, n_tasks, accuracy, budget_spent FROM cot_sc_curve ORDER BY axis")
    # budget: t1's mean spend 1.0 twice and t2's 2.0 -> 4/3 in all
    assert rows == [("all", None, 3, pytest.approx(2 / 3), pytest.approx(4 / 3)), ("g", 1, 1, 0.0, 2.0)]
