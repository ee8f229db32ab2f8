"""One record per call (masbench/charge.py): the charge a call result makes once, the tallies that
add it, and a design run with sub-designs whose budget meter, node rows, result and gateway totals
all read the same charges — each expected figure worked out here from the script's own requests."""

from __future__ import annotations

import math
from typing import Any

import pytest

from masbench.bench.types import TaskInstance
from masbench.budget import BudgetMeter
from masbench.charge import Charge, Tally
from masbench.library import Library
from masbench.llm.result import CallResult
from masbench.llm.scripted import ScriptedGateway
from masbench.llm.sim import _prompt_tokens as sim_prompt_tokens
from masbench.llm.usage import Usage
from masbench.runtime import RunContext, run_design
from masbench.spec import Budget, DesignSpec
from masbench.store import NodeRow

LIB = Library()
TASK = TaskInstance(id="t", source="unit", question="What is 20 + 22?", answers=["42"])


def test_a_tally_adds_charges_and_merges_tallies() -> None:
    t = Tally()
    t.add(Charge(10, 3, 0.5, "m1", failed=True, cache_hit=True))
    t.add(Charge(1, 2, 0.25, "m2", failed=True, cache_hit=True))
    t.add(Charge(0, 0, 0.0, "m3"))  # an ok call, not from the cache, last
    assert (t.calls, t.prompt, t.completion, t.tokens, t.cost, t.failed, t.cache_hits, t.model) == \
        (3, 11, 5, 16, 0.75, 2, 2, "m3")
    u = Tally(model="mine")
    u.merge(t)
    u.merge(Tally(calls=3, prompt=4, completion=5, cost=1.0, failed=2, cache_hits=0, model="other"))
    assert (u.calls, u.prompt, u.completion, u.cost, u.failed, u.cache_hits, u.model) == \
        (6, 15, 10, 1.75, 4, 2, "mine")  # a merge keeps the tally's own model
    assert Tally.of([Charge(1, 1, 0.125), Charge(2, 0, 0.125, "x")]) == \
        Tally(calls=2, prompt=3, completion=1, cost=0.25, model="x")
    assert Tally.of([]) == Tally() and Charge(7, 8, 0.0).tokens == 15


def test_a_call_result_makes_its_charge_from_its_counted_usage() -> None:
    counted = Usage(prompt_fresh=5, cached_read=2, cache_write=1, completion_visible=3, reasoning=4)
    res = CallResult(text="x", model="prov/m", alias="m", call_id="c1", simulated=True, usage=counted,
                     counted=counted, cost_usd=0.5)
    assert res.charge == Charge(8, 7, 0.5, "prov/m", failed=False, cache_hit=False)
    worst = Usage(prompt_fresh=40, completion_visible=16)  # a usage-missing call: charged its worst case
    missing = CallResult(text="x", model="prov/m", alias="m", call_id="c2", simulated=False, usage=None,
                         counted=worst, cost_usd=0.03, error="usage_missing: …", cache_hit=True)
    assert missing.charge == Charge(40, 16, 0.03, "prov/m", failed=True, cache_hit=True)


def test_the_meter_counts_charges_and_its_search_share() -> None:
    m = BudgetMeter(Budget(per_task_tokens=100))
    assert m.reserve(50)
    m.settle(50, 0.0, Charge(20, 10, 0.5), search=True)
    m.add(Charge(1, 2, 0.25))
    assert m.spent == Tally(calls=2, prompt=21, completion=12, cost=0.75)
    assert m.search == Tally(calls=1, prompt=20, completion=10, cost=0.5)
    assert (m.tokens, m.counted, m.r_tokens, m.r_calls) == (33, 33, 0, 0)


def _design() -> DesignSpec:
    # a node, a fan-out of two sub-design runs (each a CoT: one call), a sub-design run of a
    # two-node design (two calls) and an aggregator: 1 + 2 + 2 + 1 = 6 calls
    return DesignSpec.model_validate({"name": "charged", "output": "agg", "nodes": {
        "draft": {"agent": "cot-solver"},
        "subs": {"design": "cot", "repeat": 2},
        "deep": {"design": "self-refine", "params": {"max_rounds": 1}},
        "agg": {"agent": "aggregator", "from": ["draft", "subs", "deep"]}}})


async def test_one_run_counts_each_call_once_in_the_meter_the_nodes_the_result_and_the_gateway() -> None:
    seen: list[dict[str, Any]] = []

    def script(info: dict[str, Any]) -> str:
        seen.append(info)
        return f"Working.\nAnswer: {len(seen)}"
    gw = ScriptedGateway(script)
    rows: list[Any] = []
    ctx = RunContext(gateway=gw, library=LIB, budget=Budget(per_task_tokens=10**9), node_sink=rows.append,
                     tags={"run_id": "r", "design": "charged", "task_id": "t", "seed": 0, "purpose": "design"})
    r = await run_design(_design(), TASK, ctx)
    # what each call was charged, from the script's view of it: the simulator's prompt formula,
    # ~4 characters a completion token, $1 / $2 per million
    prompt = [sim_prompt_tokens(i["messages"]) for i in seen]
    completion = [max(1, math.ceil(len(f"Working.\nAnswer: {n}") / 4)) for n in range(1, len(seen) + 1)]
    cost = sum(p * 1e-6 + c * 2e-6 for p, c in zip(prompt, completion))
    assert len(seen) >= 6 and r.status in ("ok", "degraded")
    assert (r.calls, r.prompt_tokens, r.completion_tokens) == (len(seen), sum(prompt), sum(completion))
    assert r.tokens == sum(prompt) + sum(completion) and r.cost_usd == pytest.approx(cost)
    budget = r.detail["budget"]
    assert (budget["calls"], budget["tokens"]) == (r.calls, r.tokens) and budget["usd"] == pytest.approx(cost)
    t = gw.totals
    assert (t.calls, t.prompt, t.completion, t.failed, t.cache_hits) == (len(seen), sum(prompt), sum(completion), 0, 0)
    stats = gw.stats
    assert (stats["calls"], stats["prompt_tokens"], stats["completion_tokens"], stats["errors"]) == \
        (len(seen), sum(prompt), sum(completion), 0)
    assert stats["cost_usd"] == pytest.approx(cost)
    # (node, calls, tokens, cost) of each node row
    nodes = [(str(x.node), x.calls or 0, x.tokens or 0, x.cost_usd or 0.0) for x in rows if isinstance(x, NodeRow)]
    top = [x for x in nodes if "/" not in x[0]]  # a sub-design node's row holds its sub-run's calls
    inner = [x for x in nodes if "/" in x[0]]
    assert sum(x[1] for x in top) == len(seen) and sum(x[2] for x in top) == r.tokens
    assert sum(x[3] for x in top) == pytest.approx(cost)
    assert {x[0] for x in top} == {"draft", "subs", "deep", "agg"}
    subs = [x for x in top if x[0] == "subs"]
    assert len(subs) == 2 and all(x[1] == 1 for x in subs)  # each branch: its own CoT run, one call
    deep = next(x for x in top if x[0] == "deep")
    assert deep[1] == sum(x[1] for x in inner if x[0].startswith("deep/")) >= 2
    assert sum(x[1] for x in inner) == len(seen) - 2  # every call but draft's and agg's is a sub-run's
