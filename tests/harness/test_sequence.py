"""The plan of a sequential run (masbench.harness.sequence) on hand-made suites and plans: the batches
and draws by position, the seeded order, the task cap and batch size checks."""

from __future__ import annotations

import pytest

from masbench.harness.sequence import DEFAULT_BATCH, SequencePlan, SequentialError, plan_sequence, task_order
from masbench.spec import SuiteSpec


def _suite(**kw) -> SuiteSpec:
    data = {"name": "s", "tasks": [{"generator": "masbench.arith", "n": 3}], "designs": ["cot", "debate"],
            "cot_sc": {"k_max": 4}, **kw}
    return SuiteSpec.model_validate(data)


IDS = [f"t{i}" for i in range(7)]


def test_batches_and_draws_by_position():
    plan = SequencePlan(("a", "b", "c", "d", "e", "f", "g"), 3, "tokens")
    # 7 tasks in batches of 3: [a b c] [d e f] [g] -> 3 batches, the last short
    assert plan.max_tasks == 7 and plan.n_batches == 3
    assert plan.batch_tasks(0) == ("a", "b", "c") and plan.batch_tasks(1) == ("d", "e", "f")
    assert plan.batch_tasks(2) == ("g",) and plan.batch_tasks(3) == ()
    assert plan.drawn(0) == () and plan.drawn(1) == ("a", "b", "c") and plan.drawn(2) == tuple("abcdef")
    assert plan.drawn(3) == tuple("abcdefg")
    assert plan.identity() == {"max_tasks": 7, "batch": 3, "match": "tokens"}
    # exactly divisible: 6 in batches of 3 is 2 batches, not 3
    assert SequencePlan(tuple("abcdef"), 3, "calls").n_batches == 2
    assert SequencePlan(tuple("a"), 1, "calls").n_batches == 1


def test_the_order_is_a_seeded_permutation_stable_per_seed():
    a = task_order(IDS, 5)
    assert sorted(a) == IDS and a == task_order(IDS, 5)
    assert a != IDS and task_order(IDS, 6) != a  # 7! orders: seed 5 and 6 differ, neither is the identity


def test_plan_cuts_the_order_to_the_cap_and_keeps_the_suites_unit():
    suite = _suite(stats={"seed": 5, "match": "calls"})
    plan = plan_sequence(suite, IDS, ["cot", "debate"], 4, 3)
    assert plan.order == tuple(task_order(IDS, 5)[:4]) and plan.batch == 3 and plan.match == "calls"
    # no cap: every task; no batch: the default of 20, shrunk to the 7 tasks there are
    full = plan_sequence(suite, IDS, ["cot", "debate"], None, None)
    assert full.order == tuple(task_order(IDS, 5)) and full.batch == 7 < DEFAULT_BATCH
    # a batch smaller than the cap stays; the cap at exactly the task count is allowed, 1 too
    assert plan_sequence(suite, IDS, ["debate"], 7, 2).batch == 2
    assert plan_sequence(suite, IDS, ["debate"], 1, 1).order == (task_order(IDS, 5)[0],)
    many = [f"t{i}" for i in range(45)]
    assert plan_sequence(suite, many, ["debate"], None, None).batch == DEFAULT_BATCH == 20


@pytest.mark.parametrize("cap, batch, message", [
    (0, None, r"--max-tasks 0: the suite has 7 tasks \(use 1\.\.7\)"),
    (8, None, r"--max-tasks 8: the suite has 7 tasks \(use 1\.\.7\)"),
    (None, 0, r"--batch 0: a batch holds at least one task"),
])
def test_caps_and_batches_outside_the_suite_are_refused(cap, batch, message):
    with pytest.raises(SequentialError, match=message):
        plan_sequence(_suite(), IDS, ["cot", "debate"], cap, batch)


def test_a_suite_without_a_curve_or_a_design_to_decide_is_refused():
    with pytest.raises(SequentialError, match=r"suite 's': --until-decided compares designs with the CoT-SC curve; "
                                                r"enable cot_sc \(k_max >= 1\)$"):
        plan_sequence(_suite(cot_sc={"enabled": False, "k_max": 4}), IDS, ["debate"], None, None)
    with pytest.raises(SequentialError, match=r"needs a design other than the baselines \(cot, cot-sc\) to decide"):
        plan_sequence(_suite(), IDS, ["cot", "cot-sc"], None, None)
    # one design besides the baselines is enough
    assert plan_sequence(_suite(), IDS, ["cot", "cot-sc", "debate"], None, None).max_tasks == 7
