"""The loaded ``llama_cpp.Llama`` and its decoders, one worker thread each (a llama.cpp context is
not thread-safe; contexts on one model are independent), with the real per-call token counts and
process-wide stats."""

from __future__ import annotations

import asyncio
import functools
import os
import random
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from litellm.llms.custom_llm import CustomLLMError

from .chatml import format_chatml
from .decode import BatchDecoder, EmbeddedCallResult, SampleRequest
from .locate import _IM_END, _INSTALL_LLAMA, _N_CTX, EmbeddedUnavailableError, find_gguf


def _env_count(name: str) -> int | None:
    """The environment variable ``name`` as a count (at least 1), None when unset or empty."""
    env = os.environ.get(name, "").strip()
    if not env:
        return None
    try:
        return max(1, int(env))
    except ValueError:
        raise EmbeddedUnavailableError(f"{name} must be an integer, got {env!r}") from None


def engine_threads() -> int:
    """Threads for llama.cpp: ``MASBENCH_EMBEDDED_THREADS`` if set, else the cores this process may
    run on (``os.sched_getaffinity``; a container or ``taskset`` limit shows there, not in
    ``os.cpu_count()``). ggml's worker threads spin while waiting, so more threads than usable
    cores makes every token slower."""
    env = _env_count("MASBENCH_EMBEDDED_THREADS")
    if env is not None:
        return env
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def engine_decoders() -> int:
    """Decoders (llama.cpp contexts on the one loaded model, one worker thread each):
    ``MASBENCH_EMBEDDED_DECODERS`` if set, else one per engine thread (:func:`engine_threads`).
    Each decoder runs ``engine_threads() // decoders`` llama.cpp threads (at least one). For a
    135M model, two threads on one sequence spend much of each token synchronising (and spin
    when a core is taken by another process), so two single-threaded decoders serving two
    prompts at once are faster on 2 cores; 1 and 2 threads give bit-identical logits
    (``benchmarks/embedded_threads_numerics.py``), so the split changes no sample."""
    env = _env_count("MASBENCH_EMBEDDED_DECODERS")
    return engine_threads() if env is None else env


@dataclass
class EmbeddedStats:
    """Process-wide counters of the embedded model (updated on the worker thread).

    Attributes:
        calls: completions finished.
        prompt_tokens: their prompt tokens.
        prompt_tokens_evaluated: prompt tokens really run through the model (the rest came
            from the prefix cache or were shared with a concurrent sample of the same prompt).
        completion_tokens: tokens generated.
        seconds: sum of the calls' wall times (concurrent samples overlap).
        decode_calls: ``llama_decode`` calls (a batched step is one call for all its samples), all
            decoders.
        peak_group: most samples of one prompt decoded together so far (in one decoder).
    """

    calls: int = 0
    prompt_tokens: int = 0
    prompt_tokens_evaluated: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    decode_calls: int = 0
    peak_group: int = 0


@dataclass(slots=True, eq=False)  # compared by identity in the backlog
class _Pending:
    """A call waiting on the worker: its messages and parameters, then its decode request."""

    messages: list[Mapping[str, Any]]
    params: dict[str, Any]
    future: Future
    req: SampleRequest | None = None


@dataclass(slots=True, eq=False)
class _Job:
    """A function to run on the worker thread (inspection, benchmarks, cache reset)."""

    fn: Callable[[], Any]
    future: Future


