"""The one gateway to models. Every model call in masbench goes through :meth:`Gateway.complete`.

Per call: cache lookup (keyed with the sample index), a per-model concurrency slot, litellm
``acompletion`` (or the in-process simulator for ``sim/…``), retries with exponential backoff and
jitter on retryable errors only, USD cost per token class (see :mod:`masbench.llm.pricing`, with
its provenance), and one call row to the sink with the token classes, the raw usage, cost,
latency, cache hit, attempts, status and error. A call that still fails is *recorded* and
returned with ``error`` set — never dropped.

Call status (:func:`call_status`): ``ok``; ``error`` (failed after retries); ``usage_missing``
(the provider returned no usage and the model does not opt in to ``estimate_usage``: an error,
never 0 tokens); ``truncated`` (``finish_reason = length``); ``empty`` (no visible text).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from ..spec.model import ModelSpec
from .backends import Attempt, Backend, LitellmBackend, SimBackend
from .cache import ResponseCache, cache_key
from .errors import describe, is_retryable
from .pricing import Prices, resolve_prices
from .sim import _prompt_tokens, profile_for
from .usage import Usage

log = logging.getLogger("masbench.llm")

Sink = Callable[[dict[str, Any]], None]


@dataclass(slots=True)
class CallResult:
    """The outcome of one logical call (after retries)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_usd: float
    latency_s: float
    cache_hit: bool
    attempts: int
    error: str | None
    model: str
    alias: str
    simulated: bool
    finish_reason: str | None
    call_id: str
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_source: str = "yaml"
    """Where the cost came from: ``yaml``, ``litellm-map``, ``provider-reported``, ``zero-declared``, ``unpriced``."""
    usage_status: str = "reported"
    """``reported``, ``estimated`` or ``missing``."""
    usage_raw: dict[str, Any] | None = None
    status: str = "ok"
    """``ok``, ``error``, ``usage_missing``, ``truncated`` or ``empty`` (see :func:`call_status`)."""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def models_from(mapping: dict[str, str | ModelSpec], overrides: dict[str, str] | None = None) -> dict[str, ModelSpec]:
    """Suite ``models`` (alias → id or spec) plus CLI ``--model ALIAS=ID`` overrides → specs."""
    out: dict[str, ModelSpec] = {}
    for alias, m in mapping.items():
        out[alias] = m if isinstance(m, ModelSpec) else ModelSpec(id=m)
    for alias, mid in (overrides or {}).items():
        if alias in out:  # the YAML's prices belonged to the replaced id: the new one is priced afresh
            out[alias] = out[alias].model_copy(update={"id": mid, "sim": None, **_UNPRICED})
        else:
            out[alias] = ModelSpec(id=mid)
    return out


_counter = itertools.count()
_UNPRICED = {"input_usd_per_mtok": None, "output_usd_per_mtok": None, "cached_input_usd_per_mtok": None,
             "cache_write_usd_per_mtok": None, "reasoning_usd_per_mtok": None, "price": None}



