"""One look's matching on hand-built rows: where a design's cost falls on the curve (below /
within / beyond, k = cost / cost per pool sample), and a unit without cost is refused."""

from __future__ import annotations

import pytest

from masbench.harness.sequence import SequencePlan, SequentialError
from masbench.harness.sequential_look import look_line, match_k
from masbench.harness.stats.sequential import LookResult


def ins(store, table: str, **row) -> None:
    cols = ", ".join(row)
    store.con.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(row))})", list(row.values()))


@pytest.mark.parametrize("design_tokens, expected", [
    (300, (2.5, "within")),   # 300 / 120
    (60, (1.0, "below")),     # 0.5 samples: compared at k = 1
    (600, (4.0, "beyond")),   # 5 samples > k_max = 4: compared at k_max
    (480, (4.0, "within")),   # exactly k_max
])
def test_match_k_places_the_design_on_the_curve(store, design_tokens, expected):
    ins(store, "results", run_id="r", design="d", task_id="t1", seed=0, tokens=design_tokens, calls=1)
    ins(store, "pool", run_id="r", task_id="t1", seed=0, sample_index=0, tokens=100)
    ins(store, "pool", run_id="r", task_id="t1", seed=0, sample_index=1, tokens=140)
    k, pos = match_k(store, "r", "d", "tokens", ("t1",), 4)
    assert (k, pos) == (pytest.approx(expected[0]), expected[1])


def test_a_unit_the_pool_spent_nothing_on_is_refused(store):
    ins(store, "results", run_id="r", design="d", task_id="t1", seed=0, cost_usd=0.0)
    ins(store, "pool", run_id="r", task_id="t1", seed=0, sample_index=0, cost_usd=0.0)
    with pytest.raises(SequentialError, match="set stats.match to tokens or calls"):
        match_k(store, "r", "d", "usd", ("t1",), 4)


def test_the_look_line_says_what_was_decided_at_which_n():
    plan = SequencePlan(tuple(f"t{i}" for i in range(100)), 20, "budget")
    res = [LookResult("react", 40, 0.2, 0.05, 0.3, 0.001, 2, 0.002, 0.025, True, "worth it", "r"),
           LookResult("debate", 60, 0.0, -0.1, 0.1, 0.9, 2, 0.9, 0.05, False, "inconclusive", "u")]
    assert look_line(3, plan, res) == "look 3: 60 of 100 tasks; decided: react (worth it at n = 40); undecided: debate"


def test_the_look_line_lists_several_designs_with_commas():
    plan = SequencePlan(tuple(f"t{i}" for i in range(10)), 5, "tokens")
    res = [LookResult(d, 5, 0.0, 0.0, 0.0, 0.5, 4, 0.5, 0.05, dec, v, "r")
           for d, dec, v in (("a", True, "worth it"), ("b", False, "inconclusive"), ("c", True, "not worth it"),
                             ("e", False, "inconclusive"))]
    assert look_line(1, plan, res) == ("look 1: 5 of 10 tasks; decided: a (worth it at n = 5), c (not worth it at n = 5); "
                                       "undecided: b, e")
    assert look_line(2, plan, res[1:2]) == "look 2: 10 of 10 tasks; undecided: b"


def test_match_k_at_exactly_one_sample_and_on_usd_below_a_dollar(store):
    ins(store, "results", run_id="r", design="d", task_id="t1", seed=0, tokens=120, cost_usd=0.0005, calls=1)
    ins(store, "pool", run_id="r", task_id="t1", seed=0, sample_index=0, tokens=100, cost_usd=0.0002)
    ins(store, "pool", run_id="r", task_id="t1", seed=0, sample_index=1, tokens=140, cost_usd=0.0002)
    assert match_k(store, "r", "d", "tokens", ("t1",), 4) == (1.0, "within")  # 120 / 120: on the curve's k = 1
    k, pos = match_k(store, "r", "d", "usd", ("t1",), 4)                     # 0.0005 / 0.0002
    assert (k, pos) == (pytest.approx(2.5), "within")


def test_a_design_without_cost_on_the_tasks_is_refused(store):
    ins(store, "pool", run_id="r", task_id="t1", seed=0, sample_index=0, tokens=100)
    ins(store, "results", run_id="r", design="d", task_id="t2", seed=0, tokens=100)  # not on t1
    with pytest.raises(SequentialError, match=r"design 'd': no cost on the matching unit 'tokens'"):
        match_k(store, "r", "d", "tokens", ("t1",), 4)
