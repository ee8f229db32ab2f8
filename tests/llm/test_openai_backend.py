"""The ``openai`` client (``openai.AsyncOpenAI`` directly) and the ``litellm`` client record the same
``calls`` rows: each scenario runs through both against its own copy of our local server on
127.0.0.1 (same config, so the same faults in the same order), and the rows are compared column by
column minus what differs by nature (ids, timestamps, latency, and ``usage_raw``: the usage object
as the client handed it, which litellm rebuilds with fields of its own). The expected numbers are
written out by hand from the server's configured usage and the YAML prices."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest

from masbench.llm import Gateway, ResponseCache
from masbench.llm.backends import provider_of
from masbench.llm.health import BreakerConfig
from masbench.llm.litellm_sdk import LitellmClient
from masbench.llm.openai_backend import OpenAIBackend, wire_model
from masbench.spec import ModelSpec
from masbench.spec.problems import SpecError
from masbench.store import Store, StoreWriter

M = 1e6
CLIENTS = ("litellm", "openai")
VOLATILE = ("call_id", "ts", "t_start", "latency_s", "usage_raw")
USAGE = {"prompt_tokens": 37, "completion_tokens": 11, "total_tokens": 48,
         "prompt_tokens_details": {"cached_tokens": 5}, "completion_tokens_details": {"reasoning_tokens": 4}}
# fresh 37 - 5 = 32 at $2/M, cached 5 at $1/M, visible 11 - 4 = 7 at $8/M, reasoning 4 at $10/M
USAGE_CLASSES = (32, 5, 0, 7, 4)
USAGE_COST = (32 * 2 + 5 * 1 + 7 * 8 + 4 * 10) / M  # = 165e-6
TAGS = {"design": "d", "task_id": "t", "seed": 0, "node": "n", "agent": "a"}


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test-not-a-secret")
    # client: litellm means litellm.acompletion here (not its SDK path: tests/llm/test_litellm_sdk.py)
    monkeypatch.setenv("MASBENCH_LITELLM_SDK", "0")


def _spec(base: str, client: str, **kw: Any) -> ModelSpec:
    return ModelSpec(id="openai/fake-model", api_base=base, api_key_env="MASBENCH_TEST_KEY", client=client,
                     input_usd_per_mtok=2.0, cached_input_usd_per_mtok=1.0, output_usd_per_mtok=8.0,
                     reasoning_usd_per_mtok=10.0, **kw)


async def _run(tmp_path, http_server, client: str, server: dict[str, Any], calls: list[dict[str, Any]],
               cache: ResponseCache | None = None, srv=None, **spec_kw: Any) -> tuple[list[dict[str, Any]], Gateway, Any]:
    """The ``calls`` rows (in call order, volatile columns dropped) of ``calls`` made through one client."""
    srv = srv or http_server(**server)
    store = Store(tmp_path / f"{client}-{id(calls)}-{len(list(tmp_path.iterdir()))}.duckdb")
    writer = StoreWriter(store)
    gw = Gateway({"m": _spec(srv.base_url, client, **spec_kw)}, cache=cache, retry_base_s=0.01, retry_max_s=0.02,
                 breaker=BreakerConfig(cooldown_s=0.05), sink=lambda r: writer.put(dataclasses.replace(r, run_id="x")))
    assert type(gw.provider(gw.models["m"])) is (OpenAIBackend if client == "openai" else LitellmClient)
    order = []
    for i, c in enumerate(calls):
        res = await gw.complete("m", [{"role": "user", "content": c.get("prompt", f"question {i}")}], max_tokens=16,
                                tags=TAGS, params=c.get("params"))
        order.append(res.call_id)
    writer.flush()
    df = store.df("SELECT * FROM calls")
    rows = {r["call_id"]: {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in df.to_dict("records")}  # pandas reads NULL floats as NaN (never equal to itself)
    raw = [rows[cid]["usage_raw"] for cid in order]
    out = [{k: v for k, v in rows[cid].items() if k not in VOLATILE} | {"_usage_raw": u} for cid, u in zip(order, raw)]
    store.close()
    return out, gw, srv


async def _both(tmp_path, http_server, litellm_spy, server: dict[str, Any], calls: list[dict[str, Any]],
                **spec_kw: Any) -> tuple[list[dict[str, Any]], dict[str, tuple[Gateway, Any]]]:
    """Run through both clients; assert their rows equal; return the rows (of the openai client)."""
    rows: dict[str, list[dict[str, Any]]] = {}
    ctx: dict[str, tuple[Gateway, Any]] = {}
    for client in CLIENTS:
        before = len(litellm_spy)
        got, gw, srv = await _run(tmp_path, http_server, client, server, calls, **spec_kw)
        rows[client], ctx[client] = got, (gw, srv)
        if client == "openai":
            assert len(litellm_spy) == before, "the openai client went through litellm"
        else:
            assert len(litellm_spy) > before or all(r["attempts"] == 0 for r in got)
    strip = [{k: v for k, v in r.items() if k != "_usage_raw"} for r in rows["litellm"]]
    assert strip == [{k: v for k, v in r.items() if k != "_usage_raw"} for r in rows["openai"]]
    return rows["openai"], ctx


def _classes(r: dict[str, Any]) -> tuple:
    return (r["prompt_fresh_tokens"], r["cached_tokens"], r["cache_write_tokens"], r["completion_visible_tokens"],
            r["reasoning_tokens"])


async def test_normal_call_tokens_by_class_and_cost(tmp_path, http_server, litellm_spy):
    rows, ctx = await _both(tmp_path, http_server, litellm_spy, {"usage": USAGE, "reply": "Answer: 7"}, [{}, {}])
    for r in rows:
        assert _classes(r) == USAGE_CLASSES and (r["prompt_tokens"], r["completion_tokens"]) == (37, 11)
        assert r["cost_usd"] == pytest.approx(USAGE_COST) and r["cost_source"] == "yaml"
        assert (r["status"], r["attempts"], r["error"], r["cache_hit"], r["finish_reason"]) == ("ok", 1, None, False,
                                                                                                   "stop")
        assert json.loads(r["request"]) == {"max_tokens": 16}
        # the openai client keeps the usage object exactly as the server sent it
        assert json.loads(r["_usage_raw"]) == USAGE
    for _, srv in ctx.values():
        assert srv.stats.requests == 2 and set(srv.stats.auth_headers) == {"Bearer sk-test-not-a-secret"}
        assert [m[0]["content"] for m in srv.stats.messages] == ["question 0", "question 1"]


@pytest.mark.slow
async def test_a_call_cached_through_one_client_is_a_hit_through_the_other(tmp_path, http_server, litellm_spy):
    hits = {}
    for first, second in (("litellm", "openai"), ("openai", "litellm")):
        srv = http_server(usage=USAGE, reply="Answer: 7")
        cache = ResponseCache(tmp_path / f"cache-{first}.sqlite")
        made, _, _ = await _run(tmp_path, http_server, first, {}, [{}], cache=cache, srv=srv)
        hit, _, _ = await _run(tmp_path, http_server, second, {}, [{}], cache=cache, srv=srv)
        assert srv.stats.requests == 1  # the second client never reached the server
        assert made[0]["cache_hit"] is False and hit[0]["cache_hit"] is True and hit[0]["attempts"] == 0
        assert _classes(hit[0]) == USAGE_CLASSES and hit[0]["cost_usd"] == pytest.approx(USAGE_COST)
        assert hit[0]["status"] == "ok"
        hits[second] = {k: v for k, v in hit[0].items() if k != "_usage_raw"}
        cache.close()
    assert hits["openai"] == hits["litellm"]


@pytest.mark.slow
@pytest.mark.parametrize("include_usage", [True, False])
async def test_streamed(tmp_path, http_server, litellm_spy, include_usage):
    params = {"stream": True, **({"stream_options": {"include_usage": True}} if include_usage else {})}
    rows, _ = await _both(tmp_path, http_server, litellm_spy, {"usage": USAGE, "reply": "Answer: 7"},
                          [{"params": params}])
    r = rows[0]
    if include_usage:
        assert _classes(r) == USAGE_CLASSES and r["cost_usd"] == pytest.approx(USAGE_COST) and r["status"] == "ok"
    else:  # no usage chunk: usage_missing (NULL tokens), never 0
        assert r["status"] == "usage_missing" and r["prompt_tokens"] is None and r["cost_usd"] is None
        assert r["usage_status"] == "missing" and "usage_missing" in r["error"]


@pytest.mark.parametrize("stream", [False, True])
async def test_truncated(tmp_path, http_server, litellm_spy, stream):
    params = {"stream": True, "stream_options": {"include_usage": True}} if stream else None
    rows, _ = await _both(tmp_path, http_server, litellm_spy,
                          {"usage": USAGE, "reply": "The answer is", "finish_reason": "length"}, [{"params": params}])
    r = rows[0]
    assert (r["finish_reason"], r["status"]) == ("length", "truncated")
    assert _classes(r) == USAGE_CLASSES and r["cost_usd"] == pytest.approx(USAGE_COST)


@pytest.mark.slow
@pytest.mark.waits
async def test_429_with_retry_after_is_waited_for_then_retried(tmp_path, http_server, litellm_spy):
    rows, ctx = await _both(tmp_path, http_server, litellm_spy,
                            {"usage": USAGE, "fail_first": 1, "fail_kinds": ("429",), "retry_after": "1"}, [{}],
                            max_attempts=3)
    r = rows[0]
    assert (r["status"], r["attempts"], r["error"]) == ("ok", 2, None)
    errs = json.loads(r["attempt_errors"])
    assert len(errs) == 1 and errs[0].startswith("RateLimitError[429]") and "Rate limit reached" in errs[0]
    for gw, srv in ctx.values():
        t = srv.stats.request_times
        assert len(t) == 2 and t[1] - t[0] >= 1.0
        assert gw.stats["retry_after_waits"] == 1 and gw.fatal is None


async def test_401_stops_the_model_after_one_request(tmp_path, http_server, litellm_spy):
    rows, ctx = await _both(tmp_path, http_server, litellm_spy, {"fail_first": 5, "fail_kinds": ("401",)}, [{}, {}],
                            max_attempts=3)
    first, second = rows
    assert (first["status"], first["attempts"], first["cost_usd"], first["prompt_tokens"]) == ("error", 1, 0.0, 0)
    assert first["error"].startswith("AuthenticationError[401]") and "Incorrect API key" in first["error"]
    assert (second["status"], second["attempts"]) == ("error", 0)
    assert second["error"].startswith("ModelUnavailable: not sent: model 'm'")
    for gw, srv in ctx.values():
        assert srv.stats.requests == 1  # the second call was never sent
        assert gw.fatal is not None and gw.fatal[:2] == ("m", "openai/fake-model") and "401" in gw.fatal[2]


async def test_400_is_not_retried(tmp_path, http_server, litellm_spy):
    rows, ctx = await _both(tmp_path, http_server, litellm_spy, {"fail_first": 1, "fail_kinds": ("400",)}, [{}],
                            max_attempts=3)
    r = rows[0]
    assert (r["status"], r["attempts"], r["attempt_errors"]) == ("error", 1, json.dumps([r["error"]]))
    assert r["error"].startswith("BadRequestError[400]")
    for gw, srv in ctx.values():
        assert srv.stats.requests == 1 and gw.fatal is None


async def test_500_then_success_is_retried(tmp_path, http_server, litellm_spy):
    rows, _ = await _both(tmp_path, http_server, litellm_spy,
                          {"usage": USAGE, "fail_first": 2, "fail_kinds": ("500",)}, [{}], max_attempts=3)
    r = rows[0]
    assert (r["status"], r["attempts"]) == ("ok", 3) and len(json.loads(r["attempt_errors"])) == 2
    assert all(e.startswith("InternalServerError[500]") for e in json.loads(r["attempt_errors"]))


def test_client_auto_picks_the_sdk_for_openai_protocol_servers_only():
    base = "http://127.0.0.1:9/v1"
    assert provider_of(ModelSpec(id="openai/m", api_base=base)) == "openai"
    assert provider_of(ModelSpec(id="hosted_vllm/Qwen/Qwen2.5-7B", api_base=base)) == "openai"
    assert provider_of(ModelSpec(id="openai/gpt-4o-mini")) == "litellm"  # hosted: litellm adapts params
    assert provider_of(ModelSpec(id="anthropic/claude-haiku-4-5", api_base=base)) == "litellm"
    assert provider_of(ModelSpec(id="openai/m", api_base=base, client="litellm")) == "litellm"
    assert provider_of(ModelSpec(id="openai/gpt-4o-mini", client="openai")) == "openai"
    assert provider_of(ModelSpec(id="sim/p60")) == "sim"
    assert wire_model(ModelSpec(id="hosted_vllm/Qwen/Qwen2.5-7B")) == "Qwen/Qwen2.5-7B"
    assert wire_model(ModelSpec(id="gpt-4o")) == "gpt-4o"


def test_a_client_on_a_provider_with_its_own_backend_is_refused_with_its_field():
    from masbench.llm import require_prices

    with pytest.raises(ValueError, match="client: openai does not apply to 'sim/p60'"):
        provider_of(ModelSpec(id="sim/p60", client="openai"))
    with pytest.raises(SpecError) as ei:
        require_prices({"s": ModelSpec(id="embedded/smollm2", client="litellm")}, "suite.yaml")
    assert "models.s.client" in str(ei.value) and "client: litellm does not apply" in str(ei.value)


async def test_every_request_parameter_reaches_the_server_in_the_body(http_server, litellm_spy, monkeypatch):
    """A parameter the SDK has no argument for (``top_k``) is sent in the JSON body like the known
    ones: as they are in a whole completion's body, under ``extra_body`` for a streamed one."""
    from openai import AsyncOpenAI

    bodies: list[dict[str, Any]] = []
    post = AsyncOpenAI.post

    async def spy_post(self, path, *, body=None, **kw):
        bodies.append(dict(body or {}))
        return await post(self, path, body=body, **kw)

    monkeypatch.setattr(AsyncOpenAI, "post", spy_post)
    srv = http_server(usage=USAGE)
    params = {"top_k": 5, "temperature": 0.3}
    gw = Gateway({"m": _spec(srv.base_url, "openai", params=params)})
    res = await gw.complete("m", [{"role": "user", "content": "q"}], max_tokens=16)
    assert res.ok and litellm_spy == [] and srv.stats.requests == 1
    assert bodies == [{"model": "fake-model", "messages": [{"role": "user", "content": "q"}], "max_tokens": 16,
                       **params}]
    from masbench.llm.backends import Attempt

    spec = gw.models["m"]
    streamed = {**params, "stream": True, "max_tokens": 16}
    kw = gw.provider(spec).request(spec, Attempt("m", spec, [], streamed, 0, 1, {}, {}))
    assert kw == {"temperature": 0.3, "stream": True, "max_tokens": 16, "extra_body": {"top_k": 5},
                  "timeout": spec.timeout_s}
    await gw.aclose()
