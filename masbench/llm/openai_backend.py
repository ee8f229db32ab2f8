"""The ``openai`` client: a model whose server speaks the OpenAI wire protocol (``openai/…`` ids,
any OpenAI-compatible ``api_base``: vLLM, SGLang, llama.cpp server) called through the ``openai``
SDK's ``AsyncOpenAI`` directly — about half litellm's client CPU per call (``benchmarks/
gateway_overhead.py``). A model's ``client`` field picks it (``auto``: an ``openai/…`` or
``hosted_vllm/…`` id with an ``api_base``).

Everything but the request itself is the ``litellm`` backend's, so a call's row does not depend on
the client that made it: the reply's token classes (:meth:`LitellmBackend.reply`), prices
(litellm's map stays the price map), prompt bounds, function-calling capability, the cache key (the
gateway's, over model id, ``api_base``, messages, parameters and sample index), and the error
rules (:mod:`.errors` reads the SDK's exceptions — status, ``Retry-After`` header — as it reads
litellm's, which are subclasses of them).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, Protocol

from ..spec.model import ModelSpec
from .backends import Attempt, Reply
from .litellm_backend import LitellmBackend, api_key_of, drain_stream
from .prices import Prices
from .toolcalls import normalize

if TYPE_CHECKING:
    from openai import AsyncOpenAI

AUTO_PREFIXES = ("openai", "hosted_vllm")
"""Id prefixes (litellm's names for OpenAI-protocol providers) that ``client: auto`` sends through
this client when the model has an ``api_base``. Hosted OpenAI (no ``api_base``) stays on litellm
under ``auto``: litellm adapts parameters per model there (``max_completion_tokens``, dropped
``temperature`` on reasoning models); ``client: openai`` sends it through the SDK as is."""

_SDK_PARAMS: frozenset[str] | None = None


def _sdk_params() -> frozenset[str]:
    """The keyword arguments ``chat.completions.create`` takes (any other request parameter goes
    in the JSON body as is, through ``extra_body``, as litellm does for a parameter it does not map)."""
    global _SDK_PARAMS
    if _SDK_PARAMS is None:
        from openai.resources.chat.completions import AsyncCompletions

        _SDK_PARAMS = frozenset(inspect.signature(AsyncCompletions.create).parameters) - {"self"}
    return _SDK_PARAMS


def http_transport() -> Any:
    """The SDK's aiohttp transport (``DefaultAioHttpClient``) where the installed ``openai`` has it
    (it needs ``aiohttp``, a masbench dependency): half the client CPU per call of its default
    httpx transport, measured with ``benchmarks/gateway_overhead.py``'s server (1.6 vs 3.3 ms a
    call at 64-way concurrency). None (the SDK's default httpx client) otherwise."""
    try:
        from openai import DefaultAioHttpClient
    except ImportError:  # an SDK before the aiohttp transport
        return None
    try:
        return DefaultAioHttpClient()
    except RuntimeError:  # the SDK's stand-in when its aiohttp extra is missing
        return None


def wire_model(spec: ModelSpec) -> str:
    """The model name sent on the wire: the id without its litellm provider prefix
    (``hosted_vllm/Qwen/Qwen2.5-7B`` → ``Qwen/Qwen2.5-7B``), as litellm sends it."""
    return spec.id.split("/", 1)[1] if "/" in spec.id else spec.id


def completion_parts(data: Any) -> tuple[str, str | None, Any, list[dict[str, Any]] | None]:
    """Text, finish reason, usage and tool calls of a chat completion as JSON (a dict)."""
    if not isinstance(data, dict) or not data.get("choices"):
        raise ValueError(f"not a chat completion: {str(data)[:200]}")
    choice = data["choices"][0]
    message = choice.get("message") or {}
    return (message.get("content") or ""), choice.get("finish_reason"), data.get("usage"), normalize(
        message.get("tool_calls"))


class OpenAIBackend(LitellmBackend):
    """``openai.AsyncOpenAI`` directly (one client per server and key, kept for the gateway's life,
    its own retries off: the gateway's attempt loop retries)."""

    def __init__(self) -> None:
        self._clients: dict[tuple[int, str | None, str | None], tuple[AsyncOpenAI, AsyncGenerator[None, None]]] = {}

    @classmethod
    def auto_for(cls, spec: ModelSpec) -> bool:
        head = spec.id.split("/", 1)[0] if "/" in spec.id else ""
        return bool(spec.api_base) and head in AUTO_PREFIXES

    @classmethod
    def register_prices(cls, spec: ModelSpec, prices: Prices) -> None:
        """Nothing: litellm's cost map is read for prices but never asked to bill this client's calls
        (and the ~2 s litellm import is spared where no model needs it)."""

    async def client(self, spec: ModelSpec) -> AsyncOpenAI:
        """The SDK client of the model's server and key on the running event loop (made on first
        use: its connections belong to that loop, and close with it — see :func:`closed_with_loop`)."""
        key = self.wire_key(spec)
        slot = (id(asyncio.get_running_loop()), spec.api_base, key)
        held = self._clients.get(slot)
        if held is None:
            from openai import AsyncOpenAI  # deferred: only models on this client import the SDK

            # api_key None: the SDK reads OPENAI_API_KEY (and says so, a systemic error, if unset)
            c = AsyncOpenAI(base_url=spec.api_base, api_key=key, max_retries=0, timeout=spec.timeout_s,
                            http_client=http_transport())
            guard = closed_with_loop(c)
            await anext(guard)
            held = self._clients[slot] = (c, guard)
        return held[0]

    def wire_key(self, spec: ModelSpec) -> str | None:
        """The API key the SDK client sends (None: the SDK reads ``OPENAI_API_KEY``)."""
        key = api_key_of(spec)
        if key is None and spec.api_base and not spec.id.startswith("openai/"):
            key = "sk-no-key"  # hosted_vllm/… and the like: litellm sends no key (the SDK needs one)
        return key

    def request(self, spec: ModelSpec, a: Attempt) -> dict[str, Any]:
        """The ``chat.completions.create`` keyword arguments of one attempt (besides model and
        messages): the SDK's own parameters as they are, any other under ``extra_body``."""
        known = _sdk_params()
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for k, v in a.req.items():
            (kwargs if k in known else extra)[k] = v
        if extra:
            kwargs["extra_body"] = {**extra, **(kwargs.get("extra_body") or {})}
        kwargs.setdefault("timeout", spec.timeout_s)
        return kwargs

    async def __call__(self, a: Attempt) -> Reply:
        spec = a.spec
        client = await self.client(spec)
        if a.req.get("stream"):
            kwargs = self.request(spec, a)
            # the SDK's TypedDict message types are not ours: messages are plain OpenAI-shape dicts
            completions: Any = client.chat.completions
            resp = await completions.create(model=wire_model(spec), messages=a.messages, **kwargs)
            return self.reply(a, *await drain_stream(resp), streamed=True)
        # A whole completion: the request body as JSON, the response as parsed JSON (the SDK's
        # documented raw ``post``; ``cast_to=object`` returns the JSON as is). It skips the SDK's
        # typed-params transform and its pydantic response models: ~40% of its CPU per call.
        body = {"model": wire_model(spec), "messages": a.messages, **a.req}
        timeout = body.pop("timeout", spec.timeout_s)  # a client setting, not a body field
        data = await client.post("/chat/completions", body=body, cast_to=object, options={"timeout": timeout})
        return self.reply(a, *self.parts(data))

    def parts(self, data: Any) -> tuple[str, str | None, Any, list[dict[str, Any]] | None]:
        """Text, finish reason, usage and tool calls of a whole completion's JSON (:func:`completion_parts`)."""
        return completion_parts(data)

    async def aclose(self) -> None:
        """Close the SDK clients made on the running loop (their connection pools) now."""
        loop = id(asyncio.get_running_loop())
        for slot in [s for s in self._clients if s[0] == loop]:
            await self._clients.pop(slot)[1].aclose()


class _Closable(Protocol):
    """An SDK client: its ``close`` releases its connection pool."""

    async def close(self) -> None: ...


async def closed_with_loop(client: _Closable) -> AsyncGenerator[None, None]:
    """Closes an SDK ``client`` (``openai``'s or ``anthropic``'s) when it is closed: by its
    backend's ``aclose``, or else by the event loop's shutdown — ``asyncio.run`` (and
    pytest-asyncio) finalise every async generator started on the loop before closing it (PEP 525),
    so a gateway nobody closed does not leave an aiohttp session behind to complain at exit."""
    try:
        yield
    finally:
        await client.close()


__all__ = ["AUTO_PREFIXES", "OpenAIBackend", "closed_with_loop", "completion_parts", "http_transport", "wire_model"]
