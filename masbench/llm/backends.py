"""Model backends by provider: what answers one attempt of a call, and what the gateway must know
about a provider before it calls it.

A model's *provider* is the part of its id before ``/`` (``sim/p60`` → ``sim``). The gateway asks
:data:`BACKENDS` for the backend class of that provider — ``sim`` (the seeded simulator),
``embedded`` (in-process llama.cpp behind litellm) — and every other model goes over HTTP through
one of the *clients* (:data:`CLIENTS`), chosen by the model's ``client`` field: ``litellm`` (every
hosted or OpenAI-compatible provider) or ``openai`` (the ``openai`` SDK directly, for servers that
speak the OpenAI wire protocol); ``client: auto`` takes the first client whose
:meth:`~ModelBackend.auto_for` claims the model, else ``litellm``. A :class:`ModelBackend` owns:

- the attempt itself (``await backend(attempt) -> Reply``);
- :attr:`~ModelBackend.simulated`: whether its replies are simulated (labelled so everywhere);
- :meth:`~ModelBackend.prompt_token_bound`: an upper bound on a call's billed prompt tokens,
  for budget enforcement and for what a usage-missing call is counted (plus
  :meth:`~ModelBackend.tools_token_bound` for the function schemas a request sends);
- :meth:`~ModelBackend.supports_tools`: whether a model does function calling;
- :meth:`~ModelBackend.default_prices`: its prices when the model's YAML gives none (``None``:
  the YAML must price the model — ``*_usd_per_mtok`` or ``price: 0`` — or a run refuses it);
- :meth:`~ModelBackend.prepare`: per-model set-up when a gateway first sees the model;
- :meth:`~ModelBackend.auto_for` (clients only): whether ``client: auto`` picks it for a model.

Adding a provider is one class registered from anywhere (no file of masbench edited)::

    from masbench.llm import BACKENDS, ModelBackend, Reply

    @BACKENDS.register("toy")
    class ToyBackend(ModelBackend):
        async def __call__(self, a): return Reply("Answer: 4", 10, 2)

Tests may still plug one attempt callable into ``Gateway(backend=…)``: it answers every model
(see :class:`masbench.llm.scripted.ScriptBackend`), while pricing, the simulated label of a
call that got no reply and the prompt bound stay the model's provider's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from ..registry import Registry
from ..spec.model import ModelSpec
from .prices import Prices
from .toolcalls import schema_bytes
from .usage import Usage


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
    tool_calls: list[dict[str, Any]] | None = None
    """Tool calls the model asked for (function calling), in the OpenAI shape
    ``{"id", "type": "function", "function": {"name", "arguments"}}``; None: it asked for none."""

    @classmethod
    def of(cls, text: str, u: Usage, finish_reason: str | None, simulated: bool = False,
           status: str = "reported") -> "Reply":
        """A reply whose counts come from normalised :class:`~masbench.llm.usage.Usage` classes."""
        return cls(text, u.prompt_tokens, u.completion_tokens, u.cached_read, finish_reason, simulated,
                   u.cache_write, u.reasoning, u.raw, "estimated" if u.estimated else status, u.reported_cost)

    def usage(self) -> Usage | None:
        """The reply's token classes (None when the provider reported no usage) — the one place a
        reply's totals become a :class:`~masbench.llm.usage.Usage`."""
        if self.usage_status == "missing":
            return None
        return Usage(prompt_fresh=max(self.prompt_tokens - self.cached_tokens - self.cache_write_tokens, 0),
                     cached_read=self.cached_tokens, cache_write=self.cache_write_tokens,
                     completion_visible=max(self.completion_tokens - self.reasoning_tokens, 0),
                     reasoning=self.reasoning_tokens, raw=self.usage_raw, reported_cost=self.reported_cost,
                     estimated=self.usage_status == "estimated")


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


