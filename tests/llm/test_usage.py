"""The per-family usage rules of masbench.llm.usage, on each provider's raw field names (the wire
tests in tests/llm/test_costs_wire.py cover the same rules through litellm)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import BaseModel

from masbench.llm.pricing import Prices
from masbench.llm.usage import as_dict, estimated, family_of, normalize


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


# The module table's rules on the cases the tests above leave open (each expected split worked out
# from the rule in the module docstring).

@pytest.mark.parametrize("model, base, family", [
    ("bedrock_converse/anthropic.claude-3", None, "anthropic"), ("bedrock/amazon.nova-pro", None, "openai"),
    ("vertex_ai_beta/gemini-2.0", None, "gemini"), ("Anthropic/claude-x", None, "anthropic"),
    ("hosted_vllm/org/model", None, "openai-compatible"),  # the provider is the first segment only
    ("local-model", "http://127.0.0.1:8000/v1", "openai-compatible"),  # a bare id is OpenAI's, here a local server
    ("deepseek", None, "openai"),  # a bare id names no provider, even one spelled like a provider
])
def test_family_of_more(model, base, family):
    assert family_of(model, base) == family


def test_details_objects_are_read_by_attribute():
    # litellm hands over details as objects, not dicts; one without the field claims nothing
    u = normalize({"prompt_tokens": 100, "completion_tokens": 20,
                   "prompt_tokens_details": SimpleNamespace(cached_tokens=40),
                   "completion_tokens_details": SimpleNamespace(reasoning_tokens=15)})
    assert _cls(u) == (60, 40, 0, 5, 15)
    u = normalize({"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": SimpleNamespace(),
                   "completion_tokens_details": SimpleNamespace(audio_tokens=3)})
    assert _cls(u) == (100, 0, 0, 20, 0)


def test_unreadable_counts_are_zero():
    u = normalize({"prompt_tokens": "n/a", "completion_tokens": 5})
    assert _cls(u) == (0, 0, 0, 5, 0)


def test_as_dict_of_each_usage_type():
    class Details(BaseModel):
        cached_tokens: int | None = None

    class U(BaseModel):
        prompt_tokens: int
        tags: set[int] = set()
        details: Details | None = None
        note: str | None = None

    # pydantic: JSON-ready (a set becomes a list) and without the None fields
    assert as_dict(U(prompt_tokens=5, tags={3}, details=Details(cached_tokens=2))) == \
        {"prompt_tokens": 5, "tags": [3], "details": {"cached_tokens": 2}}
    ns = SimpleNamespace(prompt_tokens=5, completion_tokens=2)
    ns._private = 1
    assert as_dict(ns) == {"prompt_tokens": 5, "completion_tokens": 2}  # a plain object: its public fields
    assert as_dict({"a": 1}) == {"a": 1} and as_dict(None) is None


def test_family_is_carried_and_defaults_to_openai():
    assert normalize({"prompt_tokens": 1, "completion_tokens": 1}).family == "openai"
    assert normalize({"prompt_tokens": 1, "completion_tokens": 1}, "deepseek").family == "deepseek"
    e = estimated(12, 3, "gemini")
    assert (e.family, e.estimated, _cls(e)) == ("gemini", True, (12, 0, 0, 3, 0))


def test_gemini_raw_with_one_side_only():
    u = normalize({"candidatesTokenCount": 30, "thoughtsTokenCount": 5}, "gemini")  # no prompt count sent
    assert _cls(u) == (0, 0, 0, 30, 5)
    u = normalize({"promptTokenCount": 100}, "gemini")  # no completion count sent
    assert _cls(u) == (100, 0, 0, 0, 0)


def test_openai_shape_without_prompt_tokens_is_not_anthropic_raw():
    assert _cls(normalize({"completion_tokens": 5})) == (0, 0, 0, 5, 0)
    # both spellings present (litellm adds input_tokens to its OpenAI object): the OpenAI rule applies
    u = normalize({"prompt_tokens": 100, "completion_tokens": 10, "input_tokens": 100, "output_tokens": 10,
                   "prompt_tokens_details": {"cached_tokens": 40}})
    assert _cls(u) == (60, 40, 0, 10, 0)


def test_anthropic_raw_input_is_exclusive_even_when_it_could_hold_the_cache():
    # input 500 excludes the 100 read and 50 written (they are not inside the 500)
    u = normalize({"input_tokens": 500, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 50,
                   "output_tokens": 7}, "anthropic")
    assert _cls(u) == (500, 100, 50, 7, 0) and u.prompt_tokens == 650


def test_deepseek_hit_field_is_read_whatever_the_family():
    u = normalize({"prompt_tokens": 1000, "completion_tokens": 5, "prompt_cache_hit_tokens": 900,
                   "prompt_cache_miss_tokens": 100}, "openai")
    assert _cls(u) == (100, 900, 0, 5, 0)


def test_litellm_anthropic_shape_cache_fields():
    # litellm's OpenAI shape of an Anthropic call: prompt = input + read + creation
    u = normalize({"prompt_tokens": 2320, "completion_tokens": 40, "cache_read_input_tokens": 300,
                   "cache_creation_input_tokens": 2000}, "anthropic")
    assert _cls(u) == (20, 300, 2000, 40, 0)
    # the write count can come in the details object instead
    u = normalize({"prompt_tokens": 1000, "completion_tokens": 4,
                   "prompt_tokens_details": {"cached_tokens": 100, "cache_creation_tokens": 250}})
    assert _cls(u) == (650, 100, 250, 4, 0)


def test_zero_prompt_with_a_completion_is_usage_not_missing():
    u = normalize({"prompt_tokens": 0, "completion_tokens": 5})
    assert u is not None and _cls(u) == (0, 0, 0, 5, 0)


def test_cached_plus_written_above_the_prompt_means_exclusive():
    # 60 read + 50 written > 100 prompt: they cannot be inside it, so the 100 are all fresh
    u = normalize({"prompt_tokens": 100, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 60},
                   "cache_creation_input_tokens": 50})
    assert _cls(u) == (100, 60, 50, 1, 0)
