"""Every cent right, on the wire: litellm's real provider code (``openai/``, ``anthropic/``,
``hosted_vllm/``, ``deepseek/``) against our local server on 127.0.0.1, each response built in the
provider's published format; every stored token class and cost is checked against the provider's
published pricing rule, with the arithmetic written out.

Published prices used (USD per 1M tokens; litellm's bundled map holds the same numbers):
- OpenAI gpt-4o-mini: input 0.15, cached input 0.075, output 0.60 (reasoning is billed as output).
- Anthropic Claude Haiku 4.5: input 1.00, 5-minute cache write 1.25, cache read 0.10, output 5.00;
  Anthropic's ``input_tokens`` excludes the cache reads and writes, which are billed on their own.
- DeepSeek deepseek-chat: cache-hit input 0.028, cache-miss input 0.28, output 0.42.
"""

from __future__ import annotations

import dataclasses

import json

import pytest

from masbench.llm import Gateway
from masbench.spec import ModelSpec
from masbench.store import StoreWriter

M = 1e6


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test-not-a-secret")


async def _call(store, spec: ModelSpec, params: dict | None = None, max_tokens: int = 64) -> dict:
    writer = StoreWriter(store)
    gw = Gateway({"m": spec}, sink=lambda r: writer.put(dataclasses.replace(r, run_id="w", purpose="smoke")),
                 retry_base_s=0.001)
    res = await gw.complete("m", [{"role": "user", "content": "What is 2 + 2?"}], max_tokens=max_tokens,
                            params=params)
    writer.flush()
    df = store.df("SELECT * FROM calls WHERE call_id = ?", [res.call_id])
    assert len(df) == 1
    row = df.iloc[0].to_dict()
    row["_result"] = res
    return row


def _classes(row: dict) -> tuple:
    return (row["prompt_fresh_tokens"], row["cached_tokens"], row["cache_write_tokens"],
            row["completion_visible_tokens"], row["reasoning_tokens"])


def _openai(srv, model: str = "openai/gpt-4o-mini", **kw) -> ModelSpec:
    return ModelSpec(id=model, api_base=srv.base_url, api_key_env="MASBENCH_TEST_KEY", **kw)


