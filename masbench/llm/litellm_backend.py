"""The ``litellm`` provider (every hosted or OpenAI-compatible model, and the default for any
provider not registered in :data:`~masbench.llm.backends.BACKENDS`) and the ``embedded`` provider
(in-process llama.cpp behind a litellm ``CustomLLM``). litellm is imported on first use: its import
costs ~2 s and sim runs never need it."""

from __future__ import annotations

import os
from typing import Any

from ..spec.model import ModelSpec
from .backends import FREE, Attempt, ModelBackend, Reply
from .prices import Prices
from .pricing import from_litellm_map, register_with_litellm
from .toolcalls import DeltaAssembler, normalize, schema_bytes
from .usage import as_dict, estimated, family_of
from .usage import normalize as normalize_usage


def api_key_of(spec: ModelSpec) -> str | None:
    """The key a call sends: the variable named by ``api_key_env`` (unset: ``PermissionError``, a
    systemic error), a placeholder for an ``openai/`` model behind its own ``api_base`` when
    ``OPENAI_API_KEY`` is unset (local servers — vLLM, llama.cpp, Ollama — need none), else None
    (the client reads its provider's usual variable)."""
    if spec.api_key_env:
        key = os.environ.get(spec.api_key_env)
        if key is None:
            raise PermissionError(f"environment variable {spec.api_key_env} is not set")
        return key
    if spec.api_base and spec.id.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
        return "sk-no-key"
    return None


class LitellmBackend(ModelBackend):
    """Every other provider, through ``litellm.acompletion``; priced by litellm's bundled map when
    the YAML gives no price."""

    def tokenizer_model(self, spec: ModelSpec) -> str:
        """The model id litellm's token counter is asked for (its own tokenizer for the id)."""
        return spec.id

    def request(self, spec: ModelSpec, a: Attempt) -> dict[str, Any]:
        """The ``acompletion`` keyword arguments of one attempt (besides model and messages)."""
        kwargs: dict[str, Any] = dict(a.req)
        kwargs.setdefault("timeout", spec.timeout_s)
        if spec.api_base:
            kwargs["api_base"] = spec.api_base
        key = api_key_of(spec)
        if key is not None:
            kwargs["api_key"] = key
        return kwargs

    async def __call__(self, a: Attempt) -> Reply:
        from ._litellm import litellm  # deferred: heavy import, only for real providers

        spec = a.spec
        kwargs = self.request(spec, a)
        resp = await litellm.acompletion(model=spec.id, messages=a.messages, num_retries=0, max_retries=0, **kwargs)
        if kwargs.get("stream"):
            return self.reply(a, *await drain_stream(resp), streamed=True)
        assert not isinstance(resp, litellm.CustomStreamWrapper), "litellm streams only when asked to"
        return self.reply(a, *message_parts(resp))

    def reply(self, a: Attempt, text: str, finish: str | None, usage: Any, calls: list[dict[str, Any]] | None,
              streamed: bool = False) -> Reply:
        """The :class:`Reply` of one answered attempt, whichever client brought it: its usage split
        into token classes (:mod:`.usage`), or a tokenizer's count when the provider sent none and
        the model opts in (``estimate_usage``), else ``missing``."""
        if streamed:
            # litellm stamps its own bill onto a streamed usage as `cost`, priced from the first
            # registration of the model id in the process (another alias's prices, say): that is
            # not the provider's figure, so a streamed call is priced by our own table instead
            # (on every client, so that a call's row does not depend on the client that made it).
            usage = {k: v for k, v in (as_dict(usage) or {}).items() if k != "cost"} or None
        spec = a.spec
        family = family_of(spec.id, spec.api_base)
        u = normalize_usage(usage, family)
        if u is not None:
            reply = Reply.of(text, u, finish)
        elif spec.estimate_usage:  # opt-in: a tokenizer's count, flagged as estimated
            from ._litellm import litellm  # deferred: heavy import, only for real providers

            model = self.tokenizer_model(spec)
            pt = litellm.token_counter(model=model, messages=a.messages, tools=a.req.get("tools"))
            ct = litellm.token_counter(model=model, text=text) if text else 0
            reply = Reply.of(text, estimated(pt, ct, family), finish)
        else:
            reply = Reply(text, 0, 0, 0, finish, False, usage_raw=as_dict(usage), usage_status="missing")
        reply.tool_calls = calls
        return reply

    def supports_tools(self, spec: ModelSpec) -> bool:
        """litellm's capability map (``supports_function_calling``) for a hosted model; a model
        behind its own ``api_base`` (an OpenAI-compatible server: vLLM, llama.cpp, Ollama) is not in
        the map, so only its YAML's ``function_calling`` says yes. Never raises: an id the map
        does not know is False."""
        if spec.api_base:
            return bool(spec.function_calling)
        try:
            from ._litellm import litellm  # deferred: heavy import, only for real providers

            return bool(litellm.supports_function_calling(model=spec.id))
        except Exception:
            return False

    @classmethod
    def default_prices(cls, spec: ModelSpec) -> Prices | None:
        return from_litellm_map(spec.id)

    @classmethod
    def register_prices(cls, spec: ModelSpec, prices: Prices) -> None:
        register_with_litellm(spec, prices)

    def prompt_token_bound(self, spec: ModelSpec, messages: list[dict[str, Any]]) -> int:
        """litellm's token counter with a 25% + 16 margin (different tokenizers disagree), falling
        back to UTF-8 bytes (a token is ≥ 1 byte)."""
        try:
            from ._litellm import litellm  # deferred: heavy import, only for real providers

            return int(litellm.token_counter(model=self.tokenizer_model(spec), messages=messages) * 1.25) + 16
        except Exception:
            return super().prompt_token_bound(spec, messages)

    def tools_token_bound(self, spec: ModelSpec, tools: list[dict[str, Any]]) -> int:
        """litellm's count of the schemas (as the provider renders them) with the same margin,
        falling back to their UTF-8 bytes."""
        try:
            from ._litellm import litellm  # deferred: heavy import, only for real providers

            model = self.tokenizer_model(spec)
            bare = litellm.token_counter(model=model, messages=[{"role": "user", "content": ""}])
            full = litellm.token_counter(model=model, messages=[{"role": "user", "content": ""}],
                                         tools=tools)  # pyright: ignore[reportArgumentType]  # OpenAI-shape dicts
            return int(max(full - bare, 0) * 1.25) + 16
        except Exception:
            return schema_bytes(tools)


