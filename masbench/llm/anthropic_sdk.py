"""``client: litellm`` on Anthropic's Messages wire through the ``anthropic`` SDK, for the calls
whose request litellm builds from text alone.

For an ``anthropic/…`` model, a call of text turns and sampling parameters is sent as litellm would
send it — the same URL (``api_base`` + ``/v1/messages``, else ``https://api.anthropic.com``), the
same ``x-api-key`` and ``anthropic-version`` headers, the same JSON body — but through the
``anthropic`` SDK's raw post (:class:`AnthropicWire`: one ``AsyncAnthropic`` per event loop, URL
and key, on the SDK's aiohttp transport, its own retries off). The body is litellm's own: the
fields its parameter mapping and request transform make of the parameters (``stop`` →
``stop_sequences``, ``user`` → ``metadata.user_id``, ``seed`` dropped, the model's default
``max_tokens``) are taken once per model and parameter values from litellm itself
(:func:`body_params`, memoised), and the turns are laid out as litellm lays out plain text
(:func:`wire_messages`: the leading system messages as ``system`` text blocks, each turn's text as
a text block, consecutive turns of one role merged, the last assistant turn right-stripped);
``tests/llm/test_anthropic_sdk.py`` checks both against litellm's transform, conversations drawn
at random included.

The reply is read as litellm reads it (:func:`reply_parts`): a reply of text blocks by litellm's
own ``map_finish_reason`` (``end_turn`` → ``stop``, ``max_tokens`` → ``length``) and
``AnthropicConfig.calculate_usage`` (cache reads and writes, the OpenAI-shaped ``Usage``), anything
else (thinking, tool use, citations, a missing ``usage``) by litellm's whole response transform.
So the ``calls`` row is the one litellm would have written, ``usage_raw`` included; prices still
come from the YAML and litellm's map. An error is the one litellm would have raised: the SDK's
exception is turned into the ``AnthropicError`` litellm's handler makes (status, body text,
headers — ``Retry-After`` included) and mapped by litellm's own ``exception_type``, so
:mod:`.errors` classifies and describes it exactly as on litellm's path.

Everything else stays on ``litellm.acompletion``: another provider, streaming, tools, images or
multi-part content, a parameter outside :data:`PARAMS`, a conversation litellm would rewrite
(a system message after the first turn, an empty turn, a first turn that is not the user's), a
parameter set for which litellm would add a header (betas), no key litellm would send as
``x-api-key`` (an OAuth token, ``ANTHROPIC_AUTH_TOKEN``, workload identity), a base URL litellm
reads from its own settings (``ANTHROPIC_API_BASE``, ``ANTHROPIC_BASE_URL``, ``litellm.api_base``,
``LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX``). ``MASBENCH_LITELLM_SDK=0`` or ``sdk_wire: false`` sends
every call through litellm (:func:`~masbench.llm.litellm_sdk.switched_on`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from ..spec.model import ModelSpec
from .backends import Attempt, Reply
from .litellm_backend import LitellmBackend, api_key_of, message_parts
from .litellm_sdk import switched_on
from .openai_backend import closed_with_loop, wire_model

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

PARAMS = frozenset({"temperature", "top_p", "top_k", "max_tokens", "max_completion_tokens", "stop", "seed", "user"})
"""Request parameters the SDK path may send (as litellm maps them: :func:`body_params`). Anything
else — ``stream``, ``tools``, ``response_format``, ``reasoning_effort``, ``thinking``, litellm's own
keywords — keeps a call on litellm."""

DEFAULT_URL = "https://api.anthropic.com/v1/messages"
"""Where litellm sends an ``anthropic/…`` call without an ``api_base`` (nor one of its own settings)."""

_LITELLM_URL_SETTINGS = ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL")
_NO_SUFFIX = "LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX"
_HEADERS = frozenset({"anthropic-version", "accept", "content-type", "x-api-key"})
"""The headers litellm sends on a plain text call (any other — a beta — keeps the call on litellm)."""
_VERSION = "2023-06-01"
_PROBE = "probe"
_MAX_MEMO = 4096
_fields: dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, Any] | None] = {}
_urls: dict[str | None, str | None] = {}


def wire_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """``(system, turns)`` of a text conversation as litellm sends it to Anthropic, or None when
    litellm would do more than lay the text out (so the call stays on litellm).

    Taken: a leading run of ``system`` messages (each a text block of ``system``; an empty one is
    left out, as litellm does), then ``user``/``assistant`` turns starting with a user turn, each
    exactly ``{"role", "content"}`` with string content that is not blank; consecutive turns of one
    role become one turn of several text blocks; the last turn's text is right-stripped when it is
    the assistant's (Anthropic refuses trailing whitespace there)."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    i, n = 0, len(messages)
    while i < n:
        m = messages[i]
        if type(m) is not dict or len(m) != 2 or m.get("role") != "system":
            break
        content = m.get("content")
        if type(content) is not str:
            return None
        if content:
            system.append({"type": "text", "text": content})
        i += 1
    role = None
    for m in messages[i:]:
        if type(m) is not dict or len(m) != 2:
            return None
        r, content = m.get("role"), m.get("content")
        if (r != "user" and r != "assistant") or type(content) is not str or not content.strip():
            return None
        block = {"type": "text", "text": content}
        if r == role:
            turns[-1]["content"].append(block)
        elif role is None and r != "user":
            return None
        else:
            turns.append({"role": r, "content": [block]})
            role = r
    if not turns:
        return None
    if role == "assistant":
        for block in turns[-1]["content"]:
            block["text"] = block["text"].rstrip()
    return system, turns


