"""Every library design validates and runs end to end on a sim/ model, with the call counts its
YAML implies."""

from __future__ import annotations

import pytest

from masbench.bench.types import TaskInstance
from masbench.library import Library
from masbench.llm import Gateway
from masbench.runtime import RunContext, run_design, check_design
from masbench.spec.model import ModelSpec, SimProfile, TokenDist

BASELINES = ["cot", "cot-sc", "self-refine", "reflexion", "debate", "step-back", "quality-diversity",
             "role-assignment"]
ORCHESTRATORS = ["planner-workers", "generator-verifier-refiner", "decompose-calculator-aggregate",
                 "mixture-of-agents", "parallel-distill-refine", "smfr-expert"]
TASK = TaskInstance(id="t1", source="unit", question="Tom has 3 apples and buys 4 more. How many apples?",
                    answers=["7"], skills=["arith.add"])


def profile(acc: float = 1.0, **extra: float) -> ModelSpec:
    # Short completions (never truncated by max_tokens), so structured outputs never need a retry.
    return ModelSpec(id="sim/unit", sim=SimProfile(accuracy={"default": acc, **extra},
                                                   completion_tokens=TokenDist(mean=60, sd=10)))


def make(model: ModelSpec | None = None, **kw):
    calls: list[dict] = []
    rows: list[dict] = []
    gw = Gateway({"default": model or profile()}, sink=lambda r: calls.append(r.as_dict()))
    ctx = RunContext(gateway=gw, library=Library(), node_sink=rows.append,
                     tags={"run_id": "r1", "design": "d", "task_id": "t1", "seed": 0, "purpose": "design"}, **kw)
    return ctx, calls, rows


# With a perfect model every loop stops at its first critic/verifier check; the planner and the
# decomposer produce 2 sub-tasks (the simulator's default list length).
EXPECTED_CALLS = {
    "cot": 1, "cot-sc": 5, "self-refine": 2, "reflexion": 2, "debate": 3 * 2 + 1, "step-back": 2,
    "quality-diversity": 1 + 3 + 1, "role-assignment": 2, "planner-workers": 1 + 2 + 1,
    "generator-verifier-refiner": 2, "decompose-calculator-aggregate": 1 + 2 + 1,
    "mixture-of-agents": 3 + 3 + 1, "parallel-distill-refine": 4 + 2,
    "smfr-expert": 1 + 3 * 2,  # meta, then extract -> calculate -> scan per investor; code aggregates
}


@pytest.mark.parametrize("name", BASELINES + ORCHESTRATORS)
def test_library_design_validates(name: str) -> None:
    lib = Library()
    loaded = lib.get("design", name)
    assert loaded.path.parent.name == ("baselines" if name in BASELINES else "orchestrators")
    assert check_design(loaded.spec, loaded.located, lib) == []
    for agent in {n.agent for n in loaded.spec.nodes.values() if isinstance(n.agent, str)}:
        a = lib.agent(agent)
        assert a.model == "default" and a.max_tokens <= 384, agent


@pytest.mark.parametrize("name", BASELINES + [o for o in ORCHESTRATORS if o != "smfr-expert"])
async def test_library_design_runs_on_sim(name: str) -> None:
    ctx, calls, rows = make()
    r = await run_design(name, TASK, ctx)
    assert r.status == "ok", (r.status, r.error, r.detail)
    assert r.answers == ["7"]
    assert r.calls == EXPECTED_CALLS[name] == len(calls)
    assert r.tokens == sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls) > 0
    assert r.prompt_tokens + r.completion_tokens == r.tokens
    assert r.detail["simulated"] is True
    # every node execution is a row; model calls in node rows add up to the call rows
    assert sum(x["calls"] for x in rows) == r.calls
    assert sum(x["tokens"] for x in rows) == r.tokens
    assert all(c["run_id"] == "r1" and c["task_id"] == "t1" and c["node"] and c["agent"] for c in calls)
    assert all("purpose" not in x for x in rows)  # node rows carry only `nodes` columns


