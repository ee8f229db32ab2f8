"""Spans of a simulated suite run, captured in process with the SDK's in-memory exporter: the
GenAI attributes (token counts equal the store's ``calls`` rows), the parent chain of every model
call (chat → invoke_agent → invoke_workflow → cell → run), sub-designs nested under their node,
and message content only when opted in."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
from opentelemetry.trace import SpanKind, StatusCode

import pytest

from masbench import telemetry
from masbench.harness import RunOptions, run_suite

from otelfix import clean_otel_env, memory  # noqa: F401 - fixtures
from simsuite import write_suite


def _by_id(spans):
    return {sp.context.span_id: sp for sp in spans}


def _chain(sp, by) -> list:
    out = []
    while sp is not None:
        out.append(sp)
        sp = by.get(sp.parent.span_id) if sp.parent is not None else None
    return out


def _kind(sp) -> str:
    """The GenAI operation of a span, or the first word of its name (run, cell, majority, design…)."""
    return sp.attributes.get("gen_ai.operation.name") or sp.name.split(" ", 1)[0]


def _calls(store: Path, run_id: str) -> dict[str, tuple]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        rows = con.execute("SELECT call_id, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, "
                           "reasoning_tokens, model_alias, design, task_id, seed, purpose, node, cost_usd, cache_hit "
                           "FROM calls WHERE run_id = ?", [run_id]).fetchall()
    finally:
        con.close()
    return {r[0]: r[1:] for r in rows}


@pytest.mark.slow
async def test_a_run_exports_the_span_tree_with_the_genai_attributes_of_every_call(tmp_path, memory):
    # n=2 tasks per depth (1, 2): 4 tasks; designs cot (1 call), cot-sc k=3 (3 + a vote), debate (7)
    suite = write_suite(tmp_path, n=2, designs="[cot, {design: cot-sc, params: {k: 3}}, debate]", k_max=3)
    s = await run_suite(RunOptions(suite=str(suite)))
    spans = memory.get_finished_spans()
    by = _by_id(spans)
    names = Counter(sp.name for sp in spans)
    assert names["run simsuite"] == 1
    assert names["cell cot"] == names["cell debate"] == names["cell cot-sc[k=3]"] == names["cell __cot_pool__"] == 4
    assert names["invoke_workflow __cot_pool__"] == 4 * 3  # k_max pool samples per task, each a design run

    rows = _calls(s.store, s.run_id)
    chats = [sp for sp in spans if sp.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == len(rows) > 0
    run_span = next(sp for sp in spans if sp.name == "run simsuite")
    assert run_span.parent is None and run_span.attributes["masbench.run_id"] == s.run_id
    for sp in chats:
        a = sp.attributes
        # the token counts of the span are the calls row's (one span per row, keyed by call_id)
        prompt, completion, cached, write, reasoning, alias, design, task, seed, purpose, node, cost, hit = \
            rows[a["masbench.call_id"]]
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (prompt, completion)
        assert a["gen_ai.usage.cache_read.input_tokens"] == cached
        assert a["gen_ai.usage.cache_creation.input_tokens"] == write
        assert a["gen_ai.usage.reasoning.output_tokens"] == reasoning
        assert a["masbench.cost_usd"] == cost and a["masbench.cache_hit"] == hit
        assert (a["masbench.model_alias"], a["masbench.design"], a["masbench.task_id"], a["masbench.seed"],
                a["masbench.purpose"], a["masbench.node"]) == (alias, design, task, seed, purpose, node)
        assert a["gen_ai.provider.name"] == "sim" and a["gen_ai.request.model"] == "p60"
        assert a["gen_ai.response.model"] == "p60"
        assert a["gen_ai.response.finish_reasons"] == ("stop",)
        assert isinstance(a["gen_ai.request.temperature"], float) and a["gen_ai.request.max_tokens"] > 0
        assert a["masbench.cost_source"] == "zero-declared" and a["masbench.run_id"] == s.run_id
        assert sp.name == "chat p60" and sp.kind == SpanKind.CLIENT
        assert sp.end_time >= sp.start_time
        # content is not exported unless opted in
        assert "gen_ai.input.messages" not in a and "gen_ai.output.messages" not in a
        # the parent chain: chat → invoke_agent → invoke_workflow → cell → run, every link nested in time
        chain = _chain(sp, by)
        assert [_kind(x) for x in chain] == ["chat", "invoke_agent", "invoke_workflow", "cell", "run"]
        agent, workflow, cell = chain[1], chain[2], chain[3]
        assert agent.name == f"invoke_agent {agent.attributes['gen_ai.agent.name']}"
        assert agent.attributes["masbench.node"] == node
        assert workflow.attributes["masbench.design"] == design == cell.attributes["masbench.design"]
        assert workflow.attributes["gen_ai.workflow.name"] == workflow.name.split(" ", 1)[1]
        assert cell.attributes["masbench.task_id"] == task and cell.attributes["masbench.seed"] == seed
        assert chain[-1] is run_span
        for child, parent in zip(chain, chain[1:]):
            assert child.context.trace_id == run_span.context.trace_id
            assert parent.start_time <= child.start_time and child.end_time <= parent.end_time
    # a design run's span carries its outcome: calls and tokens add up to its chat spans
    for wf in (sp for sp in spans if sp.attributes.get("gen_ai.operation.name") == "invoke_workflow"):
        mine = [c for c in chats if _chain(c, by)[2] is wf]
        assert wf.attributes["masbench.calls"] == len(mine)
        assert wf.attributes["masbench.prompt_tokens"] == sum(c.attributes["gen_ai.usage.input_tokens"] for c in mine)
        assert wf.attributes["masbench.status"] in ("ok", "degraded")
    # a node without an agent is "{op} {node}" under its design run (cot-sc's vote)
    votes = [sp for sp in spans if sp.name == "majority vote"]
    assert len(votes) == 4 and all(_kind(by[v.parent.span_id]) == "invoke_workflow" for v in votes)
    assert "gen_ai.operation.name" not in votes[0].attributes and votes[0].attributes["masbench.op"] == "majority"
    # a clean simulated run has no error span
    assert all(sp.status.status_code != StatusCode.ERROR for sp in spans)


@pytest.mark.slow
async def test_a_sub_design_nests_under_the_node_that_runs_it(tmp_path, memory):
    lib = tmp_path / "lib"
    (lib / "orchestrators").mkdir(parents=True)
    (lib / "orchestrators" / "wrap-cot.yaml").write_text("name: wrap-cot\nnodes:\n  inner: {design: cot}\n"
                                                         "output: inner\n")
    suite = write_suite(tmp_path, name="wrapsuite", n=1, designs="[wrap-cot]", k_max=1)
    await run_suite(RunOptions(suite=str(suite), lib=[lib]))
    spans = memory.get_finished_spans()
    by = _by_id(spans)
    chats = [sp for sp in spans if sp.name.startswith("chat ") and sp.attributes["masbench.design"] == "wrap-cot"]
    assert len(chats) == 2  # one task per depth (1, 2): two cells of one call each
    for sp in chats:
        chain = _chain(sp, by)
        assert [x.name for x in chain] == ["chat p60", "invoke_agent cot-solver", "invoke_workflow cot",
                                           "design inner", "invoke_workflow wrap-cot", "cell wrap-cot",
                                           "run wrapsuite"]
        assert chain[2].attributes["masbench.sub_design"] == "inner"
        assert chain[1].attributes["masbench.node"] == "inner/solve"


@pytest.mark.slow
async def test_message_content_is_exported_only_when_opted_in(tmp_path, clean_otel_env):
    """With the opt-in variable, each chat span carries exactly the messages the gateway sent and
    the reply it got back, in the conventions' JSON structure."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from masbench.llm.sim_backend import SimBackend

    sent: dict[str, tuple[list, str]] = {}
    real = SimBackend.__call__

    async def recording(self, a):
        reply = await real(self, a)
        if a.tags["purpose"] == "design":
            sent[a.tags["task_id"]] = ([dict(m) for m in a.messages], reply.text)
        return reply

    clean_otel_env.setattr(SimBackend, "__call__", recording)
    clean_otel_env.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exp = InMemorySpanExporter()
    telemetry.configure(exp, batch=False)  # capture_content=None: the variable decides
    suite = write_suite(tmp_path, n=1, designs="[cot]", k_max=1)
    await run_suite(RunOptions(suite=str(suite)))
    chats = [sp for sp in exp.get_finished_spans() if sp.name.startswith("chat ")
             and sp.attributes["masbench.purpose"] == "design"]
    assert len(chats) == len(sent) == 2  # one cot call per task (depths 1 and 2)
    for sp in chats:
        messages, reply = sent[sp.attributes["masbench.task_id"]]
        inp = json.loads(sp.attributes["gen_ai.input.messages"])
        assert inp == [{"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]} for m in messages]
        out = json.loads(sp.attributes["gen_ai.output.messages"])
        assert out == [{"role": "assistant", "parts": [{"type": "text", "content": reply}],
                        "finish_reason": sp.attributes["gen_ai.response.finish_reasons"][0]}]