def _litellm_fields(model: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """What :func:`body_params` memoises (computed by litellm)."""
    from ._litellm import litellm  # noqa: F401  # masbench's litellm settings (drop_params, quiet)

    try:  # litellm's internals: a release without them keeps litellm's path
        from litellm.llms.anthropic.chat.transformation import AnthropicConfig
        from litellm.utils import get_optional_params

        mapped = dict(get_optional_params(model=model, custom_llm_provider="anthropic", **params))
        if mapped.get("stream"):
            return None
        cfg = AnthropicConfig()
        probe = [{"role": "user", "content": _PROBE}]
        turns: Any = list(probe)  # litellm's message TypedDicts: plain OpenAI-shape dicts here
        headers = cfg.validate_environment(headers={}, model=model, messages=turns, optional_params=dict(mapped),
                                           litellm_params={}, api_key="key", api_base=None)
        body = cfg.transform_request(model=model, messages=list(turns), optional_params=mapped, litellm_params={},
                                     headers={})
    except Exception:  # litellm refuses the parameters: let it say so on its own path
        return None
    if ({k.lower() for k in headers} != _HEADERS or headers.get("anthropic-version") != _VERSION
            or body.get("model") != model or "system" in body
            or body.get("messages") != [{"role": "user", "content": [{"type": "text", "text": _PROBE}]}]):
        return None
    return {k: v for k, v in body.items() if k not in ("model", "messages")}


def body_params(model: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The body fields besides ``model``, ``messages`` and ``system`` that litellm sends for these
    request parameters (its ``get_optional_params`` and ``AnthropicConfig.transform_request`` on a
    one-turn probe: the mapping does not depend on the text), or None when litellm would also add a
    header, or refuses them (the call stays on litellm). Memoised per model and parameter values."""
    key = (model, tuple(sorted((k, repr(v)) for k, v in params.items())))
    if key in _fields:
        return _fields[key]
    if len(_fields) >= _MAX_MEMO:
        _fields.clear()
    hit = _fields[key] = _litellm_fields(model, params)
    return hit


def messages_url(api_base: str | None) -> str | None:
    """The URL litellm posts an ``anthropic/…`` call to (``api_base`` with ``/v1/messages`` added
    unless it ends so, else :data:`DEFAULT_URL`), or None when litellm's own settings decide it
    (``ANTHROPIC_API_BASE``, ``ANTHROPIC_BASE_URL``, ``litellm.api_base`` without an ``api_base``;
    ``LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX``)."""
    if os.environ.get(_NO_SUFFIX):
        return None
    from ._litellm import litellm  # first: masbench's litellm settings (the offline price map) before litellm loads

    if api_base is None and (getattr(litellm, "api_base", None)
                             or any(os.environ.get(v) for v in _LITELLM_URL_SETTINGS)):
        return None
    if api_base in _urls:
        return _urls[api_base]
    url: str | None
    try:
        from litellm.litellm_core_utils.url_utils import ensure_api_route

        url = ensure_api_route(api_base or DEFAULT_URL, "v1/messages")
    except (ImportError, ValueError):
        url = None
    _urls[api_base] = url
    return url


def wire_key(spec: ModelSpec) -> str | None:
    """The key litellm sends as ``x-api-key``: the model's (``api_key_env``; unset: the same
    ``PermissionError`` as on litellm's path), else ``litellm.anthropic_key``/``litellm.api_key``,
    else ``ANTHROPIC_API_KEY`` (blank counts as unset, as in litellm); None when litellm would
    authenticate otherwise (an OAuth token, ``ANTHROPIC_AUTH_TOKEN``, workload identity, none)."""
    from ._litellm import litellm  # deferred: heavy import, only when an anthropic/ call is sent

    key = api_key_of(spec) or getattr(litellm, "anthropic_key", None) or getattr(litellm, "api_key", None)
    key = (key or "").strip() or os.environ.get("ANTHROPIC_API_KEY", "").strip()
    if not key or key.startswith("sk-ant-oat"):  # litellm's ANTHROPIC_OAUTH_TOKEN_PREFIX: a Bearer token
        return None
    return key


def reply_parts(data: Any) -> tuple[str, str | None, Any, list[dict[str, Any]] | None]:
    """Text, finish reason, usage and tool calls of a Messages reply, read as litellm reads it: a
    reply of text blocks with its ``usage`` by litellm's ``map_finish_reason`` and
    ``AnthropicConfig.calculate_usage``, anything else by litellm's whole
    ``transform_parsed_response`` (it raises what litellm raises on such a reply)."""
    from ._litellm import litellm  # deferred, and first: masbench's litellm settings before litellm loads

    from litellm.litellm_core_utils.core_helpers import map_finish_reason

    if isinstance(data, dict) and "error" not in data and "model" in data:
        content, usage, stop = data.get("content"), data.get("usage"), data.get("stop_reason")
        if isinstance(content, list) and isinstance(usage, dict) and isinstance(stop, str):
            texts = []
            for block in content:
                if (type(block) is not dict or block.get("type") != "text" or type(block.get("text")) is not str
                        or block.get("citations") is not None):
                    break
                texts.append(block["text"])
            else:
                usage_obj = _config().calculate_usage(usage_object=usage, reasoning_content=None,
                                                      completion_response=data)
                return "".join(texts), map_finish_reason(stop), usage_obj, None
    if not isinstance(data, dict):
        from litellm.llms.anthropic.common_utils import AnthropicError

        raise AnthropicError(status_code=200, message=f"Unable to get json response - Original Response: {data!r:.300}")
    import httpx  # litellm's HTTP types (its transform reads the response's headers)

    resp = _config().transform_parsed_response(completion_response=data, raw_response=httpx.Response(200),
                                               model_response=litellm.ModelResponse())
    return message_parts(resp)


_cfg: Any = None


def _config() -> Any:
    """litellm's ``AnthropicConfig`` (one instance: it holds no per-call state)."""
    global _cfg
    if _cfg is None:
        from litellm.llms.anthropic.chat.transformation import AnthropicConfig

        _cfg = AnthropicConfig()
    return _cfg


def litellm_error(exc: BaseException, model: str) -> BaseException:
    """The exception litellm raises where the ``anthropic`` SDK raised ``exc``: the
    ``AnthropicError`` litellm's handler makes of the failure (an HTTP error: its status, body text
    and headers; a timeout: 408; no answer: 500 with aiohttp's message), mapped by litellm's
    ``exception_type``. Anything else (litellm's own errors included) is mapped the same way."""
    import anthropic
    import httpx
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type
    from litellm.llms.anthropic.common_utils import AnthropicError

    err: BaseException = exc
    if isinstance(exc, anthropic.APIStatusError):
        resp = exc.response
        err = AnthropicError(status_code=exc.status_code, message=resp.text,
                             headers=httpx.Headers(list(resp.headers.multi_items())))
    elif isinstance(exc, anthropic.APITimeoutError):
        err = AnthropicError(status_code=408, message=f"litellm.Timeout: {exc}")
    elif isinstance(exc, anthropic.APIConnectionError):
        # litellm's transport is aiohttp too: its message is aiohttp's error (the first in the chain
        # the SDK's transport wrapped), else the innermost cause's. The text still differs where
        # aiohttp names the TLS setting: litellm passes an SSL context ("ssl:<ssl.SSLContext object
        # at 0x…>", an address, so no two runs' texts agree anyway), the SDK none ("ssl:default").
        cause: BaseException = exc
        told: BaseException | None = None
        while (up := cause.__cause__ or cause.__context__) is not None:
            cause = up
            if told is None and type(cause).__module__.split(".", 1)[0] == "aiohttp":
                told = cause
        err = AnthropicError(status_code=500, message=str(told or cause) or str(exc))
    return exception_type(model=model, original_exception=err, custom_llm_provider="anthropic")


def http_transport() -> Any:
    """The ``anthropic`` SDK's aiohttp transport (``DefaultAioHttpClient``: aiohttp is a masbench
    dependency), else None (the SDK's default httpx client)."""
    try:
        from anthropic import DefaultAioHttpClient
    except ImportError:  # an SDK before the aiohttp transport
        return None
    try:
        return DefaultAioHttpClient()
    except RuntimeError:  # the SDK's stand-in when aiohttp is missing
        return None


class AnthropicWire(LitellmBackend):
    """The Anthropic SDK path of ``client: litellm`` (an :class:`~masbench.llm.litellm_sdk.SdkWire`)."""

    def __init__(self) -> None:
        self._clients: dict[tuple[int, str, str], tuple[AsyncAnthropic, AsyncGenerator[None, None]]] = {}

    def plan(self, a: Attempt) -> tuple[str, str, dict[str, Any]] | None:
        """``(url, key, body)`` of the call if it goes through the SDK, else None (litellm's path)."""
        spec = a.spec
        if not switched_on(spec):
            return None
        req = a.req
        if "timeout" in req:
            req = {k: v for k, v in req.items() if k != "timeout"}
        if not req.keys() <= PARAMS:
            return None
        laid = wire_messages(a.messages)
        if laid is None:
            return None
        url = messages_url(spec.api_base)
        if url is None:
            return None
        key = wire_key(spec)
        if key is None:
            return None
        model = wire_model(spec)
        fields = body_params(model, req)
        if fields is None:
            return None
        system, turns = laid
        body = {"model": model, "messages": turns, **fields}
        if system:
            body["system"] = system
        return url, key, body

    async def client(self, spec: ModelSpec, url: str, key: str) -> AsyncAnthropic:
        """The SDK client of the URL and key on the running event loop (made on first use; closed
        with the loop if nobody closes it: :func:`~masbench.llm.openai_backend.closed_with_loop`).
        It sends what litellm sends: the key as ``x-api-key`` (no ``Authorization`` header) and
        ``anthropic-version: 2023-06-01`` (not the SDK's own, newer version)."""
        slot = (id(asyncio.get_running_loop()), url, key)
        held = self._clients.get(slot)
        if held is None:
            from anthropic import AsyncAnthropic, Omit  # deferred: only anthropic/ models import the SDK

            # the SDK sends its api_key as a Bearer token: an Omit() header is one it leaves out
            headers: Any = {"X-Api-Key": key, "Authorization": Omit(), "anthropic-version": _VERSION}
            c = AsyncAnthropic(api_key=key, base_url=url, max_retries=0, timeout=spec.timeout_s,
                               http_client=http_transport(), default_headers=headers)
            guard = closed_with_loop(c)
            await anext(guard)
            held = self._clients[slot] = (c, guard)
        return held[0]

    async def send(self, a: Attempt, plan: tuple[str, str, dict[str, Any]]) -> Reply:
        """Post the planned body (the SDK's raw ``post``, the JSON reply as a dict) and read it."""
        url, key, body = plan
        spec = a.spec
        client = await self.client(spec, url, key)
        try:
            data = await client.post(url, body=body, cast_to=object,
                                     options={"timeout": a.req.get("timeout", spec.timeout_s)})
            parts = reply_parts(data)
        except Exception as exc:
            raise litellm_error(exc, spec.id) from exc
        return self.reply(a, *parts)

    async def __call__(self, a: Attempt) -> Reply:
        plan = self.plan(a)
        if plan is None:
            return await super().__call__(a)
        return await self.send(a, plan)

    async def aclose(self) -> None:
        """Close the SDK clients made on the running loop."""
        loop = id(asyncio.get_running_loop())
        for slot in [s for s in self._clients if s[0] == loop]:
            await self._clients.pop(slot)[1].aclose()


__all__ = ["AnthropicWire", "DEFAULT_URL", "PARAMS", "body_params", "http_transport", "litellm_error", "messages_url",
           "reply_parts", "wire_key", "wire_messages"]
