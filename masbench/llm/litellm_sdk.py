"""``client: litellm`` at the ``openai`` SDK's speed, for the calls where litellm adds nothing to the wire.

For an ``openai/…`` or ``hosted_vllm/…`` model behind an ``api_base``, litellm sends a text-only
call's request as it got it: the model name without its provider prefix, the messages, and the
parameters its mapping (``get_optional_params``) leaves as they are. Such a call goes out through
the ``openai`` SDK's raw post (:class:`~masbench.llm.openai_backend.OpenAIBackend`, about half
litellm's client CPU per call) with the same body, the same key and the same URL, and its reply is
read the way litellm reads it (:func:`litellm_parts`: ``<think>`` text split off the answer, the
finish reason mapped, usage rebuilt as litellm's ``Usage``), so its ``calls`` row is the one litellm
would have made, ``usage_raw`` included. Prices still come from litellm's map and the YAML; errors
go through the same rules (:mod:`.errors` reads the SDK's exceptions as litellm's, its subclasses).

Every other call of these providers — no ``api_base``, a streamed call, tools, image or
multi-part content, a parameter litellm renames or drops (``max_tokens`` on an o-series model,
``user``), a parameter litellm consumes itself — still goes through ``litellm.acompletion``.
``MASBENCH_LITELLM_SDK=0`` in the environment, or ``sdk_wire: false`` on a model, sends every call
through litellm.

:class:`LitellmClient` finds a provider's SDK path in :data:`WIRES`: this module's
:class:`LitellmWire` for the OpenAI wire, :class:`~masbench.llm.anthropic_sdk.AnthropicWire` for
``anthropic/…`` (the same idea on Anthropic's Messages wire, through the ``anthropic`` SDK).
"""

from __future__ import annotations

import importlib
import os
from typing import Any, Protocol

from ..spec.model import ModelSpec
from .backends import Attempt, Reply
from .litellm_backend import LitellmBackend, api_key_of, message_parts
from .openai_backend import OpenAIBackend

SWITCH = "MASBENCH_LITELLM_SDK"
"""Environment variable: ``0`` sends every ``client: litellm`` call through ``litellm.acompletion``."""

PROVIDERS = ("openai", "hosted_vllm")
"""litellm providers whose wire is the OpenAI protocol as it is (behind the model's ``api_base``)."""

PARAMS = frozenset({"temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "seed",
                    "presence_penalty", "frequency_penalty", "top_k", "min_p", "repetition_penalty"})
"""Request parameters the SDK path may send (and only if litellm's mapping leaves them as they are):
the OpenAI sampling parameters and the sampling extras vLLM-style servers take (litellm passes those
through as body fields). Anything else — ``stream``, ``tools``, ``response_format``, ``n``, ``user``,
litellm's own keywords (``metadata``, ``extra_headers``, …) — keeps a call on litellm."""

_CONFIGS = frozenset({"OpenAIGPTConfig", "OpenAIUnknownModelConfig", "HostedVLLMChatConfig"})
"""litellm's request configs that send text messages unchanged (o-series, GPT-5, audio models have
configs of their own that rewrite the request: those models stay on litellm)."""

_ROLES = frozenset({"system", "user", "assistant"})
_MAX_MEMO = 4096
_same: dict[tuple[str, tuple[tuple[str, str], ...]], bool] = {}
_plain_models: dict[str, bool] = {}


def switched_on(spec: ModelSpec) -> bool:
    """Whether the SDK path may take this model's calls (the model's ``sdk_wire`` and the switch)."""
    return spec.sdk_wire and os.environ.get(SWITCH, "1").strip() != "0"


def text_only(messages: list[dict[str, Any]]) -> bool:
    """Every message a plain ``{"role", "content"}`` dict of a system, user or assistant turn with
    string content (what litellm's OpenAI configs send as they are)."""
    for m in messages:
        if type(m) is not dict or len(m) != 2 or type(m.get("content")) is not str or m.get("role") not in _ROLES:
            return False
    return True


