"""Tool calls in the spans: ``execute_tool`` leaves under the node's span (GenAI convention names,
status, bytes, truncation, their own times; arguments and results only with content capture),
and the ``chat`` span of a reply that asked for tools (finish reason, how many, which offered)."""

from __future__ import annotations

import json
import time

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from masbench import telemetry
from masbench.llm import Attempt, Gateway, Reply
from masbench.spec import ModelSpec

from otelfix import clean_otel_env, memory  # noqa: F401 - fixtures

CALLS = [{"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"query": "Vell"}'}},
         {"id": "call_2", "type": "function", "function": {"name": "read_document", "arguments": '{"doc_id": "d1"}'}}]
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("search", "read_document")]


def test_execute_tool_spans_nest_under_the_node_with_the_convention_names(memory):
    t0 = time.time() - 2.0
    with telemetry.node("act", "react", "searcher", {"design": "react", "task_id": "t1"}):
        telemetry.execute_tool("search", call_id="call_1", status="ok", latency_s=0.25, bytes_out=812,
                               truncated=False, t_start=t0, step=0, arguments='{"query": "Vell"}',
                               result="[d1] Vell", tags={"design": "react", "node": "act"})
        telemetry.execute_tool("read_document", call_id="call_2", status="invalid_args",
                               error="doc_id: field required", latency_s=0.001, step=1)
    ok, bad, node = memory.get_finished_spans()
    assert node.name == "invoke_agent searcher"
    assert ok.parent.span_id == node.context.span_id and bad.parent.span_id == node.context.span_id
    a = ok.attributes
    assert ok.name == "execute_tool search" and ok.kind == SpanKind.INTERNAL
    assert a["gen_ai.operation.name"] == "execute_tool" and a["gen_ai.tool.name"] == "search"
    assert a["gen_ai.tool.call.id"] == "call_1" and a["gen_ai.tool.type"] == "function"
    assert (a["masbench.tool.status"], a["masbench.tool.bytes_out"], a["masbench.tool.truncated"]) == ("ok", 812, False)
    assert a["masbench.step"] == 0 and a["masbench.design"] == "react" and a["masbench.node"] == "act"
    assert ok.status.status_code == StatusCode.UNSET and "error.type" not in a
    assert ok.start_time == int(t0 * 1e9) and ok.end_time - ok.start_time == pytest.approx(0.25e9, abs=1e3)
    # content stays out unless capture is on
    assert "gen_ai.tool.call.arguments" not in a and "gen_ai.tool.call.result" not in a
    assert bad.status.status_code == StatusCode.ERROR and bad.attributes["error.type"] == "invalid_args"
    assert bad.status.description == "doc_id: field required" and "masbench.tool.bytes_out" not in bad.attributes


def test_execute_tool_exports_content_only_with_capture(clean_otel_env):
    exp = InMemorySpanExporter()
    telemetry.configure(exp, batch=False, capture_content=True)
    telemetry.execute_tool("search", call_id="c", status="refused", latency_s=0.0, arguments='{"query": "x"}',
                           result="budget exhausted")
    (sp,) = exp.get_finished_spans()
    assert sp.attributes["gen_ai.tool.call.arguments"] == '{"query": "x"}'
    assert sp.attributes["gen_ai.tool.call.result"] == "budget exhausted"
    assert sp.attributes["error.type"] == "refused"


def test_execute_tool_is_a_no_op_while_telemetry_is_off(clean_otel_env):
    assert not telemetry.enabled()
    assert telemetry.execute_tool("search", call_id=None, status="ok") is None


async def _tool_reply(a: Attempt) -> Reply:
    r = Reply("", 50, 12, finish_reason="tool_calls")
    r.tool_calls = CALLS
    return r


async def test_the_chat_span_of_a_tool_call_reply(clean_otel_env):
    exp = InMemorySpanExporter()
    telemetry.configure(exp, batch=False, capture_content=True)
    gw = Gateway({"m": ModelSpec(id="openai/gpt-4o-mini", price=0)}, backend=_tool_reply)
    res = await gw.complete("m", [{"role": "user", "content": "q"}], max_tokens=8,
                            params={"tools": TOOLS, "tool_choice": "auto"})
    assert res.status == "ok" and res.tool_calls == CALLS
    (sp,) = exp.get_finished_spans()
    a = sp.attributes
    assert a["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert a["masbench.tool_calls"] == 2 and a["masbench.tools"] == ("search", "read_document")
    (out,) = json.loads(a["gen_ai.output.messages"])
    assert out["finish_reason"] == "tool_calls"
    assert out["parts"] == [{"type": "tool_call", "id": "call_1", "name": "search", "arguments": {"query": "Vell"}},
                            {"type": "tool_call", "id": "call_2", "name": "read_document",
                             "arguments": {"doc_id": "d1"}}]
    assert "parameters" not in json.dumps(dict(a))  # the schemas never reach a span
