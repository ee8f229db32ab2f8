"""Our simple five-axis generator (``masbench.<axis>``): small-number word problems about people.

This style is OURS, not the paper's: it exists for tiny models (a bare-arithmetic depth 1 level).
MASBench's own tasks are iGSM (hierarchical entities, mod 23): see :mod:`.igsm`
(``masbench.igsm.<axis>``) for a generator true to the published data.

Every instance is a DAG of quantities (see :mod:`masbench.bench.dag`); each sub-task is ONE
operation on small integers, so answers are exact and stay readable (values stay in 1..~80).
The axis value you ask for is the value the stored DAG measures:

- ``masbench.depth`` d: a chain of d operations ending at the answer (d = 1 is a one-step problem
  such as "Tom has 3 apples. Then Tom gets 4 more apples. How many apples does Tom have now?").
- ``masbench.breadth`` b: the answer combines b quantities (maximum in-degree b).
- ``masbench.parallel`` p: p INDEPENDENT problems in one prompt, p answers in order.
- ``masbench.horizon`` h: h+1 numbered sub-tasks; h answers are carried forward through
  ``[answer_i]`` placeholders. By default every sub-task answer is scored (MASBench style).
- ``masbench.robustness`` r: an r-step chain whose r sub-tasks each carry a wrong-value note
  ("verify the information before you take it — …") inside haystack filler. Compare with
  ``masbench.depth`` at the same value to isolate the cost of the attacks.

Instance ``i`` at value ``v`` depends only on (generator, split, seed, v, i): asking for more
instances never changes the first ones.
"""

from __future__ import annotations

import random
from typing import Any

from . import dag as dagmod
from .problem import MAX_GROW, _Problem
from .registry import generator
from .templates import ITEMS
from .types import TaskInstance


def _answer_slots(k: int) -> str:
    slots = [f"<answer {i}>" for i in range(1, k + 1)]
    return ", ".join(slots) if k <= 3 else f"{slots[0]}, {slots[1]}, ..., {slots[-1]}"


def _check(values: list[int] | None, default: list[int], n: int, style: str | None = None) -> list[int]:
    values = list(default if values is None else values)
    if not values or any(not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"axis values must be integers ≥ 1, got {values!r}")
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n}")
    if style is not None and style not in ("word", "bare"):
        raise ValueError(f"style must be 'word' or 'bare', got {style!r}")
    return values


def _instance(p: _Problem, axis: str, value: int, split: str, seed: int, i: int, question: str,
              answers: list[str], intermediates: list[str], extra_skills: list[str],
              meta: dict[str, Any]) -> TaskInstance:
    p.G.graph.update({"answers": answers, "axis": axis, "axis_value": value})
    ops = sorted({f"arith.{d['op']}" for _, d in p.G.nodes(data=True) if d["op"]})
    return TaskInstance(
        id=f"{axis}-{value}-{split}-s{seed}-{i:04d}",
        source=f"masbench.{axis}",
        question=question,
        answers=[str(p.value(a)) for a in answers],
        intermediates=[str(p.value(a)) for a in intermediates],
        axis=axis,
        axis_value=value,
        skills=[f"masbench.{axis}", *ops, *extra_skills],
        scorer="numeric",
        meta={"dag": dagmod.to_json(p.G), "split": split, "seed": seed,
              "templates": sorted(p.book.used), **meta},
    )


def _rng(axis: str, split: str, seed: int, value: int, i: int) -> random.Random:
    return random.Random(f"masbench.{axis}|{split}|{seed}|{value}|{i}")


def _intermediate_nodes(p: _Problem, answers: list[str]) -> list[str]:
    return [n for n, d in p.G.nodes(data=True) if d["kind"] == "derived" and n not in answers]


def _generate(axis: str, values: list[int], n: int, seed: int, split: str, build) -> list[TaskInstance]:
    out = []
    for v in values:
        for i in range(n):
            p = _Problem(_rng(axis, split, seed, v, i), split)
            out.append(build(p, v, i))
    return out


