"""The three extension seams at once, from outside the package: this module registers a toy op, a
toy task format and a backend for a made-up provider through the public registries (no file under
masbench/ is edited), then runs one suite whose design uses the op, whose tasks come from the
format, and which mixes the toy provider with a ``sim/`` model. The results, calls and nodes rows
are checked against values worked out here, independently of the code."""

from __future__ import annotations

from dataclasses import dataclass

import json
import re
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pytest

from masbench.bench import FORMATS, RowGroup, TaskInstance
from masbench.harness import RunOptions, run_suite
from masbench.llm import BACKENDS, Attempt, ModelBackend, Reply
from masbench.runtime import OPS, Op
from masbench.runtime.ops.base import Binding, Calls, Getter, Node, Weigher
from masbench.runtime.values import Val
from masbench.spec.design import NodeSpec
from masbench.text import normalize_answer

ROWS = [{"a": 3, "b": 4}, {"a": 10, "b": 7}, {"a": 21, "b": 21}, {"a": 0, "b": 5}]
PROMPT_TOKENS, COMPLETION_TOKENS = 13, 4
IN_PER_M, OUT_PER_M = 2.0, 8.0
TOY_COST = (PROMPT_TOKENS * IN_PER_M + COMPLETION_TOKENS * OUT_PER_M) / 1e6


def sums_format(group: RowGroup, source: Any, label: str) -> list[TaskInstance]:
    """Rows ``{"a", "b"}`` → "What is a plus b?" with the sum as gold."""
    return [TaskInstance(id=f"{group.label(label)}-{i}", source=group.label(label),
                         question=f"What is {row['a']} plus {row['b']}?", answers=[str(row["a"] + row["b"])],
                         scorer="exact", skills=["arith.add"])
            for _where, i, row in group.rows]


class OffByOne(ModelBackend):
    """The ``offbyone`` provider: answers a + b - 1 to "What is a plus b?" (fixed token counts)."""

    seen: ClassVar[list[str]] = []

    async def __call__(self, a: Attempt) -> Reply:
        text = a.messages[-1]["content"]
        x, y = map(int, re.search(r"What is (\d+) plus (\d+)\?", text).groups())
        OffByOne.seen.append(text)
        return Reply(f"Answer: {x + y - 1}", PROMPT_TOKENS, COMPLETION_TOKENS, finish_reason="stop")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PlusNode(Node):
    """A compiled ``plus`` node: its input and the number to add."""

    source: Getter
    add: int

    async def run(self, sc: Any, env: Any, i: int | None, st: Any, calls: Calls) -> Val:
        n = int(self.source(env).answers[0]) + self.add
        return Val(text=str(n), answers=(normalize_answer(str(n)),))


class Plus(Op):
    """The ``plus`` op: its input's answer plus ``params.add``; makes no model call."""

    def check(self, an: Any, info: Any) -> None:
        if not isinstance(info.spec.params.get("add"), int):
            an.at(info, ("params",), "a plus node needs an integer `params.add`")

    def compile(self, b: Binding, info: Any) -> PlusNode:
        _name, get = next((n, g) for n, g in b.input_vals(info) if n != "question")
        return PlusNode(**b.base(info), source=get, add=b.node_params(info)["add"])

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        return 0


@pytest.fixture
def toys():
    FORMATS.register("sums", sums_format)
    BACKENDS.register("offbyone", OffByOne)
    OPS.add("plus", Plus())
    OffByOne.seen.clear()
    yield
    FORMATS.remove("sums")
    BACKENDS.remove("offbyone")
    OPS.remove("plus")


