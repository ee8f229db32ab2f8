"""The loaded ``llama_cpp.Llama`` and the one worker thread every call runs on (llama.cpp state is
not thread-safe), with the real per-call token counts and process-wide stats."""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from litellm.llms.custom_llm import CustomLLMError

from .chatml import format_chatml
from .locate import _IM_END, _INSTALL_LLAMA, _N_CTX, EmbeddedUnavailableError, find_gguf


def engine_threads() -> int:
    """Threads for llama.cpp: ``MASBENCH_EMBEDDED_THREADS`` if set, else the cores this process may
    run on (``os.sched_getaffinity``; a container or ``taskset`` limit shows there, not in
    ``os.cpu_count()``). ggml's worker threads spin while waiting, so more threads than usable
    cores makes every token slower."""
    env = os.environ.get("MASBENCH_EMBEDDED_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise EmbeddedUnavailableError(f"MASBENCH_EMBEDDED_THREADS must be an integer, got {env!r}") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


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
                    n_threads=engine_threads(),
                    n_threads_batch=engine_threads(),
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
