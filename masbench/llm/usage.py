"""Token classes: what a provider's usage object means, normalised to five disjoint counts.

Every call is stored as five classes that never overlap, so a price per class can be applied
without double counting:

- ``prompt_fresh``: input tokens billed at the plain input rate;
- ``cached_read``: input tokens served from the provider's prompt cache (cache-read rate);
- ``cache_write``: input tokens written to the cache on this call (cache-write rate);
- ``completion_visible``: output tokens of the visible reply;
- ``reasoning``: hidden reasoning ("thinking") output tokens.

The store's ``prompt_tokens`` is ``prompt_fresh + cached_read + cache_write`` (every input token the
model read) and ``completion_tokens`` is ``completion_visible + reasoning`` (every output token
billed) — the meaning those columns always had.

Which reported count includes which, per provider family (the provider's own field names; litellm
hands us an OpenAI-shaped object and keeps the provider's extra fields, both shapes are read):

======================  ==========================================================================
family                  rule
======================  ==========================================================================
``openai`` (OpenAI,     ``prompt_tokens`` INCLUDES ``prompt_tokens_details.cached_tokens`` (cache
Azure)                  read; writes are not reported or billed). ``completion_tokens`` INCLUDES
                        ``completion_tokens_details.reasoning_tokens``.
``anthropic``           Raw: ``input_tokens`` EXCLUDES ``cache_read_input_tokens`` and
(Anthropic, Bedrock /   ``cache_creation_input_tokens``; the three add up to the input. litellm's
Vertex Claude)          OpenAI shape: ``prompt_tokens`` = input + read + creation,
                        ``prompt_tokens_details.cached_tokens`` = read, ``cache_creation_input_tokens``
                        = write. ``output_tokens`` includes thinking; Anthropic does not split it
                        (a ``reasoning_tokens`` litellm derives from the thinking text is kept as
                        the split; the billed total is unchanged).
``gemini`` (Gemini,     Raw ``usageMetadata``: ``promptTokenCount`` INCLUDES
Vertex AI)              ``cachedContentTokenCount``; ``candidatesTokenCount`` EXCLUDES
                        ``thoughtsTokenCount`` (thoughts are billed as output, added here).
                        litellm's shape follows the OpenAI rule.
``deepseek``            ``prompt_tokens`` = ``prompt_cache_hit_tokens`` + ``prompt_cache_miss_tokens``
                        (hit = cache read); reasoning as OpenAI.
``openai-compatible``   vLLM / SGLang / llama.cpp / Ollama servers: the OpenAI rule; the details
(local servers)         objects are often ``null`` (then no cached or reasoning tokens are claimed).
======================  ==========================================================================

Guard for all families: a cached count larger than the reported prompt means the provider reported
it *exclusive* of the prompt (as raw Anthropic does) — the prompt is then taken as the fresh part
instead of going negative. A usage object that is absent, or whose prompt and completion counts are
both zero/absent, is *missing* (:func:`normalize` returns None): it is never read as 0 tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

FAMILIES = ("openai", "anthropic", "gemini", "deepseek", "openai-compatible")

_LOCAL_PREFIXES = ("hosted_vllm", "vllm", "sglang", "llamacpp", "llama_cpp", "ollama", "ollama_chat", "lm_studio",
                   "embedded", "openai_like")


@dataclass(frozen=True, slots=True)
class Usage:
    """One call's tokens by class (disjoint), plus what the provider sent."""

    prompt_fresh: int = 0
    cached_read: int = 0
    cache_write: int = 0
    completion_visible: int = 0
    reasoning: int = 0
    family: str = "openai"
    raw: dict[str, Any] | None = field(default=None, compare=False)
    """The usage object as received (for audit)."""
    reported_cost: float | None = None
    """USD the provider itself reported for the call (e.g. OpenRouter's ``usage.cost``)."""
    estimated: bool = False
    """Counted by a tokenizer because the provider sent no usage (opt-in)."""

    @property
    def prompt_tokens(self) -> int:
        """Every input token the model read: fresh + cached read + cache write."""
        return self.prompt_fresh + self.cached_read + self.cache_write

    @property
    def completion_tokens(self) -> int:
        """Every output token billed: visible + reasoning."""
        return self.completion_visible + self.reasoning