def world(tmp: Path) -> Path:
    for d in ("agents", "baselines", "orchestrators", "tasks", "data"):
        (tmp / d).mkdir()
    (tmp / "data" / "sums.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp / "agents" / "guesser.yaml").write_text(
        "name: guesser\nmodel: toy\nprompt: |\n  {question}\n  End with \"Answer: <n>\".\nmax_tokens: 16\n")
    (tmp / "orchestrators" / "fixup.yaml").write_text(
        "name: fixup\nnodes:\n  guess: {agent: guesser}\n"
        "  fix:\n    kind: plus\n    from: guess\n    params: {add: 1}\noutput: fix\n")
    suite = tmp / "tasks" / "seams.yaml"
    suite.write_text(
        "name: seams\nmodels:\n  default: sim/p60\n"
        f"  toy: {{id: offbyone/v1, input_usd_per_mtok: {IN_PER_M}, output_usd_per_mtok: {OUT_PER_M}}}\n"
        "tasks:\n  - {reader: jsonl, path: ../data/sums.jsonl, format: sums}\n"
        "designs: [cot, fixup]\ncot_sc: {k_max: 2, bootstrap: 50}\nbudget: {per_task_tokens: 20000}\n"
        f"cache: false\nstore: {tmp / 'runs' / 'seams.duckdb'}\n")
    return suite


@pytest.mark.slow
async def test_a_suite_uses_a_toy_op_format_and_provider_beside_sim(tmp_path: Path, toys) -> None:
    s = await run_suite(RunOptions(suite=str(world(tmp_path)), lib=[tmp_path]))
    assert s.failed == 0 and s.total_cells == len(ROWS) * 3  # cot, fixup and the CoT-SC pool, one seed
    con = duckdb.connect(str(s.store), read_only=True)

    def q(sql: str) -> list[tuple]:
        return con.execute(sql, [s.run_id]).fetchall()

    fix = q("SELECT task_id, answer, gold, correct, calls, tokens, cost_usd, status, simulated FROM results "
            "WHERE run_id = ? AND design = 'fixup' ORDER BY task_id")
    cot = q("SELECT count(*), bool_and(simulated) FROM results WHERE run_id = ? AND design = 'cot'")
    calls = q("SELECT design, purpose, model, simulated, prompt_tokens, completion_tokens, cost_usd, node "
              "FROM calls WHERE run_id = ? ORDER BY design, task_id")
    nodes = q("SELECT task_id, node, op, calls, tokens, cost_usd, output FROM nodes "
              "WHERE run_id = ? AND design = 'fixup' ORDER BY task_id, node")
    con.close()
    # the tasks are the format's, in the file's order; the op turned every off-by-one guess right
    golds = {f"sums-{i}": str(r["a"] + r["b"]) for i, r in enumerate(ROWS, start=1)}
    assert [(r[0], r[1], r[2], r[3]) for r in fix] == [(t, g, g, True) for t, g in sorted(golds.items())]
    assert all(r[4:8] == (1, PROMPT_TOKENS + COMPLETION_TOKENS, pytest.approx(TOY_COST), "ok") for r in fix)
    assert all(r[8] is True for r in fix)  # the suite has a sim/ model: its numbers are labelled simulated
    assert cot == [(len(ROWS), True)]
    toy = [c for c in calls if c[2] == "offbyone/v1"]
    assert len(toy) == len(ROWS) == len(OffByOne.seen)
    assert all(c[0] == "fixup" and c[1] == "design" and c[3] is False and c[7] == "guess" for c in toy)
    assert all((c[4], c[5]) == (PROMPT_TOKENS, COMPLETION_TOKENS) and c[6] == pytest.approx(TOY_COST) for c in toy)
    sim = [c for c in calls if c[2] != "offbyone/v1"]
    assert {c[2] for c in sim} == {"sim/p60"} and all(c[3] is True and c[0] != "fixup" for c in sim)
    assert {c[1] for c in sim} == {"design", "pool"}
    by_task: dict[str, dict[str, tuple]] = {}
    for n in nodes:
        by_task.setdefault(n[0], {})[n[1]] = n[2:]
    assert sorted(by_task) == sorted(golds)
    for t, g in golds.items():
        assert by_task[t]["guess"][:3] == ("agent", 1, PROMPT_TOKENS + COMPLETION_TOKENS)
        assert by_task[t]["fix"][:3] == ("plus", 0, 0) and by_task[t]["fix"][4] == g
