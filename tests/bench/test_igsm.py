"""The iGSM-style generator (masbench/bench/igsm.py) piece by piece: each operation mod 23 worked by
hand, and every generated question solved from its TEXT alone by an independent reader (the published
rules: mod 23, unmentioned parameters are 0, ``[answerN]`` carries answers, docs/formats.md "MASBench")."""

from __future__ import annotations

import re

import networkx as nx
import pytest
from recording_rng import RecordingRandom  # tests/recording_rng.py

from masbench.bench import GENERATORS, dag_from_json
from masbench.bench.igsm import _FILLER, _Build, _parallel, apply, evaluate

AXES = {"depth": (2, 12), "breadth": (2, 8), "horizon": (2, 8), "parallel": (2, 8), "robustness": (2, 6)}


# ----- the operations, by hand ------------------------------------------------------------------------
def test_operations_mod_23_by_hand():
    assert apply("const", [], 30) == 7  # 30 − 23
    assert apply("const", [], None) == 0 and apply("default", [], None) == 0 and apply("default", [], 5) == 5
    assert apply("add_k", [20], 5) == 2  # 25 − 23
    assert apply("times_k", [5], 7) == 12  # 35 − 23
    assert apply("sum", [10, 20], None) == 7  # 30 − 23
    assert apply("sum", [10, 20, 4], 5) == 16  # 39 − 23
    assert apply("diff", [3, 10], None) == 16  # −7 + 23
    assert apply("diff", [10, 3], None) == 7
    assert apply("prod", [5, 6, 7], None) == 3  # 210 = 9·23 + 3
    assert apply("prod", [22, 22], None) == 1  # (−1)·(−1)
    assert apply("needle", [], 4567) == 4567 and apply("needle", [], None) == 0  # not reduced mod 23
    with pytest.raises(ValueError, match="operation 'add_k' needs a constant"):
        apply("add_k", [3], None)
    with pytest.raises(ValueError, match="operation 'times_k' needs a constant"):
        apply("times_k", [3], None)
    with pytest.raises(ValueError, match="unknown iGSM op 'pow'"):
        apply("pow", [2, 3], None)


def test_evaluate_a_hand_built_dag():
    # a = 19, b = a + 9 = 28 → 5, c = 0 (never mentioned), d = b − c = 5, e = d·a = 95 → 95 − 92 = 3
    G = nx.DiGraph()
    for name, op, args, const in [("e", "prod", ["d", "a"], None), ("a", "const", [], 19), ("c", "default", [], 0),
                                  ("b", "add_k", ["a"], 9), ("d", "diff", ["b", "c"], None)]:
        G.add_node(name, op=op, args=args, const=const)
        for x in args:
            G.add_edge(x, name)
    assert evaluate(G) == {"a": 19, "b": 5, "c": 0, "d": 5, "e": 3}


# ----- every question solved from its text -------------------------------------------------------------
_STMT = re.compile(r"The number of (each [\w-]+'s [\w-]+) equals ([^.]*)\.")
_REF = r"(each [\w-]+'s [\w-]+|\[answer\d+\])"
_ASK = re.compile(r"How many ([\w-]+) does each ([\w-]+) have\?")


def solve_text(question: str) -> list[int]:
    """The answers, read from the question text only: statements in any order, mod 23, 0 by default."""
    parts = re.split(r"\n\nProblem \d+: ", "\n\n" + question)[1:] if "\n\nProblem 1: " in question else [question]
    answers: list[int] = []
    for part in parts:
        magic = re.search(r"The magic number is (\d+)\.", part)
        if magic:
            answers.append(int(magic.group(1)))
            continue
        rules = {m.group(1): m.group(2) for m in _STMT.finditer(part)}

        def value(ref: str) -> int:
            m = re.fullmatch(r"\[answer(\d+)\]", ref)
            if m:
                return answers[int(m.group(1)) - 1]
            if ref not in rules:
                return 0
            body = rules[ref]
            if re.fullmatch(r"\d+", body):
                return int(body) % 23
            m = re.fullmatch(rf"(\d+) more than {_REF}", body)
            if m:
                return (int(m.group(1)) + value(m.group(2))) % 23
            m = re.fullmatch(rf"(\d+) times {_REF}", body)
            if m:
                return int(m.group(1)) * value(m.group(2)) % 23
            m = re.fullmatch(r"the (sum|difference|product) of (.+)", body)
            assert m, body
            xs = [value(r) for r in re.findall(_REF, m.group(2))]
            assert m.group(2) == ", ".join(re.findall(_REF, m.group(2))[:-1]) + (" and " if len(xs) > 1 else "") + \
                re.findall(_REF, m.group(2))[-1], body
            if m.group(1) == "sum":
                return sum(xs) % 23
            if m.group(1) == "difference":
                assert len(xs) == 2
                return (xs[0] - xs[1]) % 23
            out = 1
            for x in xs:
                out = out * x % 23
            return out

        [(item, owner)] = _ASK.findall(part)
        answers.append(value(f"each {owner}'s {item}"))
    return answers


