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
from .usage import Usage, as_dict, estimated, family_of, normalize


@dataclass(slots=True)
class Reply:
    """What a model returned for one attempt, before pricing. Totals keep their meaning:
    ``prompt_tokens`` counts every input token (fresh + ``cached_tokens`` read from the cache +
    ``cache_write_tokens`` written to it), ``completion_tokens`` every output token (visible +
    ``reasoning_tokens``); see :mod:`masbench.llm.usage`."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    finish_reason: str | None = None
    simulated: bool = False
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's cache (part of ``prompt_tokens``)."""
    reasoning_tokens: int = 0
    """Hidden reasoning tokens (part of ``completion_tokens``)."""
    usage_raw: dict[str, Any] | None = None
    """The usage object as the provider (through litellm) sent it, for audit."""
    usage_status: str = "reported"
    """``reported``, ``estimated`` (counted by a tokenizer, opt-in) or ``missing`` (no usage came back)."""
    reported_cost: float | None = None
    """USD the provider reported for the call, if it does."""

    @classmethod
    def of(cls, text: str, u: Usage, finish_reason: str | None, simulated: bool = False,
           status: str = "reported") -> "Reply":
        """A reply whose counts come from normalised :class:`~masbench.llm.usage.Usage` classes."""
        return cls(text, u.prompt_tokens, u.completion_tokens, u.cached_read, finish_reason, simulated,
                   u.cache_write, u.reasoning, u.raw, "estimated" if u.estimated else status, u.reported_cost)


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
        if kwargs.get("stream"):
            text, finish, usage = await _drain(resp)
            # litellm stamps its own bill onto a streamed usage as `cost`, priced from the first
            # registration of the model id in the process (another alias's prices, say): that is
            # not the provider's figure, so the call is priced by our own table instead.
            usage = {k: v for k, v in (as_dict(usage) or {}).items() if k != "cost"} or None
        else:
            usage = getattr(resp, "usage", None)
            choice = resp.choices[0]
            text = getattr(choice.message, "content", None) or ""
            finish = getattr(choice, "finish_reason", None)
        family = family_of(spec.id, spec.api_base)
        u = normalize(usage, family)
        if u is not None:
            return Reply.of(text, u, finish)
        if spec.estimate_usage:  # opt-in: a tokenizer's count, flagged as estimated
            model = spec.id if spec.provider == "litellm" else "gpt-4o"
            pt = litellm.token_counter(model=model, messages=a.messages)
            ct = litellm.token_counter(model=model, text=text) if text else 0
            return Reply.of(text, estimated(pt, ct, family), finish)
        return Reply(text, 0, 0, 0, finish, False, usage_raw=as_dict(usage), usage_status="missing")


async def _drain(stream: Any) -> tuple[str, str | None, Any]:
    """Text, finish reason and usage of a streamed response (usage only if a chunk carried it)."""
    parts: list[str] = []
    finish = usage = None
    async for chunk in stream:
        for ch in getattr(chunk, "choices", None) or []:
            if getattr(ch, "index", 0) != 0:
                continue
            delta = getattr(ch, "delta", None)
            if delta is not None and getattr(delta, "content", None):
                parts.append(delta.content)
            finish = getattr(ch, "finish_reason", None) or finish
        usage = getattr(chunk, "usage", None) or usage
    return "".join(parts), finish, usage


__all__ = ["Attempt", "Backend", "LitellmBackend", "Reply", "SimBackend"]
