"""The one gateway to models. Every model call in masbench goes through :meth:`Gateway.complete`.

Per call: cache lookup (keyed with the sample index), the attempt loop (:mod:`.attempts`: the
model's health gate, a per-model concurrency slot, retries with backoff on retryable errors only)
sending each attempt to the model's provider backend (:data:`~masbench.llm.backends.BACKENDS`),
USD cost per token class (:mod:`.pricing`, with its provenance), one call row to the sink
(:mod:`.record`) and, with a recorder, the call's transcript (:mod:`.transcripts`) — on every path:
success, failure, cache hit. A call that still fails is *recorded* and returned with ``error`` set — never
dropped. What a call's usage means, reported and counted, is :mod:`.result`.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Mapping
from typing import Any

from .. import telemetry
from ..charge import Tally
from ..spec.model import ModelSpec
from .attempts import AttemptLoop, ModelUnavailable, Outcome
from .backends import Attempt, Backend, ModelBackend, Reply, backend_class, provider_of
from .cache import ResponseCache, cache_key
from .errors import describe
from .health import BreakerConfig, ModelHealth
from .limits import CallLimiter
from .pricing import Prices, resolve_prices
from .record import Sink, call_row
from .result import NO_USAGE, CallResult, call_status, worst_case
from .transcripts import TranscriptRecorder
from .usage import Usage

USAGE_MISSING = ("usage_missing: the provider returned no token usage (set estimate_usage: true on the model "
                 "to count it with a tokenizer, flagged estimated)")


ModelOverride = str | ModelSpec | dict[str, Any]
"""One ``--model`` override: a litellm id, a whole model spec (a model YAML, or a model the command
line declared free), or that spec as JSON data (as a store's ``runs.config`` and a worker keep it)."""


def models_from(mapping: dict[str, str | ModelSpec], overrides: Mapping[str, ModelOverride] | None = None
                ) -> dict[str, ModelSpec]:
    """Suite ``models`` (alias → id or spec) plus command-line overrides → specs. An id replaces the
    alias's id (its other settings kept, its prices dropped: they belonged to the replaced id); a
    spec replaces the alias's model whole."""
    out: dict[str, ModelSpec] = {}
    for alias, m in mapping.items():
        out[alias] = m if isinstance(m, ModelSpec) else ModelSpec(id=m)
    for alias, given in (overrides or {}).items():
        if isinstance(given, ModelSpec):
            out[alias] = given
        elif isinstance(given, dict):
            out[alias] = ModelSpec.model_validate(given)
        elif alias in out:  # the YAML's prices belonged to the replaced id: the new one is priced afresh
            out[alias] = out[alias].model_copy(update={"id": given, "sim": None, **_UNPRICED})
        else:
            out[alias] = ModelSpec(id=given)
    return out


def overrides_json(overrides: Mapping[str, ModelOverride]) -> dict[str, str | dict[str, Any]]:
    """Overrides as JSON data (a spec as its non-default fields): what a run's configuration
    identity hashes and its ``runs.config`` keeps. Plain ids stay strings, so a run overridden by
    ids alone hashes as it did before specs could be given."""
    return {alias: g.model_dump(mode="json", exclude_defaults=True) if isinstance(g, ModelSpec) else g
            for alias, g in overrides.items()}


_counter = itertools.count()
DEFAULT_RESERVE_COMPLETION = 4096
"""Completion tokens a ``tpm``-limited call without ``max_tokens`` reserves (settled to its usage after)."""
_UNPRICED = {"input_usd_per_mtok": None, "output_usd_per_mtok": None, "cached_input_usd_per_mtok": None,
             "cache_write_usd_per_mtok": None, "reasoning_usd_per_mtok": None, "price": None}


class Gateway:
    """Routes calls to models by alias (or raw id), with cache, retries, limits, cost and logging."""

    def __init__(self, models: dict[str, ModelSpec] | None = None, *, cache: ResponseCache | None = None,
                 sink: Sink | None = None, retry_base_s: float = 0.5, retry_max_s: float = 20.0,
                 backend: Backend | None = None, breaker: BreakerConfig | None = None,
                 transcripts: TranscriptRecorder | None = None, limiter: CallLimiter | None = None):
        """``limiter``: the run's rate limiter, shared by every worker (see :mod:`.limits`); the
        models' ``rpm``/``tpm``/``max_in_flight`` go unenforced without one."""
        self.loop = AttemptLoop(breaker or BreakerConfig(), retry_base_s, retry_max_s, limiter)
        self.models: dict[str, ModelSpec] = dict(models or {})
        self.cache = cache
        self.sink = sink
        """Receives one :class:`~masbench.store.rows.CallRow` per call (e.g. ``StoreWriter.put``)."""
        self.transcripts = transcripts
        """Records each call's messages and reply (None: no transcripts)."""
        self._prices: dict[str, Prices] = {}
        self.backend = backend
        """Answers every model's attempts instead of the providers' backends (scripted tests)."""
        self._backends: dict[str, ModelBackend] = {}
        self._prefix = uuid.uuid4().hex[:12]
        self.totals = Tally()
        """Every call's charge (:attr:`CallResult.charge <masbench.llm.result.CallResult.charge>`), added once."""
        for alias, spec in self.models.items():
            self._prepare(alias, spec)

    @property
    def stats(self) -> dict[str, Any]:
        """The running totals as the progress display and a worker's reports read them (a fresh
        dict, read from :attr:`totals` and the models' health): ``calls``, ``errors``,
        ``cache_hits``, ``prompt_tokens``, ``completion_tokens``, ``cost_usd``, ``breakers_open``,
        ``retry_after_waits``."""
        t = self.totals
        return {"calls": t.calls, "errors": t.failed, "cache_hits": t.cache_hits, "prompt_tokens": t.prompt,
                "completion_tokens": t.completion, "cost_usd": t.cost, "breakers_open": self.loop.breakers_open(),
                "retry_after_waits": self.loop.retry_after_waits()}

    @property
    def breaker(self) -> BreakerConfig:
        return self.loop.breaker

    @property
    def health(self) -> dict[str, ModelHealth]:
        """Per alias: probe, breaker, Retry-After hold, dead (see :mod:`.health`)."""
        return self.loop.health

    @property
    def fatal(self) -> tuple[str, str, str] | None:
        """(alias, model id, error) of the first model found misconfigured: the run must stop."""
        return self.loop.fatal

    # ----- model resolution ------------------------------------------------------------------
    def provider(self, spec: ModelSpec) -> ModelBackend:
        """This gateway's instance of the model's provider backend (made on first use)."""
        name = provider_of(spec)
        b = self._backends.get(name)
        if b is None:
            b = self._backends[name] = backend_class(spec)()
        return b

    def _prepare(self, alias: str, spec: ModelSpec) -> None:
        self._prices[alias] = resolve_prices(spec)
        self.loop.add_model(alias, spec)
        self.provider(spec).prepare(spec)

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
        spec = self.resolve(model)[1]
        return self.provider(spec).simulated

    def prompt_token_bound(self, model: str, messages: list[dict[str, Any]],
                           tools: list[dict[str, Any]] | None = None) -> int:
        """An upper bound on the prompt tokens a call will be billed (its provider's bound): its
        messages plus, when the request sends ``tools``, their schemas (billed as prompt too)."""
        spec = self.resolve(model)[1]
        b = self.provider(spec)
        return b.prompt_token_bound(spec, messages) + (b.tools_token_bound(spec, tools) if tools else 0)

    def supports_tools(self, model: str) -> bool:
        """Whether the model does function calling (takes ``tools``, answers ``tool_calls``): its
        YAML's ``function_calling`` when set, else its provider backend's answer (litellm's
        capability map; the embedded model and the default: no)."""
        spec = self.resolve(model)[1]
        if spec.function_calling is not None:
            return spec.function_calling
        return self.provider(spec).supports_tools(spec)

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
        t_start = time.time()
        t0 = time.perf_counter()
        key = None
        if self.cache is not None:
            key = cache_key(spec.id, spec.api_base, messages, req, sample_index)
            hit = self.cache.get(key)
            if hit is not None:
                res = self._from_cache(hit, spec, alias, call_id)
                res.latency_s = time.perf_counter() - t0
                self._record(res, tags, sample_index, [], t_start, req, messages)
                telemetry.chat(res, req, messages, tags, spec.api_base)
                return res
        backend = self.backend or self.provider(spec)
        t = tags or {}

        def send(n: int):
            return backend(Attempt(alias, spec, messages, req, sample_index, n, metadata or {}, t))

        lim = self.loop.limited(alias)
        reserve = 0
        if lim is not None and lim.tpm:  # the attempt's worst case: its prompt bound + the completion cap
            reserve = self.prompt_token_bound(alias, messages, req.get("tools")) + int(
                req.get("max_tokens") or DEFAULT_RESERVE_COMPLETION)
        out = await self.loop.run(alias, spec, send, (t.get("design"), t.get("task_id"), t.get("seed")), reserve)
        res = self._result(out, spec, alias, call_id, messages, req)
        res.latency_s = time.perf_counter() - t0
        if out.sent_at is not None:  # a rate-limited call: it began when the limiter let it out
            res.latency_s = max(0.0, res.latency_s - (out.sent_at - t_start))
            t_start = out.sent_at
        if self.cache is not None and key is not None and res.error is None and res.usage is not None:
            self.cache.put(key, _cache_entry(res, res.usage))
        self._record(res, tags, sample_index, out.log, t_start, req, messages)
        telemetry.chat(res, req, messages, tags, spec.api_base)
        return res

    def _result(self, out: Outcome, spec: ModelSpec, alias: str, call_id: str, messages: list[dict[str, Any]],
                req: dict[str, Any]) -> CallResult:
        """The one place a call's :class:`CallResult` is built from what its attempts came to."""
        prices = self._prices[alias]
        r = out.reply
        if r is None:  # failed for good (or never sent: a dead model)
            assert out.error is not None
            return CallResult(text="", model=spec.id, alias=alias, call_id=call_id,
                              simulated=self.provider(spec).simulated, usage=NO_USAGE, counted=NO_USAGE,
                              cost_usd=0.0, cost_source=prices.source, attempts=out.attempts,
                              error=describe(out.error), status="error")
        usage = r.usage()
        if usage is None:  # counted at its worst case, never 0 (see .result)
            counted, cost = worst_case(self.prompt_token_bound(alias, messages, req.get("tools")),
                                       req.get("max_tokens"), prices)
            source = prices.source
        elif usage.reported_cost is not None:
            counted, cost, source = usage, float(usage.reported_cost), "provider-reported"
        else:
            counted, cost, source = usage, prices.cost_of(usage), prices.source
        res = CallResult(text=r.text, model=spec.id, alias=alias, call_id=call_id, simulated=r.simulated,
                         usage=usage, counted=counted, cost_usd=cost, cost_source=source, attempts=out.attempts,
                         error=USAGE_MISSING if usage is None else None, finish_reason=r.finish_reason,
                         usage_raw=r.usage_raw, tool_calls=r.tool_calls)
        res.status = call_status(res)
        return res

    def _from_cache(self, hit: dict[str, Any], spec: ModelSpec, alias: str, call_id: str) -> CallResult:
        prompt, cached, write = hit["prompt_tokens"], hit.get("cached_tokens", 0), hit.get("cache_write_tokens", 0)
        completion, reasoning = hit["completion_tokens"], hit.get("reasoning_tokens", 0)
        usage = Usage(prompt_fresh=max(prompt - cached - write, 0), cached_read=cached, cache_write=write,
                      completion_visible=max(completion - reasoning, 0), reasoning=reasoning,
                      raw=hit.get("usage_raw"), estimated=hit.get("usage_status") == "estimated")
        res = CallResult(text=hit["text"], model=spec.id, alias=alias, call_id=call_id,
                         simulated=self.provider(spec).simulated, usage=usage, counted=usage,
                         cost_usd=hit["cost_usd"], cost_source=hit.get("cost_source", self._prices[alias].source),
                         cache_hit=True, finish_reason=hit.get("finish_reason"), usage_raw=hit.get("usage_raw"),
                         tool_calls=hit.get("tool_calls"))
        res.status = call_status(res)
        return res

    # ----- logging ---------------------------------------------------------------------------
    def _record(self, res: CallResult, tags: dict[str, Any] | None, sample_index: int, attempt_log: list[str],
                t_start: float, req: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        """Count the call's charge in :attr:`totals`; send its row to the sink and its transcript
        to the recorder (a call without a reply — status ``error`` — records its request messages only)."""
        self.totals.add(res.charge)
        sink, rec = self.sink, self.transcripts
        if sink is None and rec is None:
            return
        row = call_row(res, tags, sample_index, attempt_log, t_start=t_start, req=req)
        if sink is not None:
            sink(row)
        if rec is not None:
            rec.record(row, messages, None if res.status == "error" else res.text, res.tool_calls)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.flush()

    async def aclose(self) -> None:
        """:meth:`close`, and release the backends' connections (on the loop that made them)."""
        self.close()
        for b in self._backends.values():
            await b.aclose()


def _cache_entry(res: CallResult, u: Usage) -> dict[str, Any]:
    """A successful call as the response cache keeps it (flat counts: older caches stay readable)."""
    return {"text": res.text, "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
            "cached_tokens": u.cached_read, "cost_usd": res.cost_usd, "finish_reason": res.finish_reason,
            "cache_write_tokens": u.cache_write, "reasoning_tokens": u.reasoning, "cost_source": res.cost_source,
            "usage_status": res.usage_status, "usage_raw": res.usage_raw, "tool_calls": res.tool_calls}


__all__ = ["CallResult", "Gateway", "ModelUnavailable", "Reply", "models_from"]
