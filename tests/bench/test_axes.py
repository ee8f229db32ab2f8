"""The five-axis generator: determinism, axis values measured on the stored DAG, gold answers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from masbench.bench import GENERATORS, TaskInstance
from masbench.bench.templates import ITEMS, NAMES, template_ids

AXES = ["depth", "horizon", "breadth", "parallel", "robustness"]
VALUES = [1, 2, 3, 4, 6]
PER_VALUE = 40  # 5 values x 40 = 200 tasks per axis


def gen(axis: str, values=VALUES, n=PER_VALUE, seed=0, split="test", **params) -> list[TaskInstance]:
    return GENERATORS[f"masbench.{axis}"](values, n, seed, split, **params)


# function scope on purpose: mutmut (benchmarks/mutation.py) credits a generator call to the test
# that triggered it, so a module-scoped fixture would make only the first test cover the generator
@pytest.fixture
def tasks_by_axis() -> dict[str, list[TaskInstance]]:
    return {axis: gen(axis) for axis in AXES}


@pytest.fixture
def axis_tasks(axis: str) -> list[TaskInstance]:
    return gen(axis)


def graph(task: TaskInstance) -> nx.DiGraph:
    return nx.node_link_graph(task.meta["dag"], directed=True, multigraph=False, edges="edges")


def recompute(G: nx.DiGraph) -> dict[str, int]:
    """An evaluator independent of masbench.bench.dag."""
    ops = {"add": lambda a, c: a[0] + c, "sub": lambda a, c: a[0] - c, "mul": lambda a, c: a[0] * c,
           "half": lambda a, c: a[0] / 2, "sum": lambda a, c: sum(a), "diff": lambda a, c: a[0] - a[1]}
    vals: dict[str, int] = {}
    for node in nx.topological_sort(G):
        d = G.nodes[node]
        if d["kind"] == "given":
            vals[node] = d["value"]
        else:
            assert list(G.predecessors(node)) and set(G.predecessors(node)) == set(d["args"])
            v = ops[d["op"]]([vals[a] for a in d["args"]], d["const"])
            assert v == int(v) and v >= 1, (node, d, v)
            vals[node] = int(v)
    return vals


def measured(G: nx.DiGraph, axis: str, task: TaskInstance) -> int:
    if axis == "depth":
        return nx.dag_longest_path_length(G)
    if axis == "breadth":
        return max(d for _, d in G.in_degree())
    if axis == "parallel":
        return nx.number_weakly_connected_components(G)
    if axis == "horizon":
        return sum(1 for n, d in G.nodes(data=True) if d["kind"] == "derived" and G.out_degree(n) > 0)
    return sum(1 for _, d in G.nodes(data=True) if d["wrong"] is not None)


@pytest.mark.parametrize("axis", AXES)
def test_requested_axis_value_is_measured_value(axis_tasks, axis):
    tasks = axis_tasks
    assert len(tasks) >= 200
    for task in tasks:
        G = graph(task)
        assert nx.is_directed_acyclic_graph(G)
        assert task.axis == axis and G.graph["axis_value"] == task.axis_value
        assert measured(G, axis, task) == task.axis_value, task.id


@pytest.mark.parametrize("axis", AXES)
def test_gold_answers_recompute_from_dag(axis_tasks, axis):
    for task in axis_tasks:
        G = graph(task)
        vals = recompute(G)
        for node, d in G.nodes(data=True):
            assert vals[node] == d["value"]
        assert task.answers == [str(vals[a]) for a in G.graph["answers"]]
        sinks = [n for n in G if G.out_degree(n) == 0]
        final = G.graph["answers"] if axis != "horizon" else G.graph["answers"][-1:]
        assert sorted(sinks) == sorted(final)
        inter = [str(vals[n]) for n, d in G.nodes(data=True) if d["kind"] == "derived" and G.out_degree(n)]
        assert task.intermediates == inter
        assert G.graph["axis"] == axis and task.scorer == "numeric" and task.source == f"masbench.{axis}"
        assert task.meta["split"] == "test" and task.meta["seed"] == 0


def test_same_seed_same_bytes_and_prefix_stable():
    for axis in AXES:
        a = [t.model_dump_json() for t in gen(axis, n=5)]
        b = [t.model_dump_json() for t in gen(axis, n=5)]
        assert a == b
        longer = [t.model_dump_json() for t in gen(axis, values=[VALUES[0]], n=8)]
        assert longer[:5] == a[:5]
        other = [t.model_dump_json() for t in gen(axis, n=5, seed=1)]
        assert other != a


@pytest.mark.slow
def test_byte_identical_across_processes(tmp_path: Path):
    code = ("import sys; from masbench.bench import GENERATORS as G\n"
            "for name in sorted(G):\n"
            "    for t in G[name]([2, 3], 3, 7, 'test'): sys.stdout.write(t.model_dump_json() + '\\n')\n")
    outs = []
    for hashseed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                             cwd=Path(__file__).resolve().parents[2], check=True)
        outs.append(run.stdout)
    assert outs[0] == outs[1] and outs[0].count("\n") == len(GENERATORS) * 2 * 3  # every generator, 2 values x 3


def test_ids_unique_and_stable_format(tasks_by_axis):
    ids = [t.id for tasks in tasks_by_axis.values() for t in tasks]
    assert len(ids) == len(set(ids))
    assert tasks_by_axis["depth"][7].id == "depth-1-test-s0-0007"


def test_train_and_test_use_disjoint_templates_names_items():
    assert not template_ids("train") & template_ids("test")
    assert not set(NAMES["train"]) & set(NAMES["test"])
    assert not set(ITEMS["train"]) & set(ITEMS["test"])
    for axis in AXES:
        train = {tid for t in gen(axis, n=10, split="train") for tid in t.meta["templates"]}
        test = {tid for t in gen(axis, n=10, split="test") for tid in t.meta["templates"]}
        assert train and test and not train & test
        assert all(tid.startswith("train.") for tid in train)
        train_text = " ".join(t.question for t in gen(axis, n=10, split="train"))
        assert not any(re.search(rf"\b{name}\b", train_text) for name in NAMES["test"])


def test_value_one_is_a_one_step_small_number_problem():
    for task in gen("depth", values=[1], n=50):
        G = graph(task)
        assert sum(1 for _, d in G.nodes(data=True) if d["kind"] == "derived") == 1
        assert all(int(x) <= 20 for x in re.findall(r"\d+", task.question))
        assert int(task.answers[0]) <= 27
        assert len(task.question) < 200
    for task in gen("depth", values=[2], n=50):
        assert all(int(x) <= 60 for x in re.findall(r"\d+", task.question))


def test_depth_one_example_reads_simply():
    task = gen("depth", values=[1], n=3)[2]
    assert task.question.endswith("?") and "\n" not in task.question
    assert task.skills[0] == "masbench.depth"


def test_unbounded_upward():
    for axis, value in [("depth", 40), ("breadth", 25), ("parallel", 14), ("horizon", 20), ("robustness", 15)]:
        task = gen(axis, values=[value], n=2)[1]
        assert measured(graph(task), axis, task) == value
        assert all(int(v) < 1000 for v in task.answers)


def test_horizon_placeholders_match_dag():
    for task in gen("horizon", n=10):
        G = graph(task)
        placeholders = set(re.findall(r"\[answer_(\d+)\]", task.question))
        carried = {str(d["subtask"]) for n, d in G.nodes(data=True) if d["kind"] == "derived" and G.out_degree(n)}
        assert placeholders == carried and len(placeholders) == task.axis_value
        assert len(task.answers) == task.axis_value + 1  # every sub-task answer is scored
        assert f"Sub-task {task.axis_value + 1}:" in task.question
    final_only = gen("horizon", values=[3], n=3, report="final")
    assert all(len(t.answers) == 1 for t in final_only)


def test_robustness_notes_and_haystack():
    for task in gen("robustness", n=10):
        G = graph(task)
        notes = re.findall(r"verify the information before you take it — ([^.]*)\.", task.question)
        assert len(notes) == task.axis_value
        wrongs = [d["wrong"] for _, d in G.nodes(data=True) if d["wrong"] is not None]
        for note, wrong in zip(notes, wrongs):
            assert re.search(rf"\b{wrong}\b", note)
        assert all(d["wrong"] != d["value"] for _, d in G.nodes(data=True) if d["wrong"] is not None)
        assert task.meta["filler"] == 3 * task.axis_value
    no_filler = gen("robustness", values=[2], n=2, filler=0)
    assert all(t.meta["filler"] == 0 for t in no_filler)
    deeper = gen("robustness", values=[2], n=3, depth=5)
    assert all(nx.dag_longest_path_length(graph(t)) == 5 for t in deeper)


def test_parallel_lists_independent_problems():
    for task in gen("parallel", values=[3], n=5):
        assert "INDEPENDENT" in task.question and len(task.answers) == 3
        assert task.question.count("Problem ") == 3


def test_bare_style_and_params_validation():
    task = gen("depth", values=[1], n=1, style="bare")[0]
    assert task.question.startswith("What is ") and re.fullmatch(r"What is [\d a-z()]+\?", task.question)
    with pytest.raises(ValueError):
        gen("depth", values=[0], n=1)
    with pytest.raises(TypeError):
        gen("depth", values=[1], n=1, nonsense=True)
    with pytest.raises(ValueError):
        gen("robustness", values=[3], n=1, depth=2)


def test_tasks_round_trip_json():
    for axis in AXES:
        for task in gen(axis, n=2):
            again = TaskInstance.model_validate(json.loads(task.model_dump_json()))
            assert again == task


def test_singular_nouns():
    from masbench.bench.templates import noun
    assert [noun("cookies", 1), noun("candies", 1), noun("toy cars", 1), noun("apples", 2)] == \
        ["cookie", "candy", "toy car", "apples"]
    text = " ".join(t.question for axis in AXES for t in gen(axis, n=20))
    assert " 1 " in text
    for plural in ITEMS["test"]:
        for pattern in (f" 1 {plural}", f" 1 more {plural}", f" 1 fewer {plural}"):
            assert pattern not in text


def test_answer_slots_spell_out_up_to_three():
    from masbench.bench.axes import _answer_slots

    assert _answer_slots(1) == "<answer 1>"
    assert _answer_slots(3) == "<answer 1>, <answer 2>, <answer 3>"
    assert _answer_slots(4) == "<answer 1>, <answer 2>, ..., <answer 4>"
    assert _answer_slots(7) == "<answer 1>, <answer 2>, ..., <answer 7>"
    [task] = gen("parallel", values=[4], n=1)
    assert task.question.endswith('Give the 4 answers in order, as "Answer: <answer 1>, <answer 2>, ..., <answer 4>".')


def test_default_values_and_argument_errors():
    for axis in AXES:
        default = [1, 2, 3] if axis == "robustness" else [1, 2, 3, 4]
        assert sorted({t.axis_value for t in gen(axis, values=None, n=1)}) == default
    with pytest.raises(ValueError, match="axis values must be integers ≥ 1, got"):
        gen("breadth", values=[2, 0], n=1)
    with pytest.raises(ValueError, match="axis values must be integers ≥ 1, got"):
        gen("breadth", values=[], n=1)
    with pytest.raises(ValueError, match="n must be ≥ 1, got 0"):
        gen("breadth", values=[2], n=0)
    with pytest.raises(ValueError, match="style must be 'word' or 'bare', got 'poem'"):
        gen("parallel", values=[2], n=1, style="poem")


def test_random_stream_depends_on_axis_split_seed_value_and_index():
    def numbers(task: TaskInstance) -> list[int]:  # the DAG's values, in node order
        return [d["value"] for _, d in graph(task).nodes(data=True)]

    base = gen("depth", values=[2, 3], n=6)
    by_i = [numbers(t) for t in base[:6]]
    assert len({tuple(x) for x in by_i}) > 1  # instances at one value differ (index in the seed)
    # the same (value, index) under another value, seed, split or generator draws other numbers
    assert any(numbers(a)[:3] != numbers(b)[:3] for a, b in zip(base[:6], base[6:]))
    assert any(numbers(a) != numbers(b) for a, b in zip(base, gen("depth", values=[2, 3], n=6, seed=1)))
    assert any(numbers(a) != numbers(b) for a, b in zip(base, gen("depth", values=[2, 3], n=6, split="train")))
    assert any(numbers(a)[:3] != numbers(b)[:3] for a, b in zip(base, gen("robustness", values=[2, 3], n=6)))
