"""masbench.harness.scoring by hand: the judge agent's checks, which suites need a judge, and one
cell's verdict through a recording stand-in for the gateway (no run, no simulator: milliseconds).

The expected values are read off the rules, not off the code's output: a rule-scored cell is the
task's own scorer on the reply (gsm8k reads ``#### N`` in the reply, whatever was extracted); a
judged cell makes ``k`` calls with the agent's sampling settings and the cell's tags, a failed call
is an unread sample, and the row's columns count the samples the way ``unparsed`` says."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from masbench.bench import TaskInstance
from masbench.harness.scoring import CellScoring, JudgeConfigError, Scored, check_judged, judge_agent
from masbench.library import Library
from masbench.spec import AgentSpec, JudgeSpec
from masbench.spec.agent import RouteSpec

JUDGE = AgentSpec(name="jj", model="judge", system="Grade.", prompt="Q: {question}", temperature=0.3, max_tokens=77,
                  stop=["END"])


def _library(*agents: AgentSpec) -> Library:
    lib = Library(roots=[], include_cwd=False, include_bundled=False)
    for a in agents:
        lib.add("agent", a)
    return lib


def _task(tid: str = "t1", **kw: Any) -> TaskInstance:
    base: dict[str, Any] = dict(id=tid, source="s", question="What is 2 plus 3?", answers=["5"], scorer="judge",
                                meta={"check": "numeric"})
    base.update(kw)
    return TaskInstance(**base)


class Gateway:
    """Records what is resolved and asked; answers each judge sample from ``replies`` (by sample
    index): a string is the reply, None a failed call (error set, text "" as a real failed call)."""

    def __init__(self, replies: dict[int, str | None] | None = None):
        self.replies = replies or {}
        self.resolved: list[Any] = []
        self.calls: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = []

    def resolve(self, model: Any) -> tuple[str, Any]:
        self.resolved.append(model)
        return str(model), SimpleNamespace(id="sim/grader")

    async def complete(self, model: str, messages: list[dict[str, Any]], **kw: Any) -> Any:
        self.calls.append((model, messages, kw))
        text = self.replies[kw["sample_index"]]
        return SimpleNamespace(text="", error="boom") if text is None else SimpleNamespace(text=text, error=None)


def test_the_judge_agent_must_have_a_fixed_model_and_a_judge_prompt():
    routed = AgentSpec(name="r", model=RouteSpec(route="h"), prompt="{question}")
    bad = AgentSpec(name="b", model="judge", prompt="{question} {oops} {node} {oops} {reply}")
    lib = _library(JUDGE, routed, bad)
    assert judge_agent(JudgeSpec(agent="jj"), lib) == JUDGE
    with pytest.raises(JudgeConfigError) as ei:
        judge_agent(JudgeSpec(agent="r"), lib)
    assert str(ei.value) == "judge agent 'r': its model is a route; a judge needs a fixed model alias"
    with pytest.raises(JudgeConfigError) as ei:
        judge_agent(JudgeSpec(agent="b"), lib)
    # the unknown names in order, once each; then the five a judge prompt may use (PROMPT_NAMES' order)
    assert str(ei.value) == ("judge agent 'b': its prompt names {oops}, {node}; a judge prompt may name "
                             "{question}, {task}, {reply}, {reference}, {rubric}")
    assert isinstance(ei.value, ValueError)  # the CLI reports it as a usage error


def test_a_judge_is_needed_only_where_a_task_is_judged():
    lib = _library(JUDGE, AgentSpec(name="r", model=RouteSpec(route="h"), prompt="{question}"))
    rule_only = [_task("a", scorer="numeric"), _task("b", scorer="exact")]
    assert check_judged(rule_only, None, lib, "s") is None                 # no judge block needed
    assert check_judged(rule_only, JudgeSpec(agent="jj"), lib, "s") is None  # nor used when given
    mixed = [_task("a", scorer="numeric"), _task("q1"), _task("q2")]
    with pytest.raises(JudgeConfigError) as ei:
        check_judged(mixed, None, lib, "s")
    # two judged tasks, the first of them named
    assert str(ei.value) == ("suite 's': 2 task(s) (e.g. q1) are scored by a judge but the suite has no "
                             "`judge:` block (agent, rubric, scale, k)")
    assert check_judged(mixed, JudgeSpec(agent="jj"), lib, "s") == JUDGE
    with pytest.raises(JudgeConfigError, match="is a route"):             # the agent is checked too
        check_judged(mixed, JudgeSpec(agent="r"), lib, "s")


def test_the_judge_model_id_is_resolved_only_for_a_fixed_model():
    gw = Gateway()
    assert CellScoring(gw, "run", JudgeSpec(agent="jj"), JUDGE).model_id == "sim/grader"  # type: ignore[arg-type]
    assert gw.resolved == ["judge"]
    gw = Gateway()
    assert CellScoring(gw, "run", None, None).model_id is None  # type: ignore[arg-type]
    routed = AgentSpec(name="r", model=RouteSpec(route="h"), prompt="{question}")
    assert CellScoring(gw, "run", JudgeSpec(agent="r"), routed).model_id is None  # type: ignore[arg-type]
    assert gw.resolved == []


def test_a_rule_scored_cell_is_scored_on_its_reply_without_a_call():
    gw = Gateway()
    cs = CellScoring(gw, "run", None, None)  # type: ignore[arg-type]
    # gsm8k reads the reply's "#### 42" (right); the extracted answer handed in, 7, is wrong: a verdict
    # taken from the extracted answers alone would fail the cell
    t = _task(scorer="gsm8k", answers=["42"], meta={})
    got = asyncio.run(cs.score(t, ["7"], "6 * 7 = 42\n#### 42", "cot", 0))
    assert got.score.correct is True and got.columns == {} and got.detail is None
    assert asyncio.run(cs.score(t, ["7"], "6 + 7 = 13\n#### 13", "cot", 0)).score.correct is False
    assert gw.calls == [] and gw.resolved == []


def test_a_judged_cell_needs_both_the_spec_and_the_agent():
    for spec, agent in [(None, None), (JudgeSpec(agent="jj"), None), (None, JUDGE)]:
        cs = CellScoring(Gateway(), "run", spec, agent)  # type: ignore[arg-type]
        with pytest.raises(JudgeConfigError) as ei:
            asyncio.run(cs.score(_task(), ["5"], "Answer: 5", "cot", 0))
        assert str(ei.value) == "task 't1' is scored by 'judge' but the run has no judge"


def _judged(unparsed: str, agent: AgentSpec = JUDGE) -> tuple[Scored, Gateway]:
    # k = 3, seed 2: sample indexes 2000, 2001, 2002; the middle call fails
    gw = Gateway({2000: "Verdict: PASS", 2001: None, 2002: "Verdict: PASS"})
    spec = JudgeSpec(agent=agent.name, k=3, seed=2, rubric="T={task}|R={reply}", unparsed=unparsed)  # type: ignore[arg-type]
    cs = CellScoring(gw, "run-9", spec, agent)  # type: ignore[arg-type]
    return asyncio.run(cs.score(_task(), ["5"], "It is 5.", "debate", 4)), gw


def test_a_judged_cell_asks_k_times_with_the_agents_settings_and_the_cells_tags():
    got, gw = _judged("fail")
    assert sorted(kw["sample_index"] for _, _, kw in gw.calls) == [2000, 2001, 2002]
    for model, messages, kw in gw.calls:
        assert model == "judge"
        assert messages == [{"role": "system", "content": "Grade."},
                            {"role": "user", "content": "Q: T=What is 2 plus 3?|R=It is 5."}]
        assert {k: v for k, v in kw.items() if k != "sample_index"} == {
            "temperature": 0.3, "max_tokens": 77, "params": {"stop": ["END"]},
            "tags": {"run_id": "run-9", "purpose": "scoring", "design": "debate", "task_id": "t1", "seed": 4,
                     "node": "judge", "agent": "jj"},
            # the rule (numeric, gold 5) passes the reply "It is 5.": a simulated judge is told so
            "metadata": {"sim": {"mode": "grade", "truth": True, "scale": "pass-fail", "task": "t1", "agent": "jj",
                                 "skills": ["judge"]}}}
    # unparsed "fail": the failed sample counts as a fail, so 2 of 3 pass (a majority)
    assert got.score.correct is True and got.score.partial == pytest.approx(2 / 3)
    assert got.columns == {"judge": "jj", "judge_model": "sim/grader", "judge_samples": 3, "judge_passes": 2,
                           "judge_value": pytest.approx(2 / 3), "rule_correct": True}
    assert got.detail == {"judge": {"agent": "jj", "samples": [1.0, None, 1.0],
                                    "replies": ["Verdict: PASS", None, "Verdict: PASS"]}}


def test_a_judged_cell_counts_only_read_samples_when_unparsed_is_skip():
    got, _ = _judged("skip")
    # the failed sample is left out: 2 samples, both pass
    assert got.columns["judge_samples"] == 2 and got.columns["judge_passes"] == 2
    assert got.columns["judge_value"] == 1.0 and got.score.correct is True


def test_an_agent_without_stop_sequences_sends_no_params():
    plain = AgentSpec(name="p", model="judge", prompt="{question}")
    got, gw = _judged("fail", plain)
    assert [kw["params"] for _, _, kw in gw.calls] == [None, None, None]
    assert [kw["temperature"] for _, _, kw in gw.calls] == [None, None, None]  # the agent's default
    assert gw.calls[0][1] == [{"role": "user", "content": "T=What is 2 plus 3?|R=It is 5."}]
    assert got.columns["judge"] == "p"