def family_of(model_id: str, api_base: str | None = None) -> str:
    """The provider family of a litellm model id (see the module table)."""
    head, _, rest = model_id.partition("/")
    head = head.lower() if rest else "openai"
    name = (rest or model_id).lower()
    if head == "anthropic" or (head in ("bedrock", "vertex_ai", "bedrock_converse") and "claude" in name):
        return "anthropic"
    if head in ("gemini", "vertex_ai", "vertex_ai_beta"):
        return "gemini"
    if head == "deepseek":
        return "deepseek"
    if head in _LOCAL_PREFIXES or (head == "openai" and api_base):
        return "openai-compatible"
    return "openai"


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _int(v: Any) -> int:
    try:
        return max(int(v or 0), 0)
    except (TypeError, ValueError):
        return 0


def as_dict(usage: Any) -> dict[str, Any] | None:
    """A plain JSON-ready dict of a usage object (pydantic model, mapping or None)."""
    if usage is None:
        return None
    if isinstance(usage, Mapping):
        return {k: v for k, v in usage.items()}
    dump: Callable[..., dict[str, Any]] | None = getattr(usage, "model_dump", None)  # a pydantic model's
    if callable(dump):
        try:
            return dump(mode="json", exclude_none=True)
        except Exception:  # pragma: no cover - a usage type without a JSON mode
            return dump()
    return {k: v for k, v in vars(usage).items() if not k.startswith("_")}


def normalize(usage: Any, family: str = "openai") -> Usage | None:
    """Split a provider's usage (raw or litellm's OpenAI shape) into classes; None if missing."""
    raw = as_dict(usage)
    if not raw:
        return None
    cost = raw.get("cost")
    reported = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
    if "promptTokenCount" in raw or "candidatesTokenCount" in raw:  # Gemini's raw usageMetadata
        prompt, cached, write = _int(raw.get("promptTokenCount")), _int(raw.get("cachedContentTokenCount")), 0
        reasoning = _int(raw.get("thoughtsTokenCount"))
        completion = _int(raw.get("candidatesTokenCount")) + reasoning
        inclusive = True
    elif "input_tokens" in raw and "prompt_tokens" not in raw:  # Anthropic's raw usage
        prompt, completion = _int(raw.get("input_tokens")), _int(raw.get("output_tokens"))
        cached, write = _int(raw.get("cache_read_input_tokens")), _int(raw.get("cache_creation_input_tokens"))
        reasoning = 0
        inclusive = False
    else:  # the OpenAI shape (OpenAI, Azure, DeepSeek, local servers, and litellm's normalised object)
        prompt, completion = _int(raw.get("prompt_tokens")), _int(raw.get("completion_tokens"))
        pdet, cdet = raw.get("prompt_tokens_details"), raw.get("completion_tokens_details")
        cached = _int(_get(pdet, "cached_tokens"))
        if family == "deepseek" or "prompt_cache_hit_tokens" in raw:
            cached = _int(raw.get("prompt_cache_hit_tokens")) or cached
        if "cache_read_input_tokens" in raw:
            cached = _int(raw.get("cache_read_input_tokens")) or cached
        write = _int(raw.get("cache_creation_input_tokens")) or _int(_get(pdet, "cache_creation_tokens"))
        reasoning = min(_int(_get(cdet, "reasoning_tokens")), completion)
        inclusive = True
    if prompt == 0 and completion == 0 and cached == 0 and write == 0:
        return None
    if inclusive and cached + write > prompt:  # reported exclusive after all (see the guard above)
        inclusive = False
    fresh = prompt - cached - write if inclusive else prompt
    return Usage(prompt_fresh=fresh, cached_read=cached, cache_write=write, completion_visible=completion - reasoning,
                 reasoning=reasoning, family=family, raw=raw, reported_cost=reported)


def estimated(prompt_tokens: int, completion_tokens: int, family: str) -> Usage:
    """A tokenizer's count for a reply that came without usage, flagged as estimated."""
    return Usage(prompt_fresh=prompt_tokens, completion_visible=completion_tokens, family=family, estimated=True)


__all__ = ["FAMILIES", "Usage", "as_dict", "estimated", "family_of", "normalize"]