def _plain_model(spec: ModelSpec) -> bool:
    """An ``openai/…`` or ``hosted_vllm/…`` id behind an ``api_base`` whose litellm request config
    is one that sends text messages unchanged."""
    hit = _plain_models.get(spec.id)
    if hit is None:
        hit = False
        provider, _, model = spec.id.partition("/")
        if provider in PROVIDERS and model:
            from ._litellm import litellm  # noqa: F401  # masbench's litellm settings (drop_params, quiet)

            try:  # litellm's internals this module reads with: a release without them keeps litellm's path
                from litellm.litellm_core_utils.core_helpers import map_finish_reason  # noqa: F401
                from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import (  # noqa: F401
                    convert_to_model_response_object,
                )
                from litellm.litellm_core_utils.prompt_templates.reasoning_utils import (  # noqa: F401
                    extract_reasoning_content,
                )
                from litellm.types.utils import LlmProviders
                from litellm.utils import ProviderConfigManager, get_optional_params  # noqa: F401

                cfg = ProviderConfigManager.get_provider_chat_config(model=model, provider=LlmProviders(provider))
                hit = type(cfg).__name__ in _CONFIGS
            except (ImportError, AttributeError, ValueError):
                hit = False
        _plain_models[spec.id] = hit
    return hit


def _litellm_sends_as_is(spec: ModelSpec, params: dict[str, Any]) -> bool:
    """Whether litellm's parameter mapping for this model leaves ``params`` exactly as they are
    (it renames ``max_tokens`` for some models, drops what a provider lacks — ``drop_params`` is
    on — and sends a parameter it does not know as a body field of its own)."""
    from litellm.utils import get_optional_params  # deferred: heavy import, only for real providers

    provider, _, model = spec.id.partition("/")
    try:
        mapped = dict(get_optional_params(model=model, custom_llm_provider=provider, **params))
    except Exception:  # litellm refuses the parameters: let it say so on its own path
        return False
    if mapped.pop("stream", False):
        return False
    extra = mapped.pop("extra_body", None) or {}
    return isinstance(extra, dict) and {**mapped, **extra} == params


def takes(spec: ModelSpec, messages: list[dict[str, Any]], req: dict[str, Any]) -> bool:
    """Whether a ``client: litellm`` call goes through the SDK (see the module docstring)."""
    if not spec.api_base or not switched_on(spec) or not text_only(messages):
        return False
    params = {k: v for k, v in req.items() if k != "timeout"}
    if not params.keys() <= PARAMS or not _plain_model(spec):
        return False
    key = (spec.id, tuple(sorted((k, repr(v)) for k, v in params.items())))
    hit = _same.get(key)
    if hit is None:
        if len(_same) >= _MAX_MEMO:
            _same.clear()
        hit = _same[key] = _litellm_sends_as_is(spec, params)
    return hit


def litellm_parts(data: Any) -> tuple[str, str | None, Any, list[dict[str, Any]] | None]:
    """Text, finish reason, usage and tool calls of a chat completion's JSON, read as litellm reads
    it: a plain text answer by litellm's own helpers (reasoning split off the content, the finish
    reason mapped, usage as litellm's ``Usage``), anything else (tool calls, an odd shape) by
    litellm's whole response conversion."""
    from litellm.litellm_core_utils.core_helpers import map_finish_reason
    from litellm.litellm_core_utils.prompt_templates.reasoning_utils import extract_reasoning_content

    from ._litellm import litellm  # deferred as the helpers above: litellm loads only when a call reads a reply

    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    usage = data.get("usage") if isinstance(data, dict) else None
    if (isinstance(choice, dict) and isinstance(message, dict) and message.get("tool_calls") is None
            and message.get("function_call") is None and isinstance(message.get("content"), (str, type(None)))
            and (usage is None or isinstance(usage, dict))):
        finish = choice.get("finish_reason")
        if finish is None:
            finish = choice.get("finish_details") or "stop"
        if isinstance(finish, str):
            text = extract_reasoning_content(message)[1]
            # no usage in the reply: litellm's response still carries a Usage, of zeros
            return text or "", map_finish_reason(finish), litellm.Usage(**(usage or {})), None
    from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import (
        convert_to_model_response_object,
    )

    resp = convert_to_model_response_object(response_object=data, model_response_object=litellm.ModelResponse())
    return message_parts(resp)


