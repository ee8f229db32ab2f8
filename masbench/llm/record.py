"""What a call leaves behind: its ``calls`` row (a :class:`~masbench.store.rows.CallRow`, with
what the provider *reported*: NULL token and cost columns when usage is missing; when it began;
its allow-listed request parameters, :data:`REQUEST_PARAMS`). What it was *counted* is its
``charge`` (:mod:`masbench.charge`); its transcript is :mod:`.transcripts`."""

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


__all__ = ["REQUEST_PARAMS", "Sink", "call_row", "request_json"]
