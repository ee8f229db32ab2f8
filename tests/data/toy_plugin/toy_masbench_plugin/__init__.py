"""A toy masbench plugin: each object below is named by an entry point in pyproject.toml, so an
installed copy works in ``masbench run`` with nothing imported by hand.

Tasks are "What is a plus b?" (the ``toy-pairs`` reader reads "a b" lines, the ``toy-sums`` format
makes the tasks, the ``toy.pairs`` generator makes them from a seed), scored by ``toy-int``. The
``offbyone`` provider answers a + b - 1, or asks the ``toy_add`` tool when the agent has it; the
``plus`` op adds ``params.add`` to its input's answer; ``toy_int`` makes an answer an integer."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from masbench.bench import RowGroup, Score, TaskInstance
from masbench.llm import Attempt, ModelBackend, Reply
from masbench.runtime import Op
from masbench.runtime.ops.base import Getter, Node
from masbench.runtime.values import Val
from masbench.text import normalize_answer


def read_pairs(path: str, source: Any, base_dir: Path | None) -> Iterator[RowGroup]:
    """Lines ``a b`` → rows ``{"a", "b"}``."""
    p = Path(path) if Path(path).is_absolute() or base_dir is None else Path(base_dir) / path
    pairs = [ln.split() for ln in p.read_text().splitlines() if ln.strip()]
    yield RowGroup([(p, i, {"a": int(a), "b": int(b)}) for i, (a, b) in enumerate(pairs, start=1)], str(p),
                   source.split, files=[p])


def _task(label: str, i: int, a: int, b: int) -> TaskInstance:
    return TaskInstance(id=f"{label}-{i}", source=label, question=f"What is {a} plus {b}?", answers=[str(a + b)],
                        scorer="toy-int")


def sums_format(group: RowGroup, source: Any, label: str) -> list[TaskInstance]:
    return [_task(group.label(label), i, row["a"], row["b"]) for _where, i, row in group.rows]


def pair_tasks(values: list[int] | None, n: int, seed: int, split: str, **params: Any) -> list[TaskInstance]:
    rng = random.Random(seed)
    return [_task("toy.pairs", i, rng.randint(1, 50), rng.randint(1, 50)) for i in range(1, n + 1)]


def int_scorer(task: TaskInstance, predicted: list[str]) -> Score:
    got = [normalize_answer(p) for p in predicted]
    ok = bool(got) and got[0] == task.answers[0]
    return Score(correct=ok, partial=float(ok), predicted=got, gold=list(task.answers), positions=[ok])


class OffByOne(ModelBackend):
    """The ``offbyone`` provider: a + b - 1, or a call of ``toy_add`` and then its observation."""

    async def __call__(self, a: Attempt) -> Reply:
        text = "\n".join(str(m.get("content", "")) for m in a.messages)
        last = str(a.messages[-1].get("content", ""))
        if "Observation" in last:
            return Reply(f"Final Answer: {re.findall(r'-?[0-9]+', last)[-1]}", 30, 5, finish_reason="stop")
        m = re.search(r"What is ([0-9]+) plus ([0-9]+)[?]", text)
        assert m is not None, text
        x, y = int(m.group(1)), int(m.group(2))
        if "toy_add" in text:
            return Reply(f'Action: toy_add({{"a": {x}, "b": {y}}})', 30, 9, finish_reason="stop")
        return Reply(f"Answer: {x + y - 1}", 13, 4, finish_reason="stop")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PlusNode(Node):
    """A compiled ``plus`` node: its input and the number to add."""

    source: Getter
    add: int

    async def run(self, sc: Any, env: Any, i: int | None, st: Any, calls: Any) -> Val:
        n = int(self.source(env).answers[0]) + self.add
        return Val(text=str(n), answers=(normalize_answer(str(n)),))


class Plus(Op):
    """The ``plus`` op: its input's answer plus ``params.add``; no model call."""

    def check(self, an: Any, info: Any) -> None:
        if not isinstance(info.spec.params.get("add"), int):
            an.at(info, ("params",), "a plus node needs an integer `params.add`")

    def compile(self, b: Any, info: Any) -> PlusNode:
        _name, get = next((n, g) for n, g in b.input_vals(info) if n != "question")
        return PlusNode(**b.base(info), source=get, add=b.node_params(info)["add"])

    def weight(self, node: Any, w: Any) -> int:
        return 0


PLUS = Plus()


def toy_add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def as_int(value: Any = None, *_: Any, **__: Any) -> int:
    """An answer as an integer."""
    return int(str(value).strip())
