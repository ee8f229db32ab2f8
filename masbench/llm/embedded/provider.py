"""The embedded model as a litellm provider (``embedded/smollm2``, a ``CustomLLM``, registered at
0 USD per token)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from litellm.llms.custom_llm import CustomLLM, CustomLLMError
from litellm.types.utils import Choices, Message, ModelResponse, PromptTokensDetailsWrapper, Usage

from .._litellm import litellm
from .engine import _ENGINE, EmbeddedCallResult
from .locate import _N_CTX, EMBEDDED_MODEL, EMBEDDED_PROVIDER, EmbeddedUnavailableError


def _params(optional_params: Mapping[str, Any] | None) -> tuple[dict[str, Any], int]:
    """Engine parameters and the number of choices ``n`` from litellm's optional params."""
    p = dict(optional_params or {})
    params = {
        "max_tokens": p.get("max_tokens", p.get("max_completion_tokens")),
        "temperature": p.get("temperature"),
        "top_p": p.get("top_p"),
        "stop": p.get("stop"),
        "seed": p.get("seed"),
    }
    try:
        n = max(1, int(p.get("n") or 1))
    except (TypeError, ValueError):
        n = 1
    return params, n


def _choice_params(params: dict[str, Any], i: int) -> dict[str, Any]:
    """Parameters of choice ``i`` when ``n > 1``: seeds ``seed, seed+1, …`` (or all unseeded)."""
    if i == 0 or params.get("seed") is None:
        return params
    return {**params, "seed": int(params["seed"]) + i}


def _to_model_response(results: list[EmbeddedCallResult], model_response: ModelResponse | None) -> ModelResponse:
    resp = model_response if model_response is not None else ModelResponse()
    resp.choices = [
        Choices(index=i, finish_reason=r.finish_reason, message=Message(role="assistant", content=r.text))
        for i, r in enumerate(results)
    ]
    resp.model = EMBEDDED_MODEL
    resp.created = int(time.time())
    if not getattr(resp, "id", None):
        resp.id = f"chatcmpl-embedded-{uuid.uuid4().hex[:16]}"
    # As with OpenAI's n>1, the prompt is counted once and completions are summed.
    first = results[0]
    completion_tokens = sum(r.completion_tokens for r in results)
    usage = Usage(
        prompt_tokens=first.prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=first.prompt_tokens + completion_tokens,
        prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=first.cached_tokens),
    )
    setattr(resp, "usage", usage)
    return resp


class EmbeddedLLM(CustomLLM):
    """litellm handler for ``embedded/…`` models (all map to the one SmolLM2 instance).

    Honoured request parameters: ``temperature``, ``max_tokens`` (or
    ``max_completion_tokens``), ``top_p``, ``stop``, ``seed``, ``n`` (choices are queued together, so
    the engine decodes them in one batch, with seeds ``seed, seed+1, …``). A call without ``seed`` gets one from a
    process-wide generator seeded with 0 (reproducible for a fixed call order). ``timeout``
    is not enforced (a call cannot be interrupted once llama.cpp runs it).
    """

    def completion(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: ModelResponse,
        print_verbose: Callable,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict,
        acompletion: Any = None,
        litellm_params: Any = None,
        logger_fn: Any = None,
        headers: dict | None = None,
        timeout: Any = None,
        client: Any = None,
    ) -> ModelResponse:
        """Synchronous completion (blocks until the worker thread has answered)."""
        try:
            params, n = _params(optional_params)
            futures = [_ENGINE.submit(messages, **_choice_params(params, i)) for i in range(n)]
            results = [f.result() for f in futures]
        except EmbeddedUnavailableError as exc:
            raise CustomLLMError(status_code=500, message=str(exc)) from exc
        return _to_model_response(results, model_response)

    async def acompletion(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: ModelResponse,
        print_verbose: Callable,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict,
        acompletion: Any = None,
        litellm_params: Any = None,
        logger_fn: Any = None,
        headers: dict | None = None,
        timeout: Any = None,
        client: Any = None,
    ) -> ModelResponse:
        """Async completion: runs on the embedded worker thread, never on the event loop."""
        try:
            params, n = _params(optional_params)
            results = list(await asyncio.gather(*[_ENGINE.arun(messages, **_choice_params(params, i))
                                                  for i in range(n)]))
        except EmbeddedUnavailableError as exc:
            raise CustomLLMError(status_code=500, message=str(exc)) from exc
        return _to_model_response(results, model_response)


_REGISTER_LOCK = threading.Lock()
_HANDLER: EmbeddedLLM | None = None


def register_embedded() -> EmbeddedLLM:
    """Make ``embedded/smollm2`` callable through litellm at zero cost. Idempotent.

    Adds ``{"provider": "embedded", "custom_handler": <EmbeddedLLM>}`` to
    ``litellm.custom_provider_map`` (once) and registers the model's price (0 USD per token)
    with ``litellm.register_model``. Does not load the model (that happens on the first call).

    Returns:
        The handler instance registered.
    """
    global _HANDLER
    with _REGISTER_LOCK:
        for item in litellm.custom_provider_map:
            found = item.get("custom_handler")
            if item.get("provider") == EMBEDDED_PROVIDER and isinstance(found, EmbeddedLLM):
                handler = found
                break
        else:
            handler = _HANDLER or EmbeddedLLM()
            # Replace any foreign "embedded" entry in place, then append ours.
            litellm.custom_provider_map[:] = [
                item for item in litellm.custom_provider_map if item.get("provider") != EMBEDDED_PROVIDER
            ]
            litellm.custom_provider_map.append({"provider": EMBEDDED_PROVIDER, "custom_handler": handler})
        _HANDLER = handler
        # completion_cost() finds the price under the full id "embedded/smollm2" (verified
        # with litellm 1.110 both from a response and from model=...). Cache prices are given
        # explicitly so register_model does not warn about them.
        litellm.register_model(
            {
                EMBEDDED_MODEL: {
                    "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0,
                    "cache_read_input_token_cost": 0.0,
                    "cache_creation_input_token_cost": 0.0,
                    "litellm_provider": EMBEDDED_PROVIDER,
                    "mode": "chat",
                    "max_tokens": _N_CTX,
                    "max_input_tokens": _N_CTX,
                    "max_output_tokens": _N_CTX,
                }
            }
        )
        # Make "embedded" a known provider now (litellm otherwise does this lazily on the
        # first call), so cost and model-info lookups work before any call.
        custom_llm_setup = getattr(litellm.utils, "custom_llm_setup", None)
        if callable(custom_llm_setup):
            custom_llm_setup()
        return handler
