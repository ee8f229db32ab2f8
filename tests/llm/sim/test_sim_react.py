"""The simulator's tool-using policy (``mode: react``): answers once every hop's evidence is seen
(with the profile's answer accuracy under latent difficulty), else searches for the next hop with
its retrieval competence, reads or searches vaguely otherwise, must answer on the last step,
replies natively when the request carries tools, and summarises dropped steps by its recall."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from masbench.llm.sim import Simulator, sim_model
from masbench.llm.sim.react import retrieval_competence
from masbench.llm.sim_backend import SimBackend
from masbench.llm.backends import Attempt
from masbench.spec.model import ModelSpec, SimProfile
from masbench.spec.sim import SimDifficulty, SimTools
from masbench.tools.protocol import parse

HOPS = [{"query": "Velmora founded", "doc": "d1", "fact": "Velmora was founded by Ada Kessel.", "answer": "Ada Kessel"},
        {"query": "Ada Kessel born", "doc": "d2", "fact": "Ada Kessel was born in Tarsk.", "answer": "Tarsk"}]
QUESTION = "In which town was the founder of Velmora born?"
SIM = Simulator()


def meta(**kw: Any) -> dict[str, Any]:
    m = {"mode": "react", "tools": ["search", "read_document"], "hops": HOPS, "evidence": ["d1", "d2"], "seen": [],
         "step": 0, "max_steps": 6, "gold": ["tarsk"], "skills": [], "task": "t-1", "agent": "searcher",
         "question": QUESTION}
    m.update(kw)
    return m


def reply(profile: SimProfile, i: int = 0, native: bool = False, **kw: Any):
    msgs = [{"role": "user", "content": QUESTION}]
    return asyncio.run(SIM.complete("sim/x", profile, msgs, 512, i, 0, meta(**kw), native=native))


def action(profile: SimProfile, i: int = 0, **kw: Any):
    p = parse(reply(profile, i, **kw).text, ["search", "read_document"])
    return p


P = SimProfile(accuracy={"default": 1.0})


def test_it_searches_the_next_unfound_hop_with_its_ideal_query() -> None:
    assert [(c.name, c.arguments) for c in action(P).calls] == [("search", "Velmora founded")]
    assert [(c.name, c.arguments) for c in action(P, seen=["d1", "d9"]).calls] == [("search", "Ada Kessel born")]
    p = action(P, seen=["d2", "d1"])
    assert p.done and p.final == "tarsk"


def test_retrieval_competence_is_the_rate_of_ideal_queries() -> None:
    prof = SimProfile(accuracy={"default": 1.0}, tools=SimTools(search=0.7, read=0.0))
    ideal = sum(action(prof, i).calls[0].arguments == "Velmora founded" for i in range(2000))
    assert 0.66 < ideal / 2000 < 0.74
    vague = next(c for i in range(50) for c in action(prof, i).calls if c.arguments != "Velmora founded")
    assert vague.name == "search" and set(vague.arguments.split()) <= set(QUESTION.rstrip("?").split())


def test_competence_defaults_to_the_accuracy_for_skill_search() -> None:
    prof = SimProfile(accuracy={"default": 0.9, "search": 0.2})
    assert retrieval_competence(sim_model("sim/x", prof)) == 0.2
    assert retrieval_competence(sim_model("sim/p60")) == 0.6
    rate = sum(action(prof, i).calls[0].arguments == "Velmora founded" for i in range(2000)) / 2000
    assert 0.16 < rate < 0.24


def test_without_the_ideal_query_it_may_read_a_document_it_saw() -> None:
    prof = SimProfile(tools=SimTools(search=0.0, read=1.0))
    (c,) = action(prof, seen=["d1", "d7"]).calls
    assert c.name == "read_document" and c.arguments in ("d1", "d7")
    (c,) = action(prof, seen=[]).calls  # nothing seen yet: a vague search
    assert c.name == "search"


def test_on_the_last_step_it_must_answer_and_a_guess_is_rarely_right() -> None:
    prof = SimProfile(accuracy={"default": 1.0}, tools=SimTools(guess=0.25))
    finals = [action(prof, i, step=5, max_steps=6) for i in range(2000)]
    assert all(f.done for f in finals)
    right = sum(f.final == "tarsk" for f in finals) / 2000
    assert 0.21 < right < 0.29
    assert action(prof, step=1, final=True).done  # the op asks for the answer now


def test_wrong_answers_come_from_the_task_s_distractors_when_given() -> None:
    wrong = SimProfile(accuracy={"default": 0.0})
    got = {action(wrong, i, seen=["d1", "d2"], distractors=["Ada Kessel", "Velmoria"]).final for i in range(40)}
    assert got == {"Ada Kessel", "Velmoria"}
    assert action(wrong, seen=["d1", "d2"]).final not in (None, "tarsk")


@pytest.mark.slow
def test_the_answer_once_everything_is_seen_has_the_latent_accuracy_of_the_task() -> None:
    prof = SimProfile(accuracy={"default": 0.6}, difficulty=SimDifficulty(spread=2.0))
    m = sim_model("sim/x", prof)
    for task in ("t-easy?", "t-7", "t-hard?"):
        p = m.p_correct(task, [])
        n = 3000
        right = sum(action(prof, i, seen=["d1", "d2"], task=task).final == "tarsk" for i in range(n)) / n
        assert abs(right - p) < 0.035, (task, p, right)


def test_no_search_tool_means_an_answer() -> None:
    p = action(P, tools=["calculator"])
    assert p.done


def test_a_task_without_hops_is_answered_directly() -> None:
    assert action(P, hops=[]).final == "tarsk"


def test_native_replies_are_tool_calls() -> None:
    r = reply(P, native=True)
    (call,) = r.tool_calls or []
    assert call["type"] == "function" and call["function"]["name"] == "search"
    assert json.loads(call["function"]["arguments"]) == {"query": "Velmora founded"} and call["id"] == "call_0_0"
    assert "Action:" not in r.text
    final = reply(P, native=True, seen=["d1", "d2"])
    assert final.tool_calls is None and "Final Answer: tarsk" in final.text


def test_draws_are_seeded_by_the_request_and_the_step() -> None:
    prof = SimProfile(tools=SimTools(search=0.5, read=0.0))
    a = [action(prof, i).calls[0].arguments for i in range(200)]
    assert a == [action(prof, i).calls[0].arguments for i in range(200)]
    b = [action(prof, i, step=1).calls[0].arguments for i in range(200)]
    assert a != b


def test_a_summary_names_dropped_evidence_by_its_recall() -> None:
    def summary(recall: float, i: int = 0) -> str:
        prof = SimProfile(tools=SimTools(summary_recall=recall))
        return reply(prof, i, mode="summarize", dropped=["d1", "d3"]).text

    assert "[d1] Velmora was founded by Ada Kessel." in summary(1.0) and "[d3]" not in summary(1.0)
    assert "[d1]" not in summary(0.0)
    kept = sum("[d1]" in summary(0.5, i) for i in range(400)) / 400
    assert 0.4 < kept < 0.6


def test_the_backend_returns_native_tool_calls_when_the_request_carries_tools() -> None:
    b = SimBackend()
    spec = ModelSpec(id="sim/perfect")
    msgs = [{"role": "user", "content": QUESTION}]
    with_tools = asyncio.run(b(Attempt("default", spec, msgs, {"tools": [{"type": "function"}], "max_tokens": 512},
                                       0, 0, {"sim": meta()}, {})))
    plain = asyncio.run(b(Attempt("default", spec, msgs, {"max_tokens": 512}, 0, 0, {"sim": meta()}, {})))
    assert with_tools.tool_calls and with_tools.tool_calls[0]["function"]["name"] == "search"
    assert plain.tool_calls is None and "Action: search[Velmora founded]" in plain.text
    assert b.supports_tools(spec) is False


def test_a_truncated_step_has_neither_an_action_nor_tool_calls() -> None:
    msgs = [{"role": "user", "content": QUESTION}]
    r = asyncio.run(SIM.complete("sim/x", P, msgs, 5, 0, 0, meta(), native=True))
    assert r.finish_reason == "length" and r.tool_calls is None and not parse(r.text).calls