class EmbeddedBackend(LitellmBackend):
    """``embedded/…``: the in-process llama.cpp model, registered with litellm on first use; free
    by declaration; its sampling seed is the call's sample index."""

    def __init__(self) -> None:
        self._ready = False

    def prepare(self, spec: ModelSpec) -> None:
        if not self._ready:
            from .embedded import register_embedded  # deferred: llama.cpp + litellm, only for embedded/

            register_embedded()
            self._ready = True

    def tokenizer_model(self, spec: ModelSpec) -> str:
        return "gpt-4o"

    def supports_tools(self, spec: ModelSpec) -> bool:
        """No: the in-process model has no function calling (its agents use the text protocol)."""
        return False

    def request(self, spec: ModelSpec, a: Attempt) -> dict[str, Any]:
        kwargs = super().request(spec, a)
        kwargs.setdefault("seed", a.sample_index)
        return kwargs

    @classmethod
    def default_prices(cls, spec: ModelSpec) -> Prices | None:
        return FREE


def message_parts(resp: Any) -> tuple[str, str | None, Any, list[dict[str, Any]] | None]:
    """Text, finish reason, usage and tool calls of a whole (not streamed) chat completion
    (litellm's ``ModelResponse`` or the ``openai`` SDK's ``ChatCompletion`` alike)."""
    choice = resp.choices[0]
    message = choice.message
    return ((getattr(message, "content", None) or ""), getattr(choice, "finish_reason", None),
            getattr(resp, "usage", None), normalize(getattr(message, "tool_calls", None)))


async def drain_stream(stream: Any) -> tuple[str, str | None, Any, list[dict[str, Any]] | None]:
    """Text, finish reason, usage (only if a chunk carried it) and tool calls (assembled from
    their deltas) of a streamed response (litellm's chunks or the ``openai`` SDK's alike)."""
    parts: list[str] = []
    finish = usage = None
    calls = DeltaAssembler()
    async for chunk in stream:
        for ch in getattr(chunk, "choices", None) or []:
            if getattr(ch, "index", 0) != 0:
                continue
            delta = getattr(ch, "delta", None)
            if delta is not None:
                if getattr(delta, "content", None):
                    parts.append(delta.content)
                calls.add(getattr(delta, "tool_calls", None))
            finish = getattr(ch, "finish_reason", None) or finish
        usage = getattr(chunk, "usage", None) or usage
    return "".join(parts), finish, usage, calls.result()


__all__ = ["EmbeddedBackend", "LitellmBackend", "api_key_of", "drain_stream", "message_parts"]
