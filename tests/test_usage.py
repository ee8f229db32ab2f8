"""The per-family usage rules of masbench.llm.usage, on each provider's raw field names (the wire
tests in test_costs_wire.py cover the same rules through litellm)."""

from __future__ import annotations

import pytest

from masbench.llm.pricing import Prices
from masbench.llm.usage import family_of, normalize


def _cls(u):
    return (u.prompt_fresh, u.cached_read, u.cache_write, u.completion_visible, u.reasoning)


@pytest.mark.parametrize("model, base, family", [
    ("openai/gpt-4o-mini", None, "openai"), ("gpt-4o", None, "openai"), ("azure/my-deploy", None, "openai"),
    ("anthropic/claude-haiku-4-5", None, "anthropic"), ("bedrock/anthropic.claude-3", None, "anthropic"),
    ("vertex_ai/claude-sonnet-4", None, "anthropic"), ("vertex_ai/gemini-2.5-pro", None, "gemini"),
    ("gemini/gemini-2.5-flash", None, "gemini"), ("deepseek/deepseek-chat", None, "deepseek"),
    ("hosted_vllm/qwen", None, "openai-compatible"), ("openai/local", "http://127.0.0.1:8000/v1", "openai-compatible"),
])
def test_family_of(model, base, family):
    assert family_of(model, base) == family


def test_anthropic_raw_input_excludes_cache_classes():
    u = normalize({"input_tokens": 20, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 300,
                   "output_tokens": 40}, "anthropic")
    assert _cls(u) == (20, 300, 2000, 40, 0) and u.prompt_tokens == 2320


def test_gemini_raw_prompt_includes_cached_and_thoughts_are_output():
    u = normalize({"promptTokenCount": 1000, "cachedContentTokenCount": 750, "candidatesTokenCount": 30,
                   "thoughtsTokenCount": 200, "totalTokenCount": 1230}, "gemini")
    # fresh = 1000 - 750; visible = candidates (excludes thoughts); reasoning = thoughts
    assert _cls(u) == (250, 750, 0, 30, 200) and u.completion_tokens == 230


def test_deepseek_hit_and_miss():
    u = normalize({"prompt_tokens": 1000, "completion_tokens": 5, "prompt_cache_hit_tokens": 900,
                   "prompt_cache_miss_tokens": 100}, "deepseek")
    assert _cls(u) == (100, 900, 0, 5, 0)


def test_openai_shape_with_exclusive_cache_counts_never_goes_negative():
    # a provider that reports cached tokens outside prompt_tokens (Anthropic-style) in the OpenAI shape
    u = normalize({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 500}})
    assert _cls(u) == (10, 500, 0, 2, 0)


@pytest.mark.parametrize("usage", [None, {}, {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                                   {"prompt_tokens": None, "completion_tokens": None}])
def test_missing_usage_is_none_not_zero(usage):
    assert normalize(usage) is None


def test_cost_per_class_with_fallbacks():
    u = normalize({"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000,
                   "output_tokens": 50}, "anthropic")
    p = Prices(input=1e-6, output=5e-6, cached_input=1e-7, cache_write=1.25e-6)
    # 10×1 + 1000×0.1 + 100×1.25 + 50×5 = 10 + 100 + 125 + 250 = 485 micro-USD
    assert p.cost_of(u) == pytest.approx(485e-6)
    bare = Prices(input=1e-6, output=5e-6)  # no class prices: read and write at input, reasoning at output
    assert bare.cost_of(u) == pytest.approx((10 + 1000 + 100) * 1e-6 + 50 * 5e-6)