@pytest.fixture
def tasks(axis: str) -> list:
    """Six tasks per published value (function scope: mutmut credits a generator call to the test
    that triggered it, so a module-scoped fixture would make only the first test cover it)."""
    return GENERATORS[f"masbench.igsm.{axis}"](None, 6, 3, "test")


@pytest.mark.parametrize("axis", list(AXES))
def test_answers_solve_from_the_question_text(tasks, axis):
    for t in tasks:
        assert solve_text(t.question) == [int(a) for a in t.answers], t.id
        assert t.meta["gold"] == t.answers


@pytest.mark.parametrize("axis", list(AXES))
def test_task_fields(tasks, axis):
    lo, hi = AXES[axis]
    ts = tasks
    assert [t.axis_value for t in ts] == [v for v in range(lo, hi + 1) for _ in range(6)]
    t = ts[7]
    assert t.id == f"igsm-{axis}-{lo + 1}-test-s3-0001" and t.source == f"masbench.igsm.{axis}"
    assert t.axis == axis and t.scorer == "masbench" and t.skills == [f"masbench.{axis}", "math.igsm", "arith.mod23"]
    assert t.meta["split"] == "test" and t.meta["seed"] == 3 and t.meta["generator"] == "igsm"
    for t in ts:
        G = dag_from_json(t.meta["dag"])
        assert G.graph["axis"] == axis and G.graph["axis_value"] == t.axis_value and G.graph["mod"] == 23
        # intermediates: the derived values that feed another node, answers left out (DAG order)
        inter = [str(G.nodes[n]["value"]) for n in G if G.nodes[n]["kind"] == "derived"
                 and n not in G.graph["answers"] and G.out_degree(n) > 0]
        assert t.intermediates == inter, t.id
        assert all(G.nodes[n]["kind"] == ("given" if G.nodes[n]["op"] in ("const", "default", "needle") else "derived")
                   for n in G)
        assert all(set(G.predecessors(n)) == set(G.nodes[n]["args"]) for n in G)


def test_constants_defaults_and_shuffling_over_many_tasks():
    ts = [t for axis in ("depth", "breadth") for t in GENERATORS[f"masbench.igsm.{axis}"](None, 20, 0, "test")]
    consts, ks, defaults, givens, shuffled = [], [], 0, 0, 0
    for t in ts:
        G = dag_from_json(t.meta["dag"])
        for n in G:
            d = G.nodes[n]
            if d["op"] == "const":
                consts.append(d["const"])
            if d["op"] in ("add_k", "times_k"):
                ks.append(d["const"])
            defaults += d["op"] == "default"
            givens += d["op"] in ("const", "default")
        said = [m.group(1) for m in _STMT.finditer(t.question)]
        made = [n for n in G if G.nodes[n]["op"] != "default"]
        assert sorted(said) == sorted(made)
        shuffled += said != made
    assert min(consts) == 0 and max(consts) == 22  # given values drawn from 0..22
    assert min(ks) == 1 and max(ks) == 22  # constants of add_k / times_k from 1..22
    assert 0.08 < defaults / givens < 0.25  # ~15% of the parameters are never mentioned
    assert shuffled > len(ts) // 2  # statements are shuffled, not in the order they were made
    ops = {G.nodes[n]["op"] for t in ts for G in [dag_from_json(t.meta["dag"])] for n in G}
    assert ops == {"const", "default", "add_k", "times_k", "sum", "diff", "prod"}


