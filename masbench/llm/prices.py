"""Prices per token class (:class:`Prices`) and the cost provenance values a call row can carry.
How a model's prices are found is :mod:`masbench.llm.pricing`."""

from __future__ import annotations

from dataclasses import dataclass

from .usage import Usage

SOURCES = ("yaml", "litellm-map", "provider-reported", "zero-declared", "unpriced")
"""Cost provenance values a call row can carry."""


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per token, per class. ``None`` for a class means "billed like its base class"."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None
    reasoning: float | None = None
    source: str = "yaml"

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        """Cost of totals (for worst-case budget bounds): cached tokens at the cached rate."""
        fresh = max(prompt_tokens - cached_tokens, 0)
        return fresh * self.input + min(cached_tokens, prompt_tokens) * self.cached_rate + completion_tokens * self.output

    @property
    def cached_rate(self) -> float:
        return self.input if self.cached_input is None else self.cached_input

    @property
    def write_rate(self) -> float:
        return self.input if self.cache_write is None else self.cache_write

    @property
    def reasoning_rate(self) -> float:
        return self.output if self.reasoning is None else self.reasoning

    def cost_of(self, u: Usage) -> float:
        """Cost of one call's classes: fresh·input + read·cached + write·cache_write +
        visible·output + reasoning·reasoning."""
        return (u.prompt_fresh * self.input + u.cached_read * self.cached_rate + u.cache_write * self.write_rate
                + u.completion_visible * self.output + u.reasoning * self.reasoning_rate)

    def per_mtok(self) -> dict[str, float]:
        """Effective USD per 1M tokens per class (what a ``price_table`` row holds)."""
        return {"input_usd_per_mtok": self.input * 1e6, "cached_input_usd_per_mtok": self.cached_rate * 1e6,
                "cache_write_usd_per_mtok": self.write_rate * 1e6, "output_usd_per_mtok": self.output * 1e6,
                "reasoning_usd_per_mtok": self.reasoning_rate * 1e6}


__all__ = ["Prices", "SOURCES"]
