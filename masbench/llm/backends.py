"""Model backends: what answers one attempt of a call. The gateway owns everything around the
attempt (cache, retries, concurrency, pricing, call rows); a backend only turns a request into a
:class:`Reply`. Built in: the simulator (``sim/…``) and litellm (every provider, and the embedded
model behind a litellm ``CustomLLM``). Tests plug in a scripted backend
(:class:`masbench.llm.scripted.ScriptBackend`) through ``Gateway(backend=…)``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol

from ..spec.model import ModelSpec
from .sim import Simulator, profile_for


@dataclass(slots=True)
class Reply:
    """What a model returned for one attempt, before pricing."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    finish_reason: str | None = None
    simulated: bool = False


@dataclass(slots=True)
class Attempt:
    """One attempt of a call, as a backend sees it."""

    alias: str
    spec: ModelSpec
    messages: list[dict[str, Any]]
    req: dict[str, Any]
    """Request parameters (temperature, max_tokens, provider params)."""
    sample_index: int
    attempt: int
    metadata: dict[str, Any]
    tags: dict[str, Any]
    """The call's tags (node, agent, run, task) — for scripted backends that answer per node."""


class Backend(Protocol):
    """Answers one attempt; raises to fail it (a retryable error is retried by the gateway)."""

    async def __call__(self, a: Attempt) -> Reply: ...


class SimBackend:
    """The seeded simulator (``sim/<profile>``); its replies are flagged simulated."""

    def __init__(self) -> None:
        self._sim = Simulator()

    async def __call__(self, a: Attempt) -> Reply:
        r = await self._sim.complete(a.spec.id, profile_for(a.spec.id, a.spec.sim), a.messages, a.req.get("max_tokens"),
                                     a.sample_index, a.attempt, a.metadata.get("sim"))
        return Reply(r.text, r.prompt_tokens, r.completion_tokens, 0, r.finish_reason, True)


class LitellmBackend:
    """Every other provider, through ``litellm.acompletion`` (litellm is imported on first use:
    its import costs ~2 s and sim runs never need it)."""

    async def __call__(self, a: Attempt) -> Reply:
        from ._litellm import litellm  # deferred: heavy import, only for real providers

        spec = a.spec
        kwargs: dict[str, Any] = dict(a.req)
        kwargs.setdefault("timeout", spec.timeout_s)
        if spec.api_base:
            kwargs["api_base"] = spec.api_base
        if spec.api_key_env:
            key = os.environ.get(spec.api_key_env)
            if key is None:
                raise PermissionError(f"environment variable {spec.api_key_env} is not set")
            kwargs["api_key"] = key
        elif spec.api_base and spec.id.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            kwargs["api_key"] = "sk-no-key"  # local OpenAI-compatible servers (vLLM, llama.cpp, Ollama) need none
        if spec.provider == "embedded":
            kwargs.setdefault("seed", a.sample_index)
        resp = await litellm.acompletion(model=spec.id, messages=a.messages, num_retries=0, max_retries=0, **kwargs)
        usage = getattr(resp, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0)
        ct = int(getattr(usage, "completion_tokens", 0) or 0)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
        choice = resp.choices[0]
        text = getattr(choice.message, "content", None) or ""
        return Reply(text, pt, ct, cached, getattr(choice, "finish_reason", None), False)


__all__ = ["Attempt", "Backend", "LitellmBackend", "Reply", "SimBackend"]