class SdkWire(Protocol):
    """A provider's SDK path of ``client: litellm`` (listed in :data:`WIRES`)."""

    def plan(self, a: Attempt) -> Any:
        """What :meth:`send` needs if the call goes through the SDK (its request, prepared), else
        None: the call goes through ``litellm.acompletion``."""
        ...

    async def send(self, a: Attempt, plan: Any) -> Reply:
        """The call through the SDK, its reply read as litellm reads it, its errors litellm's."""
        ...

    async def aclose(self) -> None:
        """Close the SDK clients."""
        ...


WIRES: dict[str, str] = {
    "openai": "masbench.llm.litellm_sdk:LitellmWire",
    "hosted_vllm": "masbench.llm.litellm_sdk:LitellmWire",
    "anthropic": "masbench.llm.anthropic_sdk:AnthropicWire",
}
"""litellm provider (a model id's part before ``/``) → the :class:`SdkWire` class that may take its
calls (``module:Class``; imported, and made once per client, at the first call of such a model)."""


class LitellmWire(OpenAIBackend):
    """The SDK path of ``client: litellm`` for the OpenAI wire: the ``openai`` client's request,
    litellm's key and reading."""

    def wire_key(self, spec: ModelSpec) -> str | None:
        """The key litellm would send: the model's (``api_key_env``, the local placeholder), else
        for ``hosted_vllm/…`` ``HOSTED_VLLM_API_KEY`` or litellm's ``fake-api-key``; else None
        (the SDK reads ``OPENAI_API_KEY``, as litellm does)."""
        key = api_key_of(spec)
        if key is None and spec.id.startswith("hosted_vllm/"):
            key = os.environ.get("HOSTED_VLLM_API_KEY") or "fake-api-key"
        return key

    def parts(self, data: Any) -> tuple[str, str | None, Any, list[dict[str, Any]] | None]:
        return litellm_parts(data)

    def plan(self, a: Attempt) -> bool | None:
        """True when :func:`takes` takes the call, else None."""
        return True if a.spec.api_base and takes(a.spec, a.messages, a.req) else None

    async def send(self, a: Attempt, plan: Any) -> Reply:
        return await OpenAIBackend.__call__(self, a)


class LitellmClient(LitellmBackend):
    """``client: litellm`` (the :data:`~masbench.llm.backends.BACKENDS` entry ``litellm``): each call
    its provider's :class:`SdkWire` (:data:`WIRES`) plans goes out through that SDK, every other
    through ``litellm.acompletion``."""

    def __init__(self) -> None:
        self._wires: dict[str, SdkWire | None] = {}
        self._made: dict[str, SdkWire] = {}

    def wire(self, spec: ModelSpec) -> SdkWire | None:
        """The SDK wire of the model's provider (None: it has none)."""
        provider = spec.id.partition("/")[0]
        try:
            return self._wires[provider]
        except KeyError:
            pass
        path = WIRES.get(provider)
        wire = None
        if path is not None:
            wire = self._made.get(path)
            if wire is None:
                module, _, name = path.partition(":")
                wire = self._made[path] = getattr(importlib.import_module(module), name)()
        self._wires[provider] = wire
        return wire

    async def __call__(self, a: Attempt) -> Reply:
        wire = self.wire(a.spec)
        if wire is not None:
            plan = wire.plan(a)
            if plan is not None:
                return await wire.send(a, plan)
        return await super().__call__(a)

    async def aclose(self) -> None:
        """Close the SDK paths' clients, of the wires that were made."""
        for wire in self._made.values():
            await wire.aclose()


__all__ = ["LitellmClient", "LitellmWire", "PARAMS", "PROVIDERS", "SWITCH", "SdkWire", "WIRES", "litellm_parts",
           "switched_on", "takes", "text_only"]