class _EmbeddedEngine:
    """The loaded ``llama_cpp.Llama`` and its decoders (:func:`engine_decoders`), each a llama.cpp
    context with its own worker thread (a context is not thread-safe). Calls wait in one backlog;
    a free worker takes the oldest call whose prompt no other worker is decoding and decodes it
    with the calls of the same prompt that join (up to ``N_SEQ``, see :mod:`.decode`), so
    different prompts run side by side in different contexts and never in one (where they would
    change each other's logits). A sample is a function of its prompt and seed whichever worker
    decodes it. One per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._llm: Any = None
        self._cond = threading.Condition()  # guards the backlog, the busy map and the decoders list
        self._backlog: deque[_Pending | _Job] = deque()
        self._busy: dict[int, list[int] | None] = {}  # worker -> the prompt it decodes (None: a job)
        self._decoders: list[BatchDecoder | None] = []
        self._threads: list[threading.Thread] = []
        self._seed_rng = random.Random(0)  # seeds for calls that carry none
        self._stats_lock = threading.Lock()
        self.stats = EmbeddedStats()
        self.last: EmbeddedCallResult | None = None

    # ------------------------------------------------------------------ loading
    def llm(self) -> Any:
        """The ``llama_cpp.Llama`` instance, loaded on first use (thread-safe). Its own context
        is not used for completions (each decoder has one with several sequences); it serves the
        tokenizer, the metadata and bare-llama comparisons."""
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
                self._llm = llama_cpp.Llama(model_path=path, n_ctx=_N_CTX, n_threads=engine_threads(),
                                            n_threads_batch=engine_threads(), verbose=False)
        return self._llm

    def decoder(self, k: int = 0) -> BatchDecoder:
        """Worker ``k``'s batch decoder (its thread only): ``N_SEQ`` sequences over ``2 * _N_CTX``
        cells, ``engine_threads() // engine_decoders()`` llama.cpp threads."""
        with self._cond:
            dec = self._decoders[k] if k < len(self._decoders) else None
        if dec is None:
            dec = BatchDecoder(self.llm(), 2 * _N_CTX, max(1, engine_threads() // engine_decoders()))
            with self._cond:
                self._decoders += [None] * (k + 1 - len(self._decoders))
                self._decoders[k] = dec
        return dec

    # ------------------------------------------------------------------ the public calls
    def submit(self, messages: list[Mapping[str, Any]], **params: Any) -> Future:
        """Queue one completion; the future resolves to an :class:`EmbeddedCallResult`.

        Parameters: ``max_tokens``, ``temperature`` (default 0.8; 0 is greedy), ``top_p``
        (default 0.95), ``stop`` (a string or a list), ``seed`` (default: the next seed of a
        process-wide generator seeded with 0, reproducible for a fixed call order)."""
        if params.get("seed") is None:
            with self._lock:
                params["seed"] = self._seed_rng.randrange(2**31)
        fut: Future = Future()
        self._put(_Pending(list(messages), params, fut))
        return fut

    async def arun(self, messages: list[Mapping[str, Any]], **params: Any) -> EmbeddedCallResult:
        """One completion on a worker thread, awaited from the event loop (never blocks it)."""
        return await asyncio.wrap_future(self.submit(messages, **params))

    def run_sync(self, messages: list[Mapping[str, Any]], **params: Any) -> EmbeddedCallResult:
        """One completion on a worker thread, blocking the caller (queued with async calls)."""
        return self.submit(messages, **params).result()

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn()`` on a worker thread while no completion runs (every worker waits for it;
        calls queued after it wait) and return its result."""
        fut: Future = Future()
        self._put(_Job(fn, fut))
        return fut.result()

    def reset_cache(self) -> None:
        """Forget every decoder's prefix cache: the next call evaluates its whole prompt."""
        def reset() -> None:
            with self._cond:
                decoders = [d for d in self._decoders if d is not None]
            for d in decoders:
                d.reset()
        self.call(reset)

    # ------------------------------------------------------------------ the workers
    def _put(self, item: _Pending | _Job) -> None:
        with self._cond:
            if not self._threads:
                for k in range(engine_decoders()):
                    t = threading.Thread(target=self._work, args=(k,), name=f"masbench-embedded-{k}", daemon=True)
                    self._threads.append(t)
                    t.start()
            self._backlog.append(item)
            self._cond.notify_all()

    def _cached_elsewhere(self, k: int, prompt: list[int]) -> bool:
        """Another idle worker's decoder holds ``prompt`` (and worker ``k``'s does not): leave the
        call to it, so a prompt's next call reuses its prefix cache."""
        mine = self._decoders[k] if k < len(self._decoders) else None
        if mine is not None and mine.holds(prompt):
            return False
        return any(d is not None and j != k and j not in self._busy and d.holds(prompt)
                   for j, d in enumerate(self._decoders))

    def _pick(self, k: int) -> _Pending | _Job | None:
        """The item worker ``k`` takes next (removed from the backlog), or None (wait). Holds the lock."""
        if any(v is None for v in self._busy.values()):
            return None  # a job runs alone
        for item in list(self._backlog):
            if isinstance(item, _Job):
                if self._busy:
                    return None  # it waits for the running groups; later calls wait behind it
                self._backlog.remove(item)
                return item
            if not self._prepare(item):
                self._backlog.remove(item)
                continue
            assert item.req is not None
            prompt = item.req.prompt
            if any(v == prompt for v in self._busy.values()) or self._cached_elsewhere(k, prompt):
                continue  # it joins that group (or waits for its worker)
            self._backlog.remove(item)
            return item
        return None

    def _work(self, k: int) -> None:
        while True:
            with self._cond:
                while (item := self._pick(k)) is None:
                    self._cond.wait()
                self._busy[k] = item.req.prompt if isinstance(item, _Pending) and item.req is not None else None
                self._cond.notify_all()  # a call left to this worker's cache may now go to another
            try:
                if isinstance(item, _Job):
                    try:
                        item.future.set_result(item.fn())
                    except Exception as exc:  # handed to the caller, who re-raises it
                        item.future.set_exception(exc)
                else:
                    self._serve(item, k)
            finally:
                with self._cond:
                    del self._busy[k]
                    self._cond.notify_all()

    def _prepare(self, p: _Pending) -> bool:
        """Tokenize and check a call; False (and the future failed) when it cannot run."""
        if p.req is not None:
            return True
        try:
            p.req = self._request(p)
            return True
        except Exception as exc:  # handed to the caller (a too-long prompt, a missing model)
            p.future.set_exception(exc)
            return False

    def _request(self, p: _Pending) -> SampleRequest:
        llm = self.llm()
        # We render ChatML ourselves and decode the token list: the prompt is a pure, tested
        # function of the messages, tokenized exactly once (its count is known up front and
        # checked against the context size), and no chat-handler layer can alter it.
        tokens = llm.tokenize(format_chatml(p.messages).encode("utf-8"), add_bos=False, special=True)
        if len(tokens) >= _N_CTX:
            raise CustomLLMError(status_code=400,
                                 message=f"prompt is {len(tokens)} tokens; the embedded model's context is {_N_CTX}")
        room = _N_CTX - len(tokens)
        max_tokens, stop = p.params.get("max_tokens"), p.params.get("stop")
        stops = [stop] if isinstance(stop, str) and stop else [s for s in (stop or []) if isinstance(s, str) and s]
        temperature, top_p = p.params.get("temperature"), p.params.get("top_p")
        return SampleRequest(
            prompt=list(tokens),
            n_max=room if max_tokens is None or int(max_tokens) <= 0 else min(int(max_tokens), room),
            stops=[s for s in stops if s != _IM_END],  # <|im_end|> is an end-of-generation token
            temperature=0.8 if temperature is None else float(temperature),
            top_p=0.95 if top_p is None else float(top_p),
            seed=int(p.params["seed"]),
            finish=functools.partial(self._record, fut=p.future),
        )

    def _serve(self, first: _Pending, k: int) -> None:
        group = [first]

        def poll(take: Callable[[SampleRequest], bool]) -> None:
            with self._cond:
                for item in list(self._backlog):  # arrival order; a job waits for the group to end
                    if isinstance(item, _Job):
                        continue
                    if not self._prepare(item):
                        self._backlog.remove(item)
                    elif item.req is not None and take(item.req):
                        self._backlog.remove(item)
                        group.append(item)

        assert first.req is not None
        try:
            self.decoder(k).run(first.req, poll)
        except Exception as exc:  # a llama.cpp failure fails the calls it was decoding, not the worker
            for p in group:
                if not p.future.done():
                    p.future.set_exception(exc)

    def _record(self, result: EmbeddedCallResult, fut: Future) -> None:
        st = self.stats
        with self._stats_lock:
            st.calls += 1
            st.prompt_tokens += result.prompt_tokens
            st.prompt_tokens_evaluated += result.prompt_tokens_evaluated
            st.completion_tokens += result.completion_tokens
            st.seconds += result.seconds
            decoders = [d for d in self._decoders if d is not None]
            st.decode_calls = sum(d.decode_calls for d in decoders)
            st.peak_group = max((d.peak_group for d in decoders), default=0)
            self.last = result
        fut.set_result(result)


_ENGINE = _EmbeddedEngine()


def get_embedded_llm() -> Any:
    """The process-wide ``llama_cpp.Llama`` (loads it on first use): tokenizer and metadata.
    Completions do not run in its context but in the batch decoder's."""
    return _ENGINE.llm()


def embedded_stats() -> EmbeddedStats:
    """Process-wide counters: calls, prompt tokens, prompt tokens really evaluated, etc."""
    return _ENGINE.stats


def last_call() -> EmbeddedCallResult | None:
    """The result of the most recent embedded call in this process (None before the first)."""
    return _ENGINE.last
