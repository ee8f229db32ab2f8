"""Prices: the model's YAML wins, then litellm's (local) price map, else 0 with a warning.

Every model is registered with litellm (even at price 0): an unmapped model makes litellm
raise and swallow a cost error on every call (~0.5 ms each, measured).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..spec.model import ModelSpec

log = logging.getLogger("masbench.llm")
_warned: set[str] = set()
_registered: set[str] = set()


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per token."""

    input: float
    output: float
    cached_input: float | None = None
    source: str = "yaml"

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        if self.cached_input is not None and cached_tokens:
            fresh = max(prompt_tokens - cached_tokens, 0)
            return fresh * self.input + cached_tokens * self.cached_input + completion_tokens * self.output
        return prompt_tokens * self.input + completion_tokens * self.output


def _provider(model_id: str) -> str:
    head = model_id.split("/", 1)[0] if "/" in model_id else "openai"
    return head


def resolve_prices(spec: ModelSpec) -> Prices:
    """Prices for one model, registering it with litellm at the price we will charge."""
    if spec.input_usd_per_mtok is not None or spec.output_usd_per_mtok is not None:
        p = Prices((spec.input_usd_per_mtok or 0.0) / 1e6, (spec.output_usd_per_mtok or 0.0) / 1e6, None, "yaml")
    elif spec.provider in ("embedded", "sim"):
        p = Prices(0.0, 0.0, None, spec.provider)
    else:
        from ._litellm import litellm  # deferred: heavy import (~2 s), only for real providers

        p = None
        for key in (spec.id, spec.id.split("/", 1)[-1]):
            info = litellm.model_cost.get(key)
            if info and ("input_cost_per_token" in info or "output_cost_per_token" in info):
                p = Prices(float(info.get("input_cost_per_token") or 0.0), float(info.get("output_cost_per_token") or 0.0),
                           info.get("cache_read_input_token_cost"), "litellm")
                break
        if p is None:
            if spec.id not in _warned:
                _warned.add(spec.id)
                log.warning("no price known for %s: logging cost 0 (set input_usd_per_mtok/output_usd_per_mtok "
                            "in the model's YAML)", spec.id)
            p = Prices(0.0, 0.0, None, "unknown")
    if spec.provider != "sim" and spec.id not in _registered:
        from ._litellm import litellm  # deferred: heavy import (~2 s), only for real providers

        entry = {"input_cost_per_token": p.input, "output_cost_per_token": p.output,
                 "litellm_provider": _provider(spec.id), "mode": "chat"}
        try:
            litellm.register_model({spec.id: entry, spec.id.split("/", 1)[-1]: entry})
        except Exception as exc:  # registration is an optimisation; never fatal
            log.debug("litellm.register_model(%s) failed: %s", spec.id, exc)
        _registered.add(spec.id)
    return p
