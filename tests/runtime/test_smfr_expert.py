"""The Illusion paper's SMFR expert MAS as published: LLM extract per investor, LLM calculate, LLM date
scan, plain-code aggregate, T = 0, JSON outputs."""

from __future__ import annotations

from masbench.bench import GENERATORS, score
from masbench.bench.smfr_aggregate import aggregate_first_dates, aggregation_of
from masbench.library import Library
from masbench.llm import Gateway
from masbench.runtime import PYTHON_FUNCS, RunContext, run_design
from masbench.spec.model import ModelSpec, SimProfile, TokenDist

Q_EARLY = "... who has the earliest possible sell date (the earliest date in their list of valid dates) ..."
Q_LATE = "... who has the latest possible buy date (the latest date in their list of valid dates) ..."


def test_aggregate_is_plain_code_with_ties_and_dropouts():
    scans = [{"investor": "Alice", "first_valid_date": "March 04, 2024"},
             {"investor": "Bob", "first_valid_date": "March 08, 2024"},
             {"investor": "Chen", "first_valid_date": "none"},
             {"investor": "Dana", "first_valid_date": "March 04, 2024"}]
    assert aggregate_first_dates(Q_EARLY, scans)["winners"] == ["Alice", "Dana"]
    assert aggregate_first_dates(Q_LATE, scans)["answer"] == "Bob"
    assert aggregate_first_dates(Q_EARLY, [{"investor": "X", "first_valid_date": None}])["answer"] == "none"
    assert aggregation_of("Which investor reaches the target last?") == "latest"
    assert PYTHON_FUNCS["smfr_aggregate"](Q_EARLY, scans)["answer"] == "Alice, Dana"


def test_design_shape_temperatures_and_json():
    lib = Library()
    spec = lib.get("design", "smfr-expert").spec
    assert [n.kind for n in spec.nodes.values()] == ["agent", "agent", "agent", "agent", "python"]
    assert spec.nodes["extract"].map == "meta.investors" and spec.nodes["aggregate"].python == "smfr_aggregate"
    for node in ("meta", "extract", "calculate", "scan"):
        agent = lib.agent(spec.nodes[node].agent)
        assert agent.temperature == 0 and agent.output is not None, node


async def test_runs_on_sim_one_meta_call_and_three_per_investor():
    [task] = GENERATORS["smfr.paper"]([2], 1, 0, "test")
    calls: list[dict] = []
    model = ModelSpec(id="sim/unit", sim=SimProfile(accuracy={"default": 1.0},
                                                    completion_tokens=TokenDist(mean=60, sd=10)))
    ctx = RunContext(gateway=Gateway({"default": model}, sink=lambda r: calls.append(r.as_dict())), library=Library(),
                     tags={"run_id": "r", "design": "smfr-expert", "task_id": task.id, "seed": 0, "purpose": "design"})
    r = await run_design("smfr-expert", task, ctx)
    assert r.status == "ok" and r.calls == len(calls) == 1 + 3 * 2  # the simulator lists 2 investors
    assert [c["node"] for c in calls].count("meta") == 1
    # the simulator writes no dates, so plain code finds no qualifying investor: scored wrong, not crashed
    assert r.answers == ["none"] and not score(task, r.answers, reply=r.text).correct
