"""``distinct: true`` on a generator source (masbench.bench.loaders.distinct_tasks) and the load's report of
repeated questions (SourceRead.repeated), on a hand-made generator whose draws are listed in the tests."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from masbench.bench.loaders import distinct_tasks, load_source, repeated_questions
from masbench.bench.reads import SourceRead
from masbench.bench.types import TaskInstance
from masbench.spec.suite import TaskSource

# instance i of value v asks DRAWS[v][i] (prefix-stable: more instances never change the first ones)
DRAWS = {1: ["a", "b", "a", "c", "b", "d", "e", "f"], 2: ["a", "x", "x", "y", "z", "w", "v", "u"]}


def _task(v: int, i: int) -> TaskInstance:
    return TaskInstance(id=f"g-{v}-{i}", source="g", question=DRAWS[v][i], answers=["0"])


def _make(values: list[int], calls: list[int]):
    def make(m: int) -> list[TaskInstance]:
        calls.append(m)
        return [_task(v, i) for v in values for i in range(m)]
    return make


def test_distinct_keeps_the_first_new_questions_of_each_value_in_draw_order():
    calls: list[int] = []
    got = distinct_tasks(_make([1, 2], calls), 3, "g")
    # n = 3: value 1's first 3 draws a, b, a hold 2 new questions -> draw 6 per value:
    # value 1 keeps a (0), b (1), c (3); value 2 then skips a (seen in value 1) and keeps x (1), y (3), z (4)
    assert [t.id for t in got] == ["g-1-0", "g-1-1", "g-1-3", "g-2-1", "g-2-3", "g-2-4"]
    assert calls == [3, 6]


def test_distinct_asks_once_when_the_first_draws_are_distinct():
    calls: list[int] = []
    assert [t.question for t in distinct_tasks(_make([1], calls), 2, "g")] == ["a", "b"]
    assert calls == [2]


def test_distinct_refuses_when_a_value_has_too_few_questions():
    # value 1 holds 6 distinct questions in its first 8 draws: 7 cannot be found
    short = {1: DRAWS[1] * 200}
    def make(m: int) -> list[TaskInstance]:
        return [TaskInstance(id=f"g-{i}", source="g", question=short[1][i], answers=["0"]) for i in range(m)]
    with pytest.raises(ValueError, match="fewer than 7 distinct questions per value in 448 draws"):
        distinct_tasks(make, 7, "g")  # 7, 14, ..., 448 = 64 x 7


def test_distinct_refuses_a_generator_that_does_not_make_m_per_value():
    with pytest.raises(ValueError, match="needs 2 tasks per value, got 3 in all"):
        distinct_tasks(lambda m: [_task(1, i) for i in range(m + 1)], 2, "g")


def test_repeats_are_counted_and_reported():
    tasks = [_task(1, i) for i in range(6)]  # a b a c b d: 2 repeats
    assert repeated_questions(tasks) == 2
    line = SourceRead("arith", "masbench.arith", 6, repeated=2).line()
    assert line == ("warning: arith: 6 tasks made by generator masbench.arith, 2 of them repeating an earlier "
                    "question (distinct: true draws distinct ones)")
    assert SourceRead("arith", "masbench.arith", 6).line() == "arith: 6 tasks made by generator masbench.arith"


def test_a_real_generator_source_with_a_repeat_says_so_and_distinct_removes_it():
    # masbench.arith at seed 1 asks "What is 3 minus 1?" and "What is half of 6?" twice in its first 10
    src = TaskSource(generator="masbench.arith", values=[1], n=10, seed=1)
    loaded = load_source(src)
    qs = [t.question for t in loaded.tasks]
    assert len(qs) - len(set(qs)) == 2 == loaded.reads[0].repeated
    distinct = load_source(TaskSource(generator="masbench.arith", values=[1], n=10, seed=1, distinct=True))
    dq = [t.question for t in distinct.tasks]
    assert len(dq) == len(set(dq)) == 10 and distinct.reads[0].repeated == 0
    # the first draws are kept in order: the distinct list starts with the plain list's first unrepeated run
    first_repeat = next(i for i, q in enumerate(qs) if q in qs[:i])
    assert dq[:first_repeat] == qs[:first_repeat]


def test_distinct_goes_with_generators_only():
    with pytest.raises(ValidationError, match="distinct: goes with generator"):
        TaskSource(jsonl="x.jsonl", distinct=True)


def test_distinct_is_part_of_a_runs_identity_only_when_set():
    from masbench.harness.cells import config_hash
    from masbench.spec import SuiteSpec

    def suite(**src):
        return SuiteSpec.model_validate({"name": "s", "designs": ["cot"],
                                         "tasks": [{"generator": "masbench.arith", "n": 3, **src}]})

    assert config_hash(suite(), {}, None, None) == config_hash(suite(distinct=False), {}, None, None)
    assert config_hash(suite(distinct=True), {}, None, None) != config_hash(suite(), {}, None, None)
