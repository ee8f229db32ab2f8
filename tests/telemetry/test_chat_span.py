"""The ``chat`` span of one gateway call (every token class, the request's allow-listed
parameters, the server host, errors and usage-missing as ERROR with ``error.type``, cache hits, no
secret anywhere), the ``execute_tool`` helper, exceptions through a span, and the off path."""

from __future__ import annotations

import json

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from masbench import telemetry
from masbench.llm import Attempt, Gateway, Reply, ResponseCache
from masbench.llm.errors import SimFault
from masbench.spec import ModelSpec

from otelfix import clean_otel_env, memory  # noqa: F401 - fixtures

CANARY = "sk-canary-7f3a9b1c-do-not-export"
MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 40 + 2?"}]


def _spec(**kw) -> ModelSpec:
    return ModelSpec(id="openai/gpt-4o-mini", price=0, **kw)


async def _rich_reply(a: Attempt) -> Reply:
    return Reply("Answer: 42", 120, 40, cached_tokens=30, finish_reason="stop", cache_write_tokens=5,
                 reasoning_tokens=7)


async def test_a_call_span_carries_every_token_class_and_the_request(memory):
    gw = Gateway({"m": _spec()}, backend=_rich_reply)
    tags = {"run_id": "r1", "design": "cot", "task_id": "t1", "seed": 0, "purpose": "design", "node": "solve",
            "agent": "cot-solver"}
    res = await gw.complete("m", MSGS, temperature=0.3, max_tokens=64, params={"top_p": 0.9, "stop": ["\n\n"]},
                            tags=tags)
    (sp,) = memory.get_finished_spans()
    a = sp.attributes
    assert sp.name == "chat gpt-4o-mini" and sp.kind == SpanKind.CLIENT
    assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "openai"
    assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == "gpt-4o-mini"
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (120, 40)
    assert a["gen_ai.usage.cache_read.input_tokens"] == 30 and a["gen_ai.usage.cache_creation.input_tokens"] == 5
    assert a["gen_ai.usage.reasoning.output_tokens"] == 7
    assert a["gen_ai.request.temperature"] == 0.3 and a["gen_ai.request.max_tokens"] == 64
    assert a["gen_ai.request.top_p"] == 0.9 and a["gen_ai.request.stop_sequences"] == ("\n\n",)
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["masbench.call_id"] == res.call_id and a["masbench.cost_usd"] == 0.0
    assert a["masbench.cost_source"] == "zero-declared" and a["masbench.cache_hit"] is False
    assert (a["masbench.design"], a["masbench.task_id"], a["masbench.seed"], a["masbench.node"],
            a["masbench.agent"], a["masbench.purpose"], a["masbench.run_id"]) == ("cot", "t1", 0, "solve",
                                                                                 "cot-solver", "design", "r1")
    assert sp.status.status_code == StatusCode.UNSET
    assert (sp.end_time - sp.start_time) == pytest.approx(res.latency_s * 1e9, abs=2e6)


async def test_no_key_header_or_url_secret_reaches_a_span_even_with_content_on(clean_otel_env):
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exp = InMemorySpanExporter()
    telemetry.configure(exp, batch=False, capture_content=True)
    clean_otel_env.setenv("OPENAI_API_KEY", CANARY)
    spec = _spec(api_base=f"http://user:{CANARY}@127.0.0.1:9/v1?key={CANARY}",
                 params={"api_key": CANARY, "extra_headers": {"Authorization": f"Bearer {CANARY}"}})
    gw = Gateway({"m": spec}, backend=_rich_reply)
    await gw.complete("m", MSGS, max_tokens=8)
    (sp,) = exp.get_finished_spans()
    assert sp.attributes["server.address"] == "127.0.0.1" and sp.attributes["server.port"] == 9
    assert "gen_ai.input.messages" in sp.attributes  # content is on, and still no secret
    dump = json.dumps({k: str(v) for k, v in sp.attributes.items()}) + sp.name + str(sp.resource.attributes)
    assert CANARY not in dump


async def test_a_failed_call_is_an_error_span_with_its_error_type(memory):
    async def refuse(a: Attempt) -> Reply:
        raise SimFault(400, "bad request: no such parameter")

    gw = Gateway({"m": _spec()}, backend=refuse, retry_base_s=0.001)
    res = await gw.complete("m", MSGS)
    assert res.error is not None
    (sp,) = memory.get_finished_spans()
    assert sp.status.status_code == StatusCode.ERROR and sp.attributes["error.type"] == "SimFault[400]"
    assert sp.attributes["masbench.status"] == "error"
    assert sp.attributes["masbench.attempts"] == res.attempts
    # the calls row of a failed call reports zero usage; so does the span (nothing was billed)
    assert sp.attributes["gen_ai.usage.input_tokens"] == 0 and sp.attributes["gen_ai.usage.output_tokens"] == 0


async def test_a_usage_missing_call_has_no_token_counts_and_says_why(memory):
    async def no_usage(a: Attempt) -> Reply:
        return Reply("Answer: 4", 0, 0, finish_reason="stop", usage_status="missing")

    gw = Gateway({"m": _spec()}, backend=no_usage)
    await gw.complete("m", MSGS, max_tokens=16)
    (sp,) = memory.get_finished_spans()
    assert not any(k.startswith("gen_ai.usage.") for k in sp.attributes)  # the calls row's NULLs: no 0 claimed
    assert "masbench.cost_usd" not in sp.attributes
    assert sp.attributes["error.type"] == "usage_missing" and sp.status.status_code == StatusCode.ERROR


async def test_a_cache_hit_is_a_span_too_with_the_original_tokens(memory, tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    gw = Gateway({"m": _spec()}, backend=_rich_reply, cache=cache)
    await gw.complete("m", MSGS, max_tokens=8)
    await gw.complete("m", MSGS, max_tokens=8)
    cache.close()
    first, hit = memory.get_finished_spans()
    assert first.attributes["masbench.cache_hit"] is False and hit.attributes["masbench.cache_hit"] is True
    for k in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens"):
        assert hit.attributes[k] == first.attributes[k]


def test_an_exception_through_a_span_marks_it_and_propagates(memory):
    with pytest.raises(ValueError, match="boom"):
        with telemetry.node("n", "python", None, {"design": "d"}):
            raise ValueError("boom")
    (sp,) = memory.get_finished_spans()
    assert sp.name == "python n" and sp.attributes["error.type"] == "ValueError"
    assert sp.status.status_code == StatusCode.ERROR and sp.attributes["masbench.design"] == "d"


async def test_off_every_site_is_the_one_no_op_and_a_call_still_works(clean_otel_env):
    telemetry.disable()
    assert not telemetry.enabled()
    with telemetry.run("r", "s", cells=1, simulated=True) as h:
        assert h is telemetry.OFF
        h.cell_result(False)  # no-ops
    assert telemetry.cell("r", "design", "d", "t", 0) is telemetry.node("n", "op", "a", {})
    gw = Gateway({"m": _spec()}, backend=_rich_reply)
    res = await gw.complete("m", MSGS)
    assert res.text == "Answer: 42" and telemetry.carrier() is None
    assert await telemetry.aflush() is True