class Gateway:
    """Routes calls to models by alias (or raw id), with cache, retries, limits, cost and logging."""

    def __init__(self, models: dict[str, ModelSpec] | None = None, *, cache: ResponseCache | None = None,
                 sink: Sink | None = None, retry_base_s: float = 0.5, retry_max_s: float = 20.0,
                 backend: Backend | None = None):
        self.models: dict[str, ModelSpec] = dict(models or {})
        self.cache = cache
        self.sink = sink
        self.retry_base_s = retry_base_s
        self.retry_max_s = retry_max_s
        self._sems: dict[str, asyncio.Semaphore] = {}
        self._prices: dict[str, Prices] = {}
        self.backend = backend
        """Answers every model's attempts instead of the built-in backends (scripted tests)."""
        self._sim_backend = SimBackend()
        self._litellm_backend = LitellmBackend()
        self._embedded_ready = False
        self._prefix = uuid.uuid4().hex[:12]
        self.stats = {"calls": 0, "errors": 0, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0,
                      "cost_usd": 0.0}
        for alias, spec in self.models.items():
            self._prepare(alias, spec)

    # ----- model resolution ------------------------------------------------------------------
    def _prepare(self, alias: str, spec: ModelSpec) -> None:
        self._prices[alias] = resolve_prices(spec)
        self._sems[alias] = asyncio.Semaphore(spec.concurrency)
        if spec.provider == "sim":
            profile_for(spec.id, spec.sim)  # fail fast on an unknown profile
        elif spec.provider == "embedded" and not self._embedded_ready:
            from .embedded import register_embedded  # deferred: llama.cpp + litellm, only for embedded/
            register_embedded()
            self._embedded_ready = True

    def add_model(self, alias: str, spec: ModelSpec) -> None:
        """Register a model under an alias (no-op if the alias exists), e.g. a handbook's pool."""
        if alias not in self.models:
            self.models[alias] = spec
            self._prepare(alias, spec)

    def resolve(self, model: str) -> tuple[str, ModelSpec]:
        """An alias, or a raw model id (registered on first use as its own alias)."""
        spec = self.models.get(model)
        if spec is None:
            if "/" not in model:
                raise KeyError(f"unknown model alias {model!r} (known: {', '.join(sorted(self.models)) or 'none'}); "
                               "give a litellm id like 'openai/gpt-4o-mini' or add the alias to the suite's models")
            spec = ModelSpec(id=model)
            self.models[model] = spec
            self._prepare(model, spec)
        return model, spec

    def prices(self, model: str) -> Prices:
        alias, _ = self.resolve(model)
        return self._prices[alias]

    def is_simulated(self, model: str) -> bool:
        return self.resolve(model)[1].provider == "sim"

    # ----- the call --------------------------------------------------------------------------
    async def complete(self, model: str, messages: list[dict[str, Any]], *, sample_index: int = 0,
                       temperature: float | None = None, max_tokens: int | None = None,
                       params: dict[str, Any] | None = None, tags: dict[str, Any] | None = None,
                       metadata: dict[str, Any] | None = None) -> CallResult:
        """Make one logical call. Never raises for model errors: a failure comes back with
        ``error`` set and is recorded like any other call."""
        alias, spec = self.resolve(model)
        req: dict[str, Any] = dict(spec.params)
        if params:
            req.update(params)
        if temperature is not None:
            req["temperature"] = temperature
        if max_tokens is not None:
            req["max_tokens"] = max_tokens
        call_id = f"{self._prefix}-{next(_counter)}"
        key = None
        t0 = time.perf_counter()
        if self.cache is not None:
            key = cache_key(spec.id, spec.api_base, messages, req, sample_index)
            hit = self.cache.get(key)
            if hit is not None:
                res = CallResult(hit["text"], hit["prompt_tokens"], hit["completion_tokens"], hit.get("cached_tokens", 0),
                                 hit["cost_usd"], time.perf_counter() - t0, True, 0, None, spec.id, alias,
                                 spec.provider == "sim", hit.get("finish_reason"), call_id,
                                 hit.get("cache_write_tokens", 0), hit.get("reasoning_tokens", 0),
                                 hit.get("cost_source", self._prices[alias].source), hit.get("usage_status", "reported"),
                                 hit.get("usage_raw"))
                res.status = call_status(res)
                self._record(res, tags, sample_index, [])
                return res
        attempts = 0
        attempt_log: list[str] = []
        sem = self._sems[alias]
        result: CallResult | None = None
        # First attempt without tenacity (its bookkeeping costs ~30 µs a call); the retry loop
        # only starts once a retryable error has happened.
        first_error: Exception | None = None
        try:
            attempts = 1
            async with sem:
                result = await self._once(alias, spec, messages, req, sample_index, 1, metadata, call_id, tags)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            attempt_log.append(describe(exc))
            first_error = exc
        if first_error is not None:
            if not is_retryable(first_error) or spec.max_attempts <= 1:
                return self._failed(first_error, attempts, spec, alias, call_id, t0, tags, sample_index, attempt_log)
            # tenacity's first try is immediate; the failed first attempt earns a jittered wait.
            await asyncio.sleep(random.uniform(0, self.retry_base_s))
            try:
                async for attempt in AsyncRetrying(
                    stop=stop_after_attempt(spec.max_attempts - 1),
                    wait=wait_random_exponential(multiplier=self.retry_base_s, max=self.retry_max_s),
                    retry=retry_if_exception(is_retryable),
                    reraise=True,
                ):
                    with attempt:
                        attempts += 1
                        try:
                            async with sem:
                                result = await self._once(alias, spec, messages, req, sample_index, attempts, metadata,
                                                          call_id, tags)
                        except BaseException as exc:
                            if isinstance(exc, asyncio.CancelledError):
                                raise
                            attempt_log.append(describe(exc))
                            raise
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the call failed for good: record it, return it
                return self._failed(exc, attempts, spec, alias, call_id, t0, tags, sample_index, attempt_log)
        assert result is not None
        result.attempts = attempts
        result.latency_s = time.perf_counter() - t0
        result.status = call_status(result)
        if key is not None and result.error is None:
            self.cache.put(key, {"text": result.text, "prompt_tokens": result.prompt_tokens,
                                 "completion_tokens": result.completion_tokens,
                                 "cached_tokens": result.cached_tokens, "cost_usd": result.cost_usd,
                                 "finish_reason": result.finish_reason, "cache_write_tokens": result.cache_write_tokens,
                                 "reasoning_tokens": result.reasoning_tokens, "cost_source": result.cost_source,
                                 "usage_status": result.usage_status, "usage_raw": result.usage_raw})
        self._record(result, tags, sample_index, attempt_log)
        return result

    def _failed(self, exc: BaseException, attempts: int, spec: ModelSpec, alias: str, call_id: str, t0: float,
                tags: dict[str, Any] | None, sample_index: int, attempt_log: list[str]) -> CallResult:
        res = CallResult("", 0, 0, 0, 0.0, time.perf_counter() - t0, False, attempts, describe(exc), spec.id,
                         alias, spec.provider == "sim", None, call_id, cost_source=self._prices[alias].source,
                         status="error")
        self._record(res, tags, sample_index, attempt_log)
        return res

    async def _once(self, alias: str, spec: ModelSpec, messages: list[dict[str, Any]], req: dict[str, Any],
                    sample_index: int, attempt: int, metadata: dict[str, Any] | None, call_id: str,
                    tags: dict[str, Any] | None) -> CallResult:
        backend = self.backend or (self._sim_backend if spec.provider == "sim" else self._litellm_backend)
        r = await backend(Attempt(alias, spec, messages, req, sample_index, attempt, metadata or {}, tags or {}))
        prices = self._prices[alias]
        error = None
        if r.usage_status == "missing":
            error = ("usage_missing: the provider returned no token usage (set estimate_usage: true on the model "
                     "to count it with a tokenizer, flagged estimated)")
        if r.reported_cost is not None:
            cost, source = float(r.reported_cost), "provider-reported"
        else:
            u = Usage(max(r.prompt_tokens - r.cached_tokens - r.cache_write_tokens, 0), r.cached_tokens,
                      r.cache_write_tokens, max(r.completion_tokens - r.reasoning_tokens, 0), r.reasoning_tokens)
            cost, source = prices.cost_of(u), prices.source
        return CallResult(r.text, r.prompt_tokens, r.completion_tokens, r.cached_tokens, cost, 0.0, False, attempt,
                          error, spec.id, alias, r.simulated, r.finish_reason, call_id, r.cache_write_tokens,
                          r.reasoning_tokens, source, r.usage_status, r.usage_raw)

    # ----- logging ---------------------------------------------------------------------------
    def _record(self, res: CallResult, tags: dict[str, Any] | None, sample_index: int, attempt_log: list[str]) -> None:
        st = self.stats
        st["calls"] += 1
        st["errors"] += res.error is not None
        st["cache_hits"] += res.cache_hit
        st["prompt_tokens"] += res.prompt_tokens
        st["completion_tokens"] += res.completion_tokens
        st["cost_usd"] += res.cost_usd
        if self.sink is None:
            return
        missing = res.usage_status == "missing"
        row = {
            "call_id": res.call_id, "model_alias": res.alias, "model": res.model, "sample_index": sample_index,
            "prompt_tokens": None if missing else res.prompt_tokens,
            "completion_tokens": None if missing else res.completion_tokens,
            "cached_tokens": None if missing else res.cached_tokens, "cost_usd": None if missing else res.cost_usd,
            "latency_s": res.latency_s,
            "cache_hit": res.cache_hit, "attempts": res.attempts, "error": res.error,
            "attempt_errors": json.dumps(attempt_log) if attempt_log else None,
            "simulated": res.simulated, "finish_reason": res.finish_reason, "ts": time.time(),
            **usage_columns(res),
        }
        if tags:
            row.update(tags)
        self.sink(row)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.flush()


