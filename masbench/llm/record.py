"""What a call leaves behind: its ``calls`` row (a :class:`~masbench.store.rows.CallRow`, with
what the provider *reported*: NULL token and cost columns when usage is missing; when it began;
its allow-listed request parameters, :data:`REQUEST_PARAMS`) and its share of the gateway's
running totals (what it was *counted*, like every other tally). Its transcript is
:mod:`.transcripts`."""

from __future__ import annotations

import json
import time
from typing import Any, Callable

from ..store.rows import CallRow
from .result import CallResult
from .toolcalls import tool_names

Sink = Callable[[CallRow], None]
"""Where a gateway sends its call rows, e.g. ``StoreWriter.put`` or ``rows.append`` (the
transcript's records go to the recorder's own sink, :data:`~.transcripts.RecordSink`)."""

REQUEST_PARAMS = ("temperature", "max_tokens", "top_p", "seed", "stop", "n", "response_format", "tool_choice",
                  "tools")
"""The request parameters ``calls.request`` keeps — an allow-list: keys, headers, ``api_base``
and every other parameter a model's ``params`` may hold never reach the store. ``tools`` is kept
as the *names* of the functions sent (``["search", "read_document"]``), not their schemas."""

STATS_KEYS = ("calls", "errors", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd", "breakers_open",
              "retry_after_waits")
"""The keys of ``Gateway.stats`` (the progress display and the run's summary read them)."""


def new_stats() -> dict[str, Any]:
    """Zeroed gateway totals (a plain dict: the progress display holds it and reads it live)."""
    return {k: 0.0 if k == "cost_usd" else 0 for k in STATS_KEYS}


def tally(stats: dict[str, Any], res: CallResult) -> None:
    """Add one call to the gateway's totals: its counted usage and cost, like the meter."""
    stats["calls"] += 1
    stats["errors"] += res.error is not None
    stats["cache_hits"] += res.cache_hit
    stats["prompt_tokens"] += res.prompt_tokens
    stats["completion_tokens"] += res.completion_tokens
    stats["cost_usd"] += res.cost_usd


def request_json(req: dict[str, Any]) -> str | None:
    """``calls.request``: the :data:`REQUEST_PARAMS` the request set, as JSON (None if none); of
    ``tools`` only their function names."""
    kept = {k: tool_names(req[k]) if k == "tools" else req[k] for k in REQUEST_PARAMS if req.get(k) is not None}
    return json.dumps(kept, sort_keys=True, default=str) if kept else None


def call_row(res: CallResult, tags: dict[str, Any] | None, sample_index: int, attempt_log: list[str], *,
             t_start: float | None = None, req: dict[str, Any] | None = None) -> CallRow:
    """The ``calls`` row of one call. ``tags`` are its run columns (run_id, purpose, design,
    task_id, seed, node, agent); an unknown tag is a ``TypeError`` here, where the row is made.
    ``t_start``: epoch seconds the call began; ``req``: its request parameters (only the
    :data:`REQUEST_PARAMS` are kept)."""
    u = res.usage
    return CallRow(
        call_id=res.call_id, model_alias=res.alias, model=res.model, sample_index=sample_index,
        prompt_tokens=None if u is None else u.prompt_tokens,
        completion_tokens=None if u is None else u.completion_tokens,
        cached_tokens=None if u is None else u.cached_read,
        cost_usd=None if u is None else res.cost_usd,
        latency_s=res.latency_s, cache_hit=res.cache_hit, attempts=res.attempts, error=res.error,
        attempt_errors=json.dumps(attempt_log) if attempt_log else None,
        simulated=res.simulated, finish_reason=res.finish_reason, ts=time.time(),
        prompt_fresh_tokens=None if u is None else u.prompt_fresh,
        cache_write_tokens=None if u is None else u.cache_write,
        completion_visible_tokens=None if u is None else u.completion_visible,
        reasoning_tokens=None if u is None else u.reasoning,
        usage_status=res.usage_status,
        usage_raw=json.dumps(res.usage_raw, default=str) if res.usage_raw is not None else None,
        cost_source=res.cost_source, status=res.status, t_start=t_start,
        request=request_json(req) if req else None,
        **(tags or {}),
    )


__all__ = ["REQUEST_PARAMS", "STATS_KEYS", "Sink", "call_row", "new_stats", "request_json", "tally"]