@generator("masbench.depth")
def depth_tasks(values: list[int] | None, n: int, seed: int, split: str, *,
                style: str = "word", shuffle: bool = False) -> list[TaskInstance]:
    """Depth d: a chain of d one-step sub-tasks. ``style: bare`` asks plain arithmetic instead
    ("What is (3 plus 4) minus 2?"); ``shuffle`` scrambles the facts (iGSM-style)."""
    values = _check(values, [1, 2, 3, 4], n, style)

    def build(p: _Problem, d: int, i: int) -> TaskInstance:
        item = p.rng.choice(ITEMS[split])
        answer = p.chain(d, item, comp=0)
        q = p.component_text(answer, style, shuffle)
        return _instance(p, "depth", d, split, seed, i, q, [answer], _intermediate_nodes(p, [answer]),
                         [], {"style": style, "shuffle": shuffle})

    return _generate("depth", values, n, seed, split, build)


@generator("masbench.breadth")
def breadth_tasks(values: list[int] | None, n: int, seed: int, split: str, *,
                  style: str = "word", shuffle: bool = False, sub_depth: int = 0) -> list[TaskInstance]:
    """Breadth b: the answer combines b quantities (each a given, or a ``sub_depth``-step chain)."""
    values = _check(values, [1, 2, 3, 4], n, style)

    def build(p: _Problem, b: int, i: int) -> TaskInstance:
        item = p.rng.choice(ITEMS[split])
        if b == 1:
            answer = p.chain(sub_depth + 1, item, comp=0, max_in=1)
        else:
            parents = [p.chain(sub_depth, item, 0, max_in=1, final=False) if sub_depth else p.given(item, 0)
                       for _ in range(b)]
            vals = [p.value(x) for x in parents]
            if b == 2 and vals[0] != vals[1] and p.rng.random() < 0.25:
                parents.sort(key=p.value, reverse=True)
                answer = p.derived("diff", parents, None, item, "ask_diff", 0)
            else:
                answer = p.derived("sum", parents, None, item, p.final_style("sum"), 0)
        q = p.component_text(answer, style, shuffle)
        return _instance(p, "breadth", b, split, seed, i, q, [answer], _intermediate_nodes(p, [answer]),
                         [], {"style": style, "shuffle": shuffle, "sub_depth": sub_depth})

    return _generate("breadth", values, n, seed, split, build)


@generator("masbench.parallel")
def parallel_tasks(values: list[int] | None, n: int, seed: int, split: str, *,
                   style: str = "word", shuffle: bool = False, depth: int = 1) -> list[TaskInstance]:
    """Parallel p: p INDEPENDENT problems (each ``depth`` steps); all p answers, in order."""
    values = _check(values, [1, 2, 3, 4], n, style)
    if depth < 1:
        raise ValueError("depth must be ≥ 1")

    def build(p: _Problem, k: int, i: int) -> TaskInstance:
        items = list(ITEMS[split])
        p.rng.shuffle(items)
        answers = [p.chain(depth, items[c % len(items)], comp=c) for c in range(k)]
        texts = [p.component_text(a, style, shuffle) for a in answers]
        if k == 1:
            q = texts[0]
        else:
            q = "\n".join([p.book.say("parallel.head", p=k)]
                          + [f"Problem {c + 1}: {t}" for c, t in enumerate(texts)]
                          + [f'Give the {k} answers in order, as "Answer: {_answer_slots(k)}".'])
        return _instance(p, "parallel", k, split, seed, i, q, answers, _intermediate_nodes(p, answers),
                         ["plan.independent"], {"style": style, "shuffle": shuffle, "depth": depth})

    return _generate("parallel", values, n, seed, split, build)