def test_breadth_parents_are_givens_or_one_step_and_parallel_chains_are_short():
    seen_given = seen_step = 0
    for t in GENERATORS["masbench.igsm.breadth"]([5], 20, 0, "test"):
        G = dag_from_json(t.meta["dag"])
        [answer] = G.graph["answers"]
        assert G.nodes[answer]["op"] == "sum" and len(G.nodes[answer]["args"]) == 5
        for p in G.nodes[answer]["args"]:
            kind = G.nodes[p]["kind"]
            seen_given += kind == "given"
            seen_step += kind == "derived"
            if kind == "derived":
                assert all(G.nodes[a]["kind"] == "given" for a in G.nodes[p]["args"])
    assert seen_given > 10 and seen_step > 10
    lengths = set()
    for t in GENERATORS["masbench.igsm.parallel"]([4], 20, 0, "test"):
        G = dag_from_json(t.meta["dag"])
        answers = G.graph["answers"]
        assert G.nodes[answers[0]]["op"] == "needle" and 1000 <= G.nodes[answers[0]]["value"] <= 9999
        for a in answers[1:]:
            lengths.add(len(nx.ancestors(G, a) & {n for n in G if G.nodes[n]["kind"] == "derived"}) + 1)
        assert len(answers) == 4
        hay = t.question.split("Problem 2:")[0]
        assert sum(hay.count(f) for f in _FILLER["test"]) == 8 and hay.count("The magic number is") == 1
    assert lengths == {1, 2}  # each independent problem is a 1- or 2-step chain


def test_robustness_notes_carry_wrong_values_on_the_chain_steps_inside_filler():
    for t in GENERATORS["masbench.igsm.robustness"]([2, 4], 10, 0, "test"):
        G = dag_from_json(t.meta["dag"])
        truth = evaluate(G)
        notes = re.findall(r"Verify the information before you take it — "
                           r"the number of (each [\w-]+'s [\w-]+) is (\d+)\.", t.question)
        assert len(notes) == t.axis_value
        for node, wrong in notes:
            assert G.nodes[node]["kind"] == "derived" and 0 <= int(wrong) < 23 and int(wrong) != truth[node]
            assert G.nodes[node]["wrong"] == int(wrong)
        statements = len(_STMT.findall(t.question))
        assert sum(t.question.count(f) for f in _FILLER["test"]) == 2 * statements  # 2 filler after each


def test_horizon_carries_each_answer_into_the_next_problem():
    for t in GENERATORS["masbench.igsm.horizon"]([3], 5, 0, "test"):
        parts = t.question.split("\n\n")
        assert parts[0].startswith("Solve the problems in order; [answerN] stands for the answer to Problem N.")
        problems = [p for p in parts if p.startswith("Problem ")]
        assert [p.split(":")[0] for p in problems] == ["Problem 1", "Problem 2", "Problem 3", "Problem 4"]
        assert "[answer" not in problems[0]
        for k in range(1, 4):
            assert f"[answer{k}]" in problems[k]
            assert all(f"[answer{j}]" not in problems[k] for j in range(1, 5) if j != k)
        assert parts[-1] == "### Final Answers\n" + "\n".join(f"Problem {i}: \\boxed{{…}}" for i in range(1, 5))
        G = dag_from_json(t.meta["dag"])
        assert [G.nodes[a]["problem"] for a in G.graph["answers"]] == [1, 2, 3, 4]


def test_generator_arguments_and_splits():
    gen = GENERATORS["masbench.igsm.depth"]
    with pytest.raises(ValueError, match="takes no params"):
        gen([2], 1, 0, "test", style="bare")
    with pytest.raises(ValueError, match="split must be one of"):
        gen([2], 1, 0, "dev")
    for bad in ([1], [13], [2.0]):
        with pytest.raises(ValueError, match=r"values must be 2\.\.12 \(published range\)"):
            gen(bad, 1, 0, "test")  # pyright: ignore[reportArgumentType]  # a float value, on purpose
    assert [t.axis_value for t in gen([12, 2], 1, 0, "test")] == [12, 2]
    a = [t.model_dump_json() for t in gen([3], 3, 1, "test")]
    assert a == [t.model_dump_json() for t in gen([3], 3, 1, "test")]
    assert a[:2] == [t.model_dump_json() for t in gen([3], 2, 1, "test")]
    assert all(x != y for x, y in zip(a, (t.model_dump_json() for t in gen([3], 3, 2, "test"))))
    train = gen([3], 3, 1, "train")
    assert all(solve_text(t.question) == [int(x) for x in t.answers] for t in train)
    assert "Patella" not in " ".join(t.question for t in train)


def test_components_number_the_independent_problems():
    # parallel: the needle is component 0 and problem k's chain is component k − 1; every other axis
    # is one component, 0 (horizon problems are chained through [answerN])
    for axis in AXES:
        for t in GENERATORS[f"masbench.igsm.{axis}"]([4], 3, 0, "test"):
            G = dag_from_json(t.meta["dag"])
            if axis != "parallel":
                assert {G.nodes[n]["comp"] for n in G} == {0}, t.id
                continue
            for k, a in enumerate(G.graph["answers"]):
                assert {G.nodes[n]["comp"] for n in nx.ancestors(G, a) | {a}} == {k}, t.id
            assert len({G.nodes[n]["comp"] for n in G}) == nx.number_weakly_connected_components(G) == 4