async def test_cot_sc_k5_is_five_calls_plus_a_vote() -> None:
    ctx, calls, rows = make(profile(0.5))
    r = await run_design("cot-sc", TASK, ctx, {"k": 5})
    assert len(calls) == 5 == r.calls
    assert len({c["sample_index"] for c in calls}) == 5  # five distinct samples, not one cached five times
    sample_rows = [x for x in rows if x["node"] == "sample"]
    vote_rows = [x for x in rows if x["node"] == "vote"]
    assert len(sample_rows) == 5 and all(x["op"] == "repeat" and x["calls"] == 1 for x in sample_rows)
    assert len(vote_rows) == 1 and vote_rows[0]["op"] == "majority" and vote_rows[0]["calls"] == 0
    vote = r.detail["votes"]["vote"]
    assert sum(vote["tally"].values()) == 5 and vote["winner"] == r.answers[0]


@pytest.mark.parametrize("roles,rounds", [(3, 2), (4, 3), (2, 1)])
async def test_debate_calls_are_roles_times_rounds_plus_one(roles: int, rounds: int) -> None:
    ctx, calls, rows = make(profile(0.6))
    names = ["Math Professor", "Grade School Teacher", "Math Enthusiast", "Physicist"][:roles]
    r = await run_design("debate", TASK, ctx, {"roles": names, "rounds": rounds})
    assert r.calls == roles * rounds + 1 == len(calls)
    assert r.detail["loops"]["debate"] == {"rounds": rounds, "max_rounds": rounds, "stopped": "max_rounds"}
    argue = [c for c in calls if c["node"] == "debate.argue"]
    assert len(argue) == roles * rounds
    assert len({c["sample_index"] for c in argue}) == roles * rounds


@pytest.mark.parametrize("name,loop", [("self-refine", "refine"), ("reflexion", "reflect"),
                                       ("generator-verifier-refiner", "check")])
async def test_critic_loops_run_to_max_rounds_when_never_approved(name: str, loop: str) -> None:
    # The critic/verifier agents carry the skill `verification`; at accuracy 0 for it, a judge of
    # a correct answer always says "incorrect", so the loop runs every round.
    ctx, calls, _ = make(profile(1.0, verification=0.0))
    task = TASK.model_copy(update={"skills": []})  # the judge's accuracy is then exactly `verification`
    r = await run_design(name, task, ctx, {"max_rounds": 3} if name != "generator-verifier-refiner" else {"rounds": 3})
    assert r.detail["loops"][loop] == {"rounds": 3, "max_rounds": 3, "stopped": "max_rounds"}
    assert r.calls == 1 + 3 * 2 == len(calls)
    assert r.status == "ok" and r.answers == ["7"]


@pytest.mark.slow
async def test_self_refine_call_count_matches_rounds_taken() -> None:
    # A mediocre critic: each task stops at a different round; calls = 1 + critic rounds + revisions.
    for i in range(12):
        ctx, calls, _ = make(profile(0.5))
        t = TASK.model_copy(update={"id": f"t{i}", "question": f"What is {i} + 4?", "answers": [str(i + 4)]})
        r = await run_design("self-refine", t, ctx)
        lp = r.detail["loops"]["refine"]
        revisions = lp["rounds"] - (1 if lp["stopped"] == "until" else 0)
        assert r.calls == 1 + lp["rounds"] + revisions
        assert lp["rounds"] <= 5


async def test_quality_diversity_and_planner_shapes() -> None:
    ctx, calls, _ = make(profile(0.7))
    r = await run_design("quality-diversity", TASK, ctx, {"rounds": 2})
    assert r.calls == 1 + 2 + 1
    decide = [c for c in calls if c["node"] == "decide"]
    assert len(decide) == 1
    ctx, calls, rows = make(profile(0.7))
    multi = TASK.model_copy(update={"answers": ["7", "9", "11"]})
    r = await run_design("planner-workers", multi, ctx)
    assert r.calls == 1 + 3 + 1  # the sim planner lists one sub-task per gold answer here
    assert len(r.answers) == 3