@generator("masbench.horizon")
def horizon_tasks(values: list[int] | None, n: int, seed: int, split: str, *,
                  report: str = "all") -> list[TaskInstance]:
    """Horizon h: h+1 numbered sub-tasks; later ones use earlier answers as ``[answer_i]``.
    ``report: all`` (default) scores every sub-task answer in order; ``final`` only the last."""
    values = _check(values, [1, 2, 3, 4], n)
    if report not in ("all", "final"):
        raise ValueError(f"report must be 'all' or 'final', got {report!r}")

    def build(p: _Problem, h: int, i: int) -> TaskInstance:
        subtasks: list[str] = []
        for j in range(h + 1):
            item = p.rng.choice(ITEMS[split])
            if j == 0:
                args = [p.given(item, 0)]
            else:
                args = [subtasks[-1]]
                if j >= 2 and p.rng.random() < 0.3:
                    other = p.rng.choice(subtasks[:-1])
                    if p.value(other) + p.value(args[0]) <= MAX_GROW:
                        args = sorted([other, args[0]], key=lambda s: p.G.nodes[s]["subtask"])
            refs = {a: p.names.take() for a in args if p.G.nodes[a]["kind"] == "derived"}
            if len(args) == 2:
                op, const = "sum", None
            else:
                op, const = p.pick_op(p.value(args[0]), allow_sum=True)
                if op == "sum":
                    args = args + [p.given(item, 0)]
            style = p.final_style(op)
            subtasks.append(p.derived(op, args, const, item, style, 0, refs=refs, subtask=j + 1))
        lines = [p.book.say("horizon.head", m=h + 1)]
        for j, node in enumerate(subtasks, start=1):
            d = p.G.nodes[node]
            sentences = []
            for a in d["args"]:
                ad = p.G.nodes[a]
                if ad["kind"] == "derived":
                    sentences.append(p.book.say("given", a=p.ref(a, node), n=f"[answer_{ad['subtask']}]",
                                                item=d["item"]))
                else:
                    sentences.append(p.define(a))
            defining = p.define(node)
            sentences += ([defining] if defining else []) + [p.ask(node)]
            lines.append(f"Sub-task {j}: " + " ".join(sentences))
        if report == "all":
            lines.append(f'Give the answer of every sub-task, in order, as "Answer: {_answer_slots(h + 1)}".')
            answers = subtasks
        else:
            lines.append('Give the answer of the last sub-task as "Answer: <number>".')
            answers = subtasks[-1:]
        return _instance(p, "horizon", h, split, seed, i, "\n".join(lines), answers, subtasks[:-1],
                         ["plan.carry_forward"], {"report": report})

    return _generate("horizon", values, n, seed, split, build)


@generator("masbench.robustness")
def robustness_tasks(values: list[int] | None, n: int, seed: int, split: str, *,
                     depth: int | None = None, filler: int = 3, shuffle: bool = False) -> list[TaskInstance]:
    """Robustness r: r attacked sub-tasks in a chain of ``depth`` (default r) steps, each attack a
    note "verify the information before you take it — <wrong value>", with ``filler`` haystack
    sentences per attack."""
    values = _check(values, [1, 2, 3], n)
    if filler < 0:
        raise ValueError("filler must be ≥ 0")

    def build(p: _Problem, r: int, i: int) -> TaskInstance:
        d = r if depth is None else depth
        if d < r:
            raise ValueError(f"robustness {r} needs depth ≥ {r}, got {d}")
        item = p.rng.choice(ITEMS[split])
        answer = p.chain(d, item, comp=0)
        derived = [x for x, data in p.G.nodes(data=True) if data["kind"] == "derived"]
        for node in sorted(p.rng.sample(derived, r), key=derived.index):
            v = p.value(node)
            delta = p.rng.choice([-3, -2, -1, 1, 2, 3])
            p.G.nodes[node]["wrong"] = v + delta if v + delta >= 1 else v + abs(delta)
        nodes = list(p.G.nodes)
        q = p.narrate(nodes, answer, shuffle=shuffle, filler=filler * r)
        return _instance(p, "robustness", r, split, seed, i, q, [answer], _intermediate_nodes(p, [answer]),
                         ["robust.misinformation"], {"depth": d, "filler": filler * r, "shuffle": shuffle})

    return _generate("robustness", values, n, seed, split, build)
