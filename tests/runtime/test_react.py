"""The ``react`` op: a bounded ReAct loop on the simulator and on exact scripts — the expected tool
calls, the step / context / budget limits, tool failures shown to the model and recorded, parallel
tool calls, native function calling, the rows it writes and the transcript of every step."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

from masbench.bench.types import TaskInstance
from masbench.library import Library
from masbench.llm import Gateway, Reply, TranscriptRecorder
from masbench.llm.backends import Attempt
from masbench.llm.scripted import ScriptedGateway
from masbench.runtime import RunContext, check_design, run_design
from masbench.runtime.ops.react_loop import estimate_tokens
from masbench.spec import DesignSpec
from masbench.spec.budget import Budget
from masbench.spec.model import ModelSpec, SimProfile
from masbench.spec.problems import SpecError
from masbench.spec.sim import SimTools
from masbench.store import MessageRow, NodeRow, TextRow, ToolCallRow, text_hash
from masbench.tools import TOOLS, ToolOutput, tool
from otelfix import clean_otel_env, memory  # noqa: F401 - fixtures

PAD = " It is a long established fact of the archive, recorded in the registry ledger." * 4
DOCS = {"d1": "Velmora was founded by Ada Kessel." + PAD, "d2": "Ada Kessel was born in Tarsk." + PAD,
        "d3": "Velmoria is a river town with many bridges." + PAD}
IDEAL = {"velmora founded": "d1", "ada kessel born": "d2"}
HOPS = [{"query": "Velmora founded", "doc": "d1", "fact": "Velmora was founded by Ada Kessel.", "answer": "Ada Kessel"},
        {"query": "Ada Kessel born", "doc": "d2", "fact": "Ada Kessel was born in Tarsk.", "answer": "Tarsk"}]
TASK = TaskInstance(id="react-t1", source="unit", question="In which town was the founder of Velmora born?",
                    answers=["tarsk"], meta={"hops": HOPS, "evidence": ["d1", "d2"]})
TAGS = {"run_id": "r1", "design": "react-test", "task_id": TASK.id, "seed": 0, "purpose": "test"}


@pytest.fixture(autouse=True)
def corpus_tools():
    """A scripted corpus behind fake ``search`` / ``read_document`` (the real ones are another
    module's): a search with a hop's ideal query finds its document, anything else the distractor."""
    saved = {n: TOOLS._entries[n] for n in ("search", "read_document")}  # noqa: SLF001 - restored below

    @tool("search")
    def search(query: str, k: int = 1) -> ToolOutput:
        """Search the corpus."""
        hit = IDEAL.get(query.strip().lower(), "d3")
        return ToolOutput(f"[{hit}] {DOCS[hit]}", [hit])

    @tool("read_document")
    def read_document(doc_id: str) -> ToolOutput:
        """Read one document."""
        if doc_id not in DOCS:
            raise KeyError(f"no document {doc_id!r}")
        return ToolOutput(DOCS[doc_id], [doc_id])

    yield
    for n, v in saved.items():
        TOOLS.add(n, v, replace=True)


def design(params: dict[str, Any] | None = None, tools: list[str] | None = None, tool_mode: str = "auto",
           node: dict[str, Any] | None = None, **agent: Any) -> DesignSpec:
    a = {"name": "searcher", "prompt": "{question}", "system": "You answer questions from a corpus.",
         "tools": tools if tools is not None else ["search", "read_document"], "tool_mode": tool_mode, **agent}
    return DesignSpec.model_validate({"name": "react-test", "agents": {"searcher": a},
                                      "nodes": {"r": {"kind": "react", "agent": "searcher", "params": params or {},
                                                      **(node or {})}}, "output": "r"})


class Run:
    """One run's records: calls, node rows, tool rows, texts, transcript messages."""

    def __init__(self) -> None:
        self.calls: list[Any] = []
        self.records: list[Any] = []
        self.transcript: list[Any] = []

    def of(self, kind: type) -> list[Any]:
        return [r for r in self.records if isinstance(r, kind)]

    @property
    def tools(self) -> list[ToolCallRow]:
        return self.of(ToolCallRow)

    def inputs(self, call_id: str) -> list[MessageRow]:
        return sorted((m for m in self.transcript if isinstance(m, MessageRow) and m.call_id == call_id
                       and m.direction == "input"),
                      key=lambda m: m.position)

    def text(self, h: str | None) -> str:
        return next(r.text for r in self.transcript + self.records if isinstance(r, TextRow) and r.text_hash == h)


def sim_gateway(run: Run, profile: SimProfile | None = None, **spec: Any) -> Gateway:
    return Gateway({"default": ModelSpec(id="sim/perfect", sim=profile, **spec)}, sink=run.calls.append,
                   transcripts=TranscriptRecorder(run.transcript.append))


async def go(d: DesignSpec, gw: Gateway, run: Run, budget: Budget | None = None, task: TaskInstance = TASK):
    return await run_design(d, task, RunContext(gateway=gw, library=Library(), node_sink=run.records.append,
                                                tags=TAGS, budget=budget))


PERFECT = SimProfile(accuracy={"default": 1.0})


# ----- the simulator's policy through the op ---------------------------------------------------------

async def test_a_react_run_on_the_simulator_searches_hop_by_hop_and_answers() -> None:
    run = Run()
    res = await go(design(), sim_gateway(run), run)
    assert res.status == "ok" and res.answers == ["tarsk"] and res.calls == 3
    rows = run.tools
    assert [(t.tool, json.loads(t.arguments)["query"], t.status, t.step, t.position) for t in rows] == [
        ("search", "Velmora founded", "ok", 0, 0), ("search", "Ada Kessel born", "ok", 1, 0)]
    assert [json.loads(t.result_ids) for t in rows] == [["d1"], ["d2"]]
    call_ids = [c.call_id for c in run.calls]
    assert [t.call_id for t in rows] == call_ids[:2]  # each tool call names the model call that asked for it
    for t in rows:
        assert (t.run_id, t.task_id, t.design, t.seed, t.purpose, t.node) == ("r1", TASK.id, "react-test", 0, "test", "r")
        assert t.latency_s is not None and t.bytes_out and not t.truncated and t.t_start
        assert t.text_hash == text_hash(run.text(t.text_hash)) and run.text(t.text_hash).startswith("[d")
    (node,) = run.of(NodeRow)
    assert (node.op, node.agent, node.calls, node.status, node.output) == ("react", "searcher", 3, "ok", "tarsk")


async def test_the_transcript_shows_every_step() -> None:
    run = Run()
    await go(design(), sim_gateway(run), run)
    assert len(run.calls) == 3
    last = run.inputs(run.calls[-1].call_id)
    assert [m.role for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    texts = [run.text(m.text_hash) for m in last]
    assert "Action: tool_name[argument]" in texts[0] and "You answer questions" in texts[0]
    assert texts[2].endswith("Action: search[Velmora founded]") and texts[3].startswith("Observation: [d1]")
    assert texts[4].endswith("Action: search[Ada Kessel born]") and texts[5].startswith("Observation: [d2]")
    outputs = [m for m in run.transcript if isinstance(m, MessageRow) and m.direction == "output"]
    assert len(outputs) == 3 and "Final Answer: tarsk" in run.text(outputs[-1].text_hash)
    obs_hashes = [t.text_hash for t in run.tools]  # each observation's text is sent once by the op
    assert sorted(r.text_hash for r in run.records if isinstance(r, TextRow)) == sorted(obs_hashes)


async def test_the_step_limit_forces_an_answer_on_the_last_step() -> None:
    run = Run()
    lost = SimProfile(accuracy={"default": 1.0}, tools=SimTools(search=0.0, read=0.0, guess=0.0))
    res = await go(design({"max_steps": 3}), sim_gateway(run, lost), run)
    assert res.calls == 3 and len(run.tools) == 2  # steps 0, 1 search vaguely; step 2 (the last) must answer
    assert all(json.loads(t.result_ids) == ["d3"] for t in run.tools)
    assert res.answers != ["tarsk"] and res.status == "ok"
    (node,) = run.of(NodeRow)
    assert node.calls == 3


def always_search(info: dict[str, Any]) -> str:
    last = info["messages"][-1]["content"]
    if "Do not call a tool" in last:
        return "Final Answer: 7"
    return f"Thought: more.\nAction: search[query {len(info['messages'])}]"


async def test_after_max_steps_one_last_call_asks_for_the_answer() -> None:
    run = Run()
    gw = ScriptedGateway(always_search, sink=run.calls.append)
    res = await go(design({"max_steps": 4}), gw, run)
    assert res.calls == 5 and len(run.tools) == 4 and res.answers == ["7"]
    assert "You have used all your steps" in gw.requests[-1]["messages"][-1]["content"]
    assert [r["messages"][-1]["role"] for r in gw.requests] == ["user"] * 5
    assert run.records[-1].status == "ok"


# ----- the context limit ---------------------------------------------------------------------------

async def _context_bounds() -> tuple[int, int]:
    run = Run()
    gw = sim_gateway(run)
    await go(design(), gw, run)
    msgs = [[{"role": m.role, "content": run.text(m.text_hash)} for m in run.inputs(c.call_id)] for c in run.calls]
    return estimate_tokens(msgs[1]), estimate_tokens(msgs[2])


async def test_truncate_oldest_forgets_what_fell_out_of_the_context() -> None:
    one, two = await _context_bounds()
    limit = (one + two) // 2  # the head and one turn fit; two turns do not
    run = Run()
    res = await go(design({"context_tokens": limit, "max_steps": 5}), sim_gateway(run), run)
    queries = [json.loads(t.arguments)["query"] for t in run.tools]
    # hop 2 pushes hop 1's document out, so the model searches for it again, and again …
    assert queries[:3] == ["Velmora founded", "Ada Kessel born", "Velmora founded"]
    assert res.calls == 5 and res.detail["nodes"]["r"] == "ok"
    later = run.inputs(run.calls[2].call_id)
    texts = [run.text(m.text_hash) for m in later]
    assert "(1 earlier step dropped to fit the context.)" in texts
    assert not any(t.startswith("Observation: [d1]") for t in texts)
    assert all(estimate_tokens([{"role": m.role, "content": run.text(m.text_hash)} for m in run.inputs(c.call_id)])
               <= limit + 40 for c in run.calls)  # within the budget (the final-answer prompt aside)


async def test_a_large_context_does_not_forget() -> None:
    one, two = await _context_bounds()
    run = Run()
    res = await go(design({"context_tokens": two + 50}), sim_gateway(run), run)
    assert res.answers == ["tarsk"] and len(run.tools) == 2


async def test_summarize_keeps_what_the_summary_names() -> None:
    one, two = await _context_bounds()
    limit = (one + two) // 2
    run = Run()
    keeps = SimProfile(accuracy={"default": 1.0}, tools=SimTools(summary_recall=1.0))
    res = await go(design({"context_tokens": limit, "overflow": "summarize"}), sim_gateway(run, keeps), run)
    assert res.answers == ["tarsk"] and len(run.tools) == 2  # the summary kept d1 "seen": no search again
    assert res.calls == 4  # two steps, one summary, the answer
    summary_call = run.calls[2]
    out = next(m for m in run.transcript if isinstance(m, MessageRow) and m.call_id == summary_call.call_id
               and m.direction == "output")
    assert "[d1]" in run.text(out.text_hash)
    final_inputs = [run.text(m.text_hash) for m in run.inputs(run.calls[3].call_id)]
    assert any(t.startswith("Summary of 1 earlier step:") and "[d1]" in t for t in final_inputs)

    run = Run()
    loses = SimProfile(accuracy={"default": 1.0}, tools=SimTools(summary_recall=0.0))
    res = await go(design({"context_tokens": limit, "overflow": "summarize", "max_steps": 4}),
                   sim_gateway(run, loses), run)
    assert [json.loads(t.arguments)["query"] for t in run.tools][:3] == [
        "Velmora founded", "Ada Kessel born", "Velmora founded"]  # a lossy summary forgets


async def test_stop_answers_from_what_is_there() -> None:
    one, two = await _context_bounds()
    run = Run()
    res = await go(design({"context_tokens": (one + two) // 2, "overflow": "stop", "max_steps": 6}),
                   sim_gateway(run), run)
    assert res.calls == 3 and len(run.tools) == 2
    last = [run.text(m.text_hash) for m in run.inputs(run.calls[-1].call_id)]
    assert "Your notes are full" in last[-1]
    (node,) = run.of(NodeRow)
    assert node.status == "ok" and res.answers == ["tarsk"]


async def test_the_node_value_reports_steps_tool_calls_and_docs_seen() -> None:
    d = DesignSpec.model_validate({
        "name": "react-test", "agents": {
            "searcher": {"name": "searcher", "prompt": "{question}", "tools": ["search"]},
            "writer": {"name": "writer", "prompt": "Steps {r.steps}, calls {r.tool_calls}, docs {r.docs_seen}, "
                                                   "stop {r.stop}. Answer: {r.answer}"}},
        "nodes": {"r": {"kind": "react", "agent": "searcher"}, "w": {"agent": "writer", "from": "r"}}, "output": "w"})
    gw = ScriptedGateway(lambda info: "Action: search[Velmora founded]" if len(info["messages"]) == 2 and
                         info["node"] == "r" else (info["messages"][-1]["content"] if info["node"] == "w"
                                                   else "Final Answer: tarsk"))
    run = Run()
    res = await go(d, gw, run)
    assert res.text == "Steps 2, calls 1, docs 1. d1, stop answer. Answer: tarsk"


# ----- the budget ----------------------------------------------------------------------------------

async def test_a_tight_budget_stops_the_loop_before_a_step_it_cannot_afford() -> None:
    run = Run()
    full = await go(design(), sim_gateway(run), run)
    first = run.calls[0]
    # room for the first step's worst case (its prompt + max_tokens) but not for the second's
    cap = first.prompt_tokens + 512 + first.completion_tokens + 60
    run = Run()
    res = await go(design(), sim_gateway(run), run, budget=Budget(per_task_tokens=cap))
    assert full.calls == 3 and res.calls == 1 and len(run.tools) == 1
    assert res.status == "budget_exhausted"
    (node,) = run.of(NodeRow)
    assert node.status == "budget_exhausted" and "step 2 of the ReAct loop not made" in (node.error or "")
    assert res.detail["budget"]["refused"] and res.tokens <= cap


# ----- tool failures -------------------------------------------------------------------------------

@tool("rx_boom")
def _boom(what: str) -> str:
    """Always raises."""
    raise RuntimeError("the tool broke")


@tool("rx_big", max_result_chars=100)
def _big(n: int) -> str:
    """A huge result."""
    return "x" * n


def failing_script(info: dict[str, Any]) -> str:
    if len(info["messages"]) == 2:
        return ("Thought: try everything.\n"
                'Action: search({"k": "many"})\n'           # fails its schema (query missing, k not an int)
                "Action: browse[the web]\n"                 # no such tool
                "Action: calculator[1 + 1]\n"               # registered, not allowed for this agent
                "Action: rx_boom[now]\n"                    # raises
                'Action: rx_big({"n": 5000})')              # oversized
    return "Final Answer: 42"


async def test_tool_failures_are_recorded_shown_to_the_model_and_never_crash_the_run() -> None:
    run = Run()
    gw = ScriptedGateway(failing_script, sink=run.calls.append)
    res = await go(design({"parallel_tools": 8}, tools=["search", "rx_boom", "rx_big"]), gw, run)
    assert res.status == "ok" and res.answers == ["42"] and res.calls == 2
    rows = run.tools
    assert [(t.tool, t.status) for t in rows] == [
        ("search", "invalid_args"), ("browse", "unknown_tool"), ("calculator", "not_allowed"),
        ("rx_boom", "error"), ("rx_big", "ok")]
    assert [t.position for t in rows] == [0, 1, 2, 3, 4] and {t.step for t in rows} == {0}
    assert "query: Field required" in rows[0].error and "k: Input should be a valid integer" in rows[0].error
    assert rows[3].error == "RuntimeError: the tool broke"
    assert rows[4].truncated and rows[4].bytes_out == 5000
    shown = gw.requests[1]["messages"][-1]["content"]
    for part in ("Observation 1 (search): Error: search:", "there is no tool 'browse'",
                 "'calculator' is not one this agent may use", "rx_boom failed: RuntimeError: the tool broke",
                 "[… cut: 4900 more characters]"):
        assert part in shown, part


async def test_more_calls_than_parallel_tools_are_refused_and_recorded() -> None:
    def script(info: dict[str, Any]) -> str:
        if len(info["messages"]) == 2:
            return "Action: search[a]\nAction: search[b]\nAction: search[c]"
        return "Final Answer: 1"

    run = Run()
    gw = ScriptedGateway(script, sink=run.calls.append)
    await go(design({"parallel_tools": 2}), gw, run)
    assert [t.status for t in run.tools] == ["ok", "ok", "refused"]
    assert "at most 2 tool calls run per step" in gw.requests[1]["messages"][-1]["content"]


# ----- parallel tool calls -------------------------------------------------------------------------

# The two calls of a step meet: each waits (up to 10 s) until the other has started. Run one after
# the other, the first would wait alone and fail; no wall-clock bound is needed to tell.
_MET_WAIT_S = 10.0
_arrived: list[str] = []


@tool("rx_sleep")
async def _sleep(label: str) -> str:
    """Waits on the event loop until the step's other call has started."""
    _arrived.append(label)
    for _ in range(int(_MET_WAIT_S / 0.01)):
        if len(_arrived) >= 2:
            await asyncio.sleep(0.2)
            return label
        await asyncio.sleep(0.01)
    raise RuntimeError(f"{label}: ran alone")


@tool("rx_sleep_sync")
def _sleep_sync(label: str) -> str:
    """Waits in its thread (a blocking tool) until the step's other call has started."""
    _barrier.wait(timeout=_MET_WAIT_S)  # BrokenBarrierError (a failed tool) if it ran alone
    time.sleep(0.2)
    return label


_barrier = threading.Barrier(2)


@pytest.mark.parametrize("name", ["rx_sleep", "rx_sleep_sync"])
async def test_the_calls_of_one_step_run_concurrently(name: str) -> None:
    def script(info: dict[str, Any]) -> str:
        if len(info["messages"]) == 2:
            return f"Action: {name}[one]\nAction: {name}[two]"
        return "Final Answer: done"

    _arrived.clear()
    _barrier.reset()
    run = Run()
    await go(design(tools=[name]), ScriptedGateway(script), run)
    a, b = run.tools
    assert a.status == b.status == "ok", (a.error, b.error)  # each met the other while it ran
    assert a.latency_s >= 0.19 and b.latency_s >= 0.19
    assert max(a.t_start, b.t_start) < min(a.t_start + a.latency_s, b.t_start + b.latency_s)  # they overlapped


# ----- native function calling ---------------------------------------------------------------------

class NativeBackend:
    """Answers with tool_calls until it has seen two tool results, then a final answer."""

    def __init__(self) -> None:
        self.requests: list[Attempt] = []

    async def __call__(self, a: Attempt) -> Reply:
        self.requests.append(a)
        seen = sum(1 for m in a.messages if m.get("role") == "tool")
        if seen >= 2 or a.req.get("tool_choice") == "none":
            return Reply("Final Answer: Tarsk", 50, 5, finish_reason="stop")
        calls = [{"id": f"prov-{seen}-{j}", "type": "function",
                  "function": {"name": "search", "arguments": json.dumps({"query": q})}}
                 for j, q in enumerate(["Velmora founded", "Ada Kessel born"][seen:])]
        return Reply("", 50, 10, finish_reason="tool_calls", tool_calls=calls)


async def test_native_tool_calls_carry_tools_and_answer_with_tool_messages() -> None:
    run = Run()
    backend = NativeBackend()
    gw = Gateway({"default": ModelSpec(id="sim/perfect")}, backend=backend, sink=run.calls.append)
    res = await go(design(tool_mode="native"), gw, run)
    assert res.answers == ["tarsk"] and res.calls == 2
    first, second = backend.requests
    assert first.req["tool_choice"] == "auto" and [t["function"]["name"] for t in first.req["tools"]] == [
        "search", "read_document"]
    assert "stop" not in first.req
    roles = [m["role"] for m in second.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool"]
    asked = second.messages[2]["tool_calls"]
    assert [c["id"] for c in asked] == ["prov-0-0", "prov-0-1"]
    assert [m["tool_call_id"] for m in second.messages[3:]] == ["prov-0-0", "prov-0-1"]
    assert second.messages[3]["content"].startswith("[d1]") and second.messages[4]["content"].startswith("[d2]")
    assert [(t.tool_call_id, t.step, t.position) for t in run.tools] == [("prov-0-0", 0, 0), ("prov-0-1", 0, 1)]


async def test_the_simulator_answers_natively_when_the_model_has_function_calling() -> None:
    run = Run()
    res = await go(design(), sim_gateway(run, function_calling=True), run)
    assert res.answers == ["tarsk"] and [t.tool_call_id for t in run.tools] == ["call_0_0", "call_1_0"]
    msgs = run.inputs(run.calls[-1].call_id)
    assert [m.role for m in msgs] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert json.loads(msgs[2].extra)["tool_calls"][0]["function"]["name"] == "search"


async def test_text_mode_stops_before_an_invented_observation() -> None:
    gw = ScriptedGateway(lambda info: "Final Answer: 1")
    await go(design(stop=["###"]), gw, Run())
    assert gw.script_backend.requests  # the request params are the attempt's; check the stop list via a backend
    seen: list[dict[str, Any]] = []

    class Spy:
        async def __call__(self, a: Attempt) -> Reply:
            seen.append(a.req)
            return Reply("Final Answer: 1", 10, 3)

    await go(design(stop=["###"]), Gateway({"default": ModelSpec(id="sim/perfect")}, backend=Spy()), Run())
    assert seen[0]["stop"] == ["###", "\nObservation:"] and "tools" not in seen[0]


# ----- fan-outs ------------------------------------------------------------------------------------

async def test_cot_sc_over_react_is_repeat_and_a_majority() -> None:
    run = Run()
    d = DesignSpec.model_validate({
        "name": "react-sc", "agents": {"searcher": {"name": "searcher", "prompt": "{question}",
                                                    "tools": ["search", "read_document"]}},
        "nodes": {"r": {"kind": "react", "agent": "searcher", "repeat": 3}, "vote": {"op": "majority", "from": "r"}},
        "output": "vote"})
    res = await go(d, sim_gateway(run), run)
    assert res.answers == ["tarsk"] and res.calls == 9 and res.detail["votes"]["vote"]["voters"] == 3
    assert len(run.tools) == 6 and len({t.call_id for t in run.tools}) == 6
    assert len([n for n in run.of(NodeRow) if n.node == "r"]) == 3


# ----- the design check ----------------------------------------------------------------------------

def problems(d: DesignSpec) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in check_design(d, None, Library())]


def test_the_check_reports_an_agent_without_tools_unknown_tools_and_bad_params() -> None:
    assert problems(design()) == []
    (field, msg), = problems(design(tools=[]))
    assert field == "nodes.r" and "has no tools: a react node needs an agent with `tools:`" in msg
    assert "calculator" in msg
    (field, msg), = problems(design(tools=["search", "gogle", "fetch"]))
    assert "unknown tools 'gogle', 'fetch'" in msg and "registered:" in msg and "read_document" in msg
    got = [m for _, m in problems(design({"max_steps": 0, "overflow": "forget", "colour": "red"}))]
    assert got == ["react max_steps: Input should be greater than or equal to 1",
                   "react overflow: Input should be 'truncate_oldest', 'summarize' or 'stop'",
                   "react colour: Extra inputs are not permitted"]
    got = problems(design(output={"json": {"answer": "str"}}))
    assert any("structured output does not apply" in m for _, m in got)


def test_the_check_places_each_problem_at_its_yaml_line(tmp_path) -> None:
    path = tmp_path / "bad_react.yaml"
    path.write_text("name: bad-react\n"
                    "agents:\n"
                    "  bare: {name: bare, prompt: '{question}'}\n"
                    "nodes:\n"
                    "  r:\n"
                    "    kind: react\n"
                    "    agent: bare\n"
                    "    params:\n"
                    "      max_steps: 0\n"
                    "output: r\n")
    with pytest.raises(SpecError) as exc:
        Library().load_path(path, "design")
    found = {p.message.split(":")[0]: (p.line, p.field) for p in exc.value.problems}
    assert found["react max_steps"] == (9, "nodes.r")
    assert found["agent 'bare' has no tools"] == (7, "nodes.r")


def test_params_may_come_from_design_params() -> None:
    d = design({"max_steps": "{steps}"})
    d = d.model_copy(update={"params": {"steps": 2}})
    assert problems(d) == []
    bad = d.model_copy(update={"params": {"steps": 99}})
    assert any("react max_steps: Input should be less than or equal to 50" in m for _, m in problems(bad))
    missing = d.model_copy(update={"params": {}})
    assert any("unknown param 'steps'" in m for _, m in problems(missing))


def test_topology_weighs_the_worst_case_and_the_render_labels_it() -> None:
    from masbench.design.topology import structure
    from masbench.runtime.render import mermaid

    assert structure(design({"max_steps": 4}), Library())["sequential_depth"] == 5
    assert structure(design({"max_steps": 4, "overflow": "summarize"}), Library())["sequential_depth"] == 9
    d = design({"max_steps": "{steps}"}).model_copy(update={"params": {"steps": 3}})
    assert structure(d, Library())["sequential_depth"] == 4
    text = mermaid(design({"max_steps": 4}), Library())
    assert "react: searcher ≤4 steps [search, read_document]" in text


# ----- spans ---------------------------------------------------------------------------------------

async def test_each_tool_call_is_an_execute_tool_span_under_its_node(memory) -> None:
    run = Run()
    await go(design(), sim_gateway(run), run)
    spans = memory.get_finished_spans()
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert [s.name for s in tools] == ["execute_tool search", "execute_tool search"]
    node = next(s for s in spans if s.name == "invoke_agent searcher")
    assert all(s.parent is not None and s.parent.span_id == node.context.span_id for s in tools)
    assert [s.attributes.get("gen_ai.tool.call.id") for s in tools] == ["call-s0-0", "call-s1-0"]


@pytest.mark.parametrize("mode, kept", [("full", ["ok", "error"]), ("errors", ["error"]), ("none", [])])
async def test_observation_texts_follow_the_transcript_mode_and_rows_are_always_kept(mode: str, kept: list) -> None:
    def script(info: dict[str, Any]) -> str:
        return "Action: search[Velmora founded]\nAction: rx_boom[x]" if len(info["messages"]) == 2 else "Final Answer: 1"

    run = Run()
    gw = ScriptedGateway(script, transcripts=TranscriptRecorder(run.transcript.append, mode))  # type: ignore[arg-type]
    await go(design(tools=["search", "rx_boom"]), gw, run)
    assert [t.status for t in run.tools] == ["ok", "error"]
    assert [t.status for t in run.tools if t.text_hash is not None] == kept
    assert {r.text_hash for r in run.of(TextRow)} == {t.text_hash for t in run.tools if t.text_hash is not None}


def test_evidence_cited_in_the_prompt_counts_as_seen() -> None:
    """A searcher given an upstream agent's ``[doc] fact`` notes is told those documents are in
    front of it (what the hop-chain design hands over), and an unrelated id is not."""
    from masbench.runtime.ops.prompted import _cites

    assert _cites("Notes:\n[d00057] The Fider stove is made by Zaprin.", "d00057")
    assert not _cites("see d000571 and xd00057", "d00057")


def test_the_label_shows_a_design_param_as_written_not_the_default() -> None:
    from masbench.runtime.info import NodeInfo
    from masbench.runtime.ops import OPS
    from masbench.spec import AgentSpec, NodeSpec

    agent = AgentSpec(name="s", prompt="{question}", tools=["search"])
    for params, shown in (({"max_steps": "{steps}"}, "≤{steps} steps"), ({"max_steps": 3}, "≤3 steps"), ({}, "≤6 steps")):
        node = NodeSpec.model_validate({"kind": "react", "agent": "s", "params": params})
        info = NodeInfo(name="n", spec=node, path=("nodes", "n"), agent=agent)
        assert shown in OPS["react"].label(info)