async def test_openai_fully_cached_prompt_is_billed_at_the_cached_rate(http_server, store):
    usage = {"prompt_tokens": 1024, "completion_tokens": 12, "total_tokens": 1036,
             "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
             "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}}
    srv = http_server(usage=usage, reply="Answer: 4")
    row = await _call(store, _openai(srv))  # no YAML price: litellm's bundled map
    # OpenAI: prompt_tokens INCLUDES cached_tokens -> fresh = 1024 - 1024 = 0
    assert _classes(row) == (0, 1024, 0, 12, 0)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (1024, 12)
    # 1024 cached × $0.075/M + 12 output × $0.60/M = 0.0000768 + 0.0000072 = 0.000084
    assert row["cost_usd"] == pytest.approx(1024 * 0.075 / M + 12 * 0.60 / M) == pytest.approx(0.000084)
    assert row["cost_source"] == "litellm-map" and row["status"] == "ok" and row["usage_status"] == "reported"
    assert json.loads(row["usage_raw"])["prompt_tokens_details"]["cached_tokens"] == 1024


async def test_openai_reasoning_only_completion_bills_every_reasoning_token(http_server, store):
    # An o-series reply whose whole completion is hidden reasoning: content "" but 300 tokens billed.
    usage = {"prompt_tokens": 50, "completion_tokens": 300, "total_tokens": 350,
             "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 300}}
    srv = http_server(usage=usage, reply="")
    spec = _openai(srv, "openai/o3-mini", input_usd_per_mtok=1.10, cached_input_usd_per_mtok=0.55,
                   output_usd_per_mtok=4.40)
    row = await _call(store, spec)
    # completion_tokens INCLUDES reasoning_tokens -> visible = 300 - 300 = 0
    assert _classes(row) == (50, 0, 0, 0, 300)
    # 50 × $1.10/M + 300 reasoning × $4.40/M (output rate) = 0.000055 + 0.00132 = 0.001375
    assert row["cost_usd"] == pytest.approx(50 * 1.10 / M + 300 * 4.40 / M) == pytest.approx(0.001375)
    assert row["cost_source"] == "yaml"
    assert row["status"] == "empty"  # no visible answer: its own status, not a wrong answer


async def test_anthropic_cache_write_is_billed_at_the_write_rate(http_server, store):
    srv = http_server(anthropic_usage={"input_tokens": 20, "cache_creation_input_tokens": 2000,
                                       "cache_read_input_tokens": 0, "output_tokens": 40}, reply="Answer: 4")
    spec = ModelSpec(id="anthropic/claude-haiku-4-5", api_base=srv.base_url[: -len("/v1")],
                     api_key_env="MASBENCH_TEST_KEY")
    row = await _call(store, spec)
    assert srv.stats.requests == 1  # the request went through litellm's Anthropic code to /v1/messages
    # Anthropic: input_tokens EXCLUDES cache writes -> fresh 20, write 2000, prompt total 2020
    assert _classes(row) == (20, 0, 2000, 40, 0)
    assert row["prompt_tokens"] == 2020
    # 20 × $1/M + 2000 × $1.25/M + 40 × $5/M = 0.00002 + 0.0025 + 0.0002 = 0.00272
    assert row["cost_usd"] == pytest.approx(20 * 1.00 / M + 2000 * 1.25 / M + 40 * 5.00 / M) == pytest.approx(0.00272)
    assert row["cost_source"] == "litellm-map"


async def test_anthropic_fully_cached_prompt_is_not_double_counted(http_server, store):
    srv = http_server(anthropic_usage={"input_tokens": 3, "cache_creation_input_tokens": 0,
                                       "cache_read_input_tokens": 4000, "output_tokens": 10}, reply="Answer: 4")
    spec = ModelSpec(id="anthropic/claude-haiku-4-5", api_base=srv.base_url[: -len("/v1")],
                     api_key_env="MASBENCH_TEST_KEY", input_usd_per_mtok=1.0, cached_input_usd_per_mtok=0.10,
                     cache_write_usd_per_mtok=1.25, output_usd_per_mtok=5.0)
    row = await _call(store, spec)
    assert _classes(row) == (3, 4000, 0, 10, 0)
    assert row["prompt_tokens"] == 4003  # 3 + 4000, not 4000 + 4003
    # 3 × $1/M + 4000 × $0.10/M + 10 × $5/M = 0.000003 + 0.0004 + 0.00005 = 0.000453
    assert row["cost_usd"] == pytest.approx(3 * 1.0 / M + 4000 * 0.10 / M + 10 * 5.0 / M) == pytest.approx(0.000453)
    assert row["cost_source"] == "yaml"


async def test_vllm_style_null_details_claim_no_cached_or_reasoning_tokens(http_server, store):
    usage = {"prompt_tokens": 77, "completion_tokens": 9, "total_tokens": 86,
             "prompt_tokens_details": None, "completion_tokens_details": None}
    srv = http_server(usage=usage, reply="Answer: 4")
    spec = ModelSpec(id="hosted_vllm/Qwen/Qwen2.5-0.5B-Instruct", api_base=srv.base_url,
                     input_usd_per_mtok=0.5, output_usd_per_mtok=1.5)
    row = await _call(store, spec)
    assert srv.stats.requests == 1  # litellm's hosted_vllm provider reached our server
    assert _classes(row) == (77, 0, 0, 9, 0)
    # 77 × $0.5/M + 9 × $1.5/M = 0.0000385 + 0.0000135 = 0.000052
    assert row["cost_usd"] == pytest.approx(0.000052)


async def test_deepseek_cache_hit_fields(http_server, store):
    usage = {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050, "prompt_cache_hit_tokens": 800,
             "prompt_cache_miss_tokens": 200, "prompt_tokens_details": {"cached_tokens": 800}}
    srv = http_server(usage=usage, reply="Answer: 4")
    spec = ModelSpec(id="deepseek/deepseek-chat", api_base=srv.base_url, api_key_env="MASBENCH_TEST_KEY")
    row = await _call(store, spec)
    assert srv.stats.requests == 1
    # prompt_tokens = hit + miss -> fresh 200 (the miss), read 800 (the hit)
    assert _classes(row) == (200, 800, 0, 50, 0)
    # 800 × $0.028/M + 200 × $0.28/M + 50 × $0.42/M = 0.0000224 + 0.000056 + 0.000021 = 0.0000994
    assert row["cost_usd"] == pytest.approx(0.0000994)


async def test_streamed_response_with_usage(http_server, store):
    usage = {"prompt_tokens": 600, "completion_tokens": 20, "total_tokens": 620,
             "prompt_tokens_details": {"cached_tokens": 512}, "completion_tokens_details": {"reasoning_tokens": 0}}
    srv = http_server(usage=usage, reply="Answer: 4")
    row = await _call(store, _openai(srv), params={"stream": True, "stream_options": {"include_usage": True}})
    assert row["_result"].text == "Answer: 4"
    assert _classes(row) == (88, 512, 0, 20, 0)
    # 88 × $0.15/M + 512 × $0.075/M + 20 × $0.60/M = 0.0000132 + 0.0000384 + 0.000012 = 0.0000636
    assert row["cost_usd"] == pytest.approx(0.0000636)


async def test_streamed_response_without_usage_is_usage_missing_not_zero(http_server, store):
    srv = http_server(prompt_tokens=600, completion_tokens=20, reply="Answer: 4")
    row = await _call(store, _openai(srv), params={"stream": True})  # no include_usage: no usage chunk
    res = row["_result"]
    assert row["status"] == "usage_missing" and row["usage_status"] == "missing"
    assert not res.ok and res.error.startswith("usage_missing")
    for col in ("prompt_tokens", "completion_tokens", "prompt_fresh_tokens", "completion_visible_tokens"):
        assert row[col] is None or row[col] != row[col]  # NULL (NaN in pandas), never 0
    assert row["cost_usd"] is None or row["cost_usd"] != row["cost_usd"]


async def test_usage_missing_with_opt_in_estimate_is_flagged_estimated(http_server, store):
    srv = http_server(omit_usage=True, reply="Answer: 4")
    row = await _call(store, _openai(srv, estimate_usage=True))
    assert row["usage_status"] == "estimated" and row["status"] == "ok" and row["_result"].ok
    assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0
    assert row["cost_usd"] == pytest.approx(row["prompt_tokens"] * 0.15 / M + row["completion_tokens"] * 0.60 / M)


async def test_truncated_reply_has_its_own_status(http_server, store):
    srv = http_server(prompt_tokens=10, completion_tokens=64, finish_reason="length", reply="Answer: 4 and then")
    row = await _call(store, _openai(srv))
    assert row["status"] == "truncated" and row["finish_reason"] == "length" and row["_result"].ok


async def test_provider_reported_cost_wins_and_says_so(http_server, store):
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110, "cost": 0.0123}
    srv = http_server(usage=usage, reply="Answer: 4")
    row = await _call(store, _openai(srv, input_usd_per_mtok=1.0, output_usd_per_mtok=1.0))
    assert row["cost_usd"] == pytest.approx(0.0123) and row["cost_source"] == "provider-reported"


async def test_streamed_cost_is_ours_not_litellms_stamp_from_another_registration(http_server, store):
    # litellm stamps its own bill onto a streamed usage as `usage.cost`, priced from whichever
    # registration of the model id came first in the process — here a free alias of the same id.
    # That is not a provider-reported cost: the call must be priced by our own table.
    usage = {"prompt_tokens": 600, "completion_tokens": 20, "total_tokens": 620,
             "prompt_tokens_details": {"cached_tokens": 512}, "completion_tokens_details": {"reasoning_tokens": 0}}
    srv = http_server(usage=usage, reply="Answer: 4")
    writer = StoreWriter(store)
    gw = Gateway({"free": _openai(srv, price=0), "m": _openai(srv)},
                 sink=lambda r: writer.put(dataclasses.replace(r, run_id="w", purpose="smoke")), retry_base_s=0.001)
    res = await gw.complete("m", [{"role": "user", "content": "What is 2 + 2?"}], max_tokens=64,
                            params={"stream": True, "stream_options": {"include_usage": True}})
    writer.flush()
    row = store.df("SELECT * FROM calls WHERE call_id = ?", [res.call_id]).iloc[0].to_dict()
    assert row["cost_source"] == "litellm-map"
    # 88 × $0.15/M + 512 × $0.075/M + 20 × $0.60/M = 0.0000636 (as in the test above)
    assert row["cost_usd"] == pytest.approx(0.0000636)