def test_parallel_layout_numbering_and_haystack_position():
    positions = []
    ts = GENERATORS["masbench.igsm.parallel"]([2], 900, 0, "test")
    fill = set(_FILLER["test"])
    for t in ts:
        assert t.question.startswith("Each problem is INDEPENDENT. Note: all calculation is done mod 23")
        assert t.question.endswith("\n\nGive each answer in \\boxed{}, separated by blank lines.")
        p1, p2 = t.question.split("\n\n")[1:3]
        assert p2.startswith("Problem 2: The number of")
        m = re.fullmatch(r"Problem 1: (.+) What is the magic number\?", p1)
        assert m, p1
        sentences = re.findall(r"[^.]+\.", m.group(1))
        assert " ".join(s.strip() for s in sentences) == m.group(1)  # single spaces between sentences
        assert len(sentences) == 9 and sum(s.strip() in fill for s in sentences) == 8
        [pos] = [i for i, s in enumerate(sentences) if s.strip().startswith("The magic number is ")]
        positions.append(pos)
    # the needle is inserted uniformly among the 8 filler sentences: each of the 9 places 1/9 (100 of 900)
    counts = [positions.count(i) for i in range(9)]
    assert all(60 < c < 140 for c in counts), counts
    for t in GENERATORS["masbench.igsm.parallel"]([5], 3, 0, "test"):
        assert re.findall(r"^Problem (\d+): ", t.question, re.MULTILINE) == ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize("k", range(3))
def test_parallel_magic_number_is_drawn_from_the_four_digit_numbers(k):
    # the needle's magic number is the parallel layout's first draw, uniform on 1000..9999 (randint(1000, 9999)
    # is randrange(1000, 10000)); the haystack states exactly the number drawn and the needle node holds it
    rng = RecordingRandom(f"magic|{k}")
    b = _Build(rng, "test")
    question, answers = _parallel(b, 2)
    (args, magic) = rng.draws[0]
    assert args == (1000, 10000) and 1000 <= magic <= 9999
    assert f"The magic number is {magic}." in question
    assert b.G.nodes[answers[0]]["value"] == magic and b.G.nodes[answers[0]]["op"] == "needle"


def test_each_problem_states_only_its_own_parameters():
    for axis, v in (("horizon", 4), ("parallel", 4)):
        for t in GENERATORS[f"masbench.igsm.{axis}"]([v], 5, 0, "test"):
            parts = [p for p in t.question.split("\n\n") if p.startswith("Problem ")]
            said = [set(m.group(1) for m in _STMT.finditer(p)) for p in parts]
            G = dag_from_json(t.meta["dag"])
            made = [n for n in G if G.nodes[n]["op"] not in ("default", "needle")]
            assert sum(len(s) for s in said) == len(made) == len(set().union(*said)), t.id  # each stated once


def test_stored_nodes_statement_layout_and_wrong_values():
    fill = _FILLER["test"]
    left = right = 0
    for axis in ("depth", "breadth", "horizon", "parallel"):
        for t in GENERATORS[f"masbench.igsm.{axis}"]([6], 15, 1, "test"):
            G = dag_from_json(t.meta["dag"])
            assert all(G.nodes[n]["wrong"] is None for n in G)  # no note outside the robustness axis
            assert all(G.nodes[n]["const"] == 0 for n in G if G.nodes[n]["op"] == "default")
            if axis != "parallel":  # haystack filler only in parallel's problem 1 (and robustness)
                assert not any(f in t.question for f in fill), t.id
            if axis == "depth":  # statements joined by single spaces, then the question
                assert re.fullmatch(r"The number of [^.]*\.( The number of [^.]*\.)* "
                                    r"How many [\w-]+ does each [\w-]+ have\? Note: .*", t.question), t.id
                # a two-argument step puts the chain's running value first or second, at random
                for n in G:
                    d = G.nodes[n]
                    if d["op"] in ("sum", "diff", "prod"):
                        derived = [i for i, a in enumerate(d["args"]) if G.nodes[a]["kind"] == "derived"]
                        left += derived == [0]
                        right += derived == [1]
    assert left > 10 and right > 10
    # the wrong value of a note is any residue but the truth: offsets 1 and 22 (= −1) both occur
    offsets = set()
    for t in GENERATORS["masbench.igsm.robustness"]([6], 70, 0, "test"):
        G = dag_from_json(t.meta["dag"])
        offsets |= {(G.nodes[n]["wrong"] - G.nodes[n]["value"]) % 23 for n in G if G.nodes[n]["wrong"] is not None}
    assert offsets == set(range(1, 23))
