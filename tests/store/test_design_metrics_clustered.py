"""design_metrics' Wilson interval at the task-clustered effective n, from hand-built rows."""

from __future__ import annotations

import math

import pytest

from masbench.store import Store, StoreWriter

Z = 1.959963984540054


def wilson(p: float, n: float) -> tuple[float, float]:
    c = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    h = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return c - h, c + h


def _rows(tmp_path, name: str, cells: dict[str, list[int]]):
    st = Store(tmp_path / f"{name}.duckdb")
    w = StoreWriter(st)
    for task, ys in cells.items():
        for seed, y in enumerate(ys):
            w.add("results", {"run_id": "r", "design": "x", "task_id": task, "seed": seed, "source": "s",
                              "correct": bool(y), "tokens": 1, "calls": 1, "cost_usd": 0.0, "status": "ok"})
    w.flush()
    row = st.df("SELECT * FROM design_metrics WHERE axis = 'all'").iloc[0]
    st.close()
    return row


def test_one_seed_keeps_the_plain_wilson_interval(tmp_path):
    ys = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1]
    r = _rows(tmp_path, "one", {f"t{i}": [y] for i, y in enumerate(ys)})
    assert r["n_eff"] == 12
    assert (r["ci_lo"], r["ci_hi"]) == pytest.approx(wilson(8 / 12, 12), abs=1e-12)


def test_correlated_seeds_widen_it(tmp_path):
    # 10 tasks × 3 seeds; seeds of a task mostly agree. p̂ = 17/30.
    cells = {"t0": [1, 1, 1], "t1": [1, 1, 1], "t2": [0, 0, 0], "t3": [1, 1, 0], "t4": [0, 0, 0],
             "t5": [1, 1, 1], "t6": [0, 0, 1], "t7": [1, 1, 1], "t8": [0, 0, 0], "t9": [1, 1, 0]}
    r = _rows(tmp_path, "three", cells)
    p = 17 / 30
    v = sum((sum(ys) - len(ys) * p) ** 2 for ys in cells.values()) / 30**2  # by hand
    n_eff = min(30, p * (1 - p) / v)
    assert r["accuracy"] == pytest.approx(p) and r["n_eff"] == pytest.approx(n_eff)
    assert n_eff < 30
    assert (r["ci_lo"], r["ci_hi"]) == pytest.approx(wilson(p, n_eff), abs=1e-12)
    lo30, hi30 = wilson(p, 30)
    assert r["ci_hi"] - r["ci_lo"] > hi30 - lo30
    # exact copies of each task: n_eff is the number of tasks
    copies = _rows(tmp_path, "copies", {f"t{i}": [y] * 4 for i, y in enumerate([1, 0, 1, 1, 0, 1, 0, 1])})
    assert copies["n_eff"] == pytest.approx(8)