class ModelBackend:
    """The backend of one provider (see the module docstring). A gateway makes one instance per
    provider it meets; the class attributes and :meth:`default_prices` are read without one."""

    simulated: ClassVar[bool] = False
    """Whether this provider's replies are simulated (every number it yields is labelled so)."""

    async def __call__(self, a: Attempt) -> Reply:
        raise NotImplementedError

    def prepare(self, spec: ModelSpec) -> None:
        """Called once per model alias a gateway registers (fail fast on a bad model here)."""

    async def aclose(self) -> None:
        """Release what the backend holds open (connection pools); default: nothing."""

    @classmethod
    def auto_for(cls, spec: ModelSpec) -> bool:
        """For a client backend (:data:`CLIENTS`): whether a model with ``client: auto`` goes
        through it. Default: no."""
        return False

    @classmethod
    def default_prices(cls, spec: ModelSpec) -> Prices | None:
        """Prices when the model's YAML sets none; None (the default): the YAML must price it
        (``*_usd_per_mtok``, or ``price: 0`` for a free model), or a run stops before any call."""
        return None

    @classmethod
    def register_prices(cls, spec: ModelSpec, prices: Prices) -> None:
        """Tell the provider's client the prices we charge (litellm's cost map); default: nothing."""

    def supports_tools(self, spec: ModelSpec) -> bool:
        """Whether the model takes ``tools`` and answers with ``tool_calls`` (function calling) when
        its YAML does not say (``function_calling``). Default: no (the text protocol is used)."""
        return False

    def prompt_token_bound(self, spec: ModelSpec, messages: list[dict[str, Any]]) -> int:
        """An upper bound on the prompt tokens a call will be billed. Default: UTF-8 bytes plus 8
        per message (a token is at least one byte)."""
        return sum(len(str(m.get("content", "")).encode()) + 8 for m in messages)

    def tools_token_bound(self, spec: ModelSpec, tools: list[dict[str, Any]]) -> int:
        """An upper bound on the prompt tokens the request's ``tools`` (function schemas) are
        billed on top of its messages. Default: their UTF-8 bytes as compact JSON."""
        return schema_bytes(tools)


FREE = Prices(0.0, 0.0, 0.0, 0.0, 0.0, "zero-declared")
"""Prices of a provider that is free by declaration (the simulator, the embedded model)."""

DEFAULT_PROVIDER = "litellm"
"""The :data:`BACKENDS` entry for every provider not registered by name."""

CLIENTS = ("openai", DEFAULT_PROVIDER)
"""The :data:`BACKENDS` entries that are clients of providers reached over HTTP (a model's
``client`` names one), in the order ``client: auto`` asks them; ``litellm`` serves any model."""

BACKENDS: Registry[type[ModelBackend]] = Registry("model backend", {
    "sim": "masbench.llm.sim_backend:SimBackend",
    "embedded": "masbench.llm.litellm_backend:EmbeddedBackend",
    "openai": "masbench.llm.openai_backend:OpenAIBackend",
    DEFAULT_PROVIDER: "masbench.llm.litellm_sdk:LitellmClient",
}, plugins="masbench.backends")
"""Provider (the model id's part before ``/``) → its :class:`ModelBackend` class, plus the
:data:`CLIENTS`; a provider not listed goes to a client (see :func:`provider_of`)."""


def provider_of(spec: ModelSpec) -> str:
    """The :data:`BACKENDS` key that answers a model: its id's provider if it has a backend of its
    own (``sim``, ``embedded``, a registered one), else the client its ``client`` field names —
    for ``auto`` the first of :data:`CLIENTS` whose ``auto_for`` claims it, else ``litellm``. A
    ``client`` other than ``auto`` on a provider with its own backend is a ``ValueError``."""
    head = spec.id.split("/", 1)[0] if "/" in spec.id else ""
    if head and head in BACKENDS and head not in CLIENTS:
        if spec.client != "auto":
            raise ValueError(f"client: {spec.client} does not apply to {spec.id!r}: its provider {head!r} has a "
                             "backend of its own (leave client at auto)")
        return head
    if spec.client != "auto":
        return spec.client
    return next((c for c in CLIENTS if BACKENDS[c].auto_for(spec)), DEFAULT_PROVIDER)


def backend_class(spec: ModelSpec) -> type[ModelBackend]:
    """The backend class of a model's provider."""
    return BACKENDS[provider_of(spec)]


def is_simulated(spec: ModelSpec) -> bool:
    """Whether a model's replies are simulated (its provider's backend says so)."""
    return backend_class(spec).simulated


__all__ = ["Attempt", "BACKENDS", "Backend", "CLIENTS", "DEFAULT_PROVIDER", "FREE", "ModelBackend", "Reply", "backend_class",
           "is_simulated", "provider_of"]