def call_status(res: CallResult) -> str:
    """The call's status class (see the module docstring)."""
    if res.usage_status == "missing":
        return "usage_missing"
    if res.error is not None:
        return "error"
    if res.finish_reason == "length":
        return "truncated"
    if not res.text.strip():
        return "empty"
    return "ok"


def usage_columns(res: CallResult) -> dict[str, Any]:
    """The call row's token-class, provenance and status columns (NULL counts when usage is missing)."""
    if res.usage_status == "missing":
        fresh = write = visible = reasoning = None
    else:
        fresh = max(res.prompt_tokens - res.cached_tokens - res.cache_write_tokens, 0)
        write, reasoning = res.cache_write_tokens, res.reasoning_tokens
        visible = max(res.completion_tokens - res.reasoning_tokens, 0)
    return {"prompt_fresh_tokens": fresh, "cache_write_tokens": write, "completion_visible_tokens": visible,
            "reasoning_tokens": reasoning, "usage_status": res.usage_status,
            "usage_raw": json.dumps(res.usage_raw, default=str) if res.usage_raw is not None else None,
            "cost_source": res.cost_source, "status": res.status}


def prompt_token_bound(gateway: Gateway, model: str, messages: list[dict[str, Any]]) -> int:
    """An upper bound on the prompt tokens a call will be billed, for budget enforcement.

    Exact for ``sim/…`` (its own formula). Otherwise litellm's token counter with a 25% + 16
    margin (different tokenizers disagree), falling back to UTF-8 bytes (a token is ≥ 1 byte).
    """
    _, spec = gateway.resolve(model)
    if spec.provider == "sim":
        return _prompt_tokens(messages)
    try:
        from ._litellm import litellm  # deferred: heavy import, only for real providers

        n = litellm.token_counter(model=spec.id if spec.provider == "litellm" else "gpt-4o", messages=messages)
        return int(n * 1.25) + 16
    except Exception:
        return sum(len(str(m.get("content", "")).encode()) + 8 for m in messages)
