"""Tool calls of a run as store records and spans: one :class:`~masbench.store.ToolCallRow` per
call (and the :class:`~masbench.store.TextRow` of the observation it names, once per run), sent to
the run's sink — the one that gets its node rows — and one ``execute_tool`` span per call.

What the observation texts cost follows the run's transcript mode (the gateway's
:class:`~masbench.llm.TranscriptRecorder`, when it has one): ``full`` keeps every observation,
``errors`` only those of calls that did not end ``ok``, ``none`` none (``text_hash`` is then
NULL). The rows themselves are always kept: they are small and they are what retrieval recall and
tool latency are read from.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

from .. import telemetry
from ..store import TextRow, ToolCallRow, text_hash
from ..tools import ToolResult
from .scope import Shared

_ROW_TAGS = ("run_id", "purpose", "design", "task_id", "seed")


def result_ids(r: ToolResult) -> list[str] | None:
    """The document ids a call returned or opened: its data, when that is a list of strings."""
    d = r.data
    if r.ok and isinstance(d, list) and all(isinstance(x, str) for x in d):
        return list(d)
    return None


def _keeps_text(sh: Shared, status: str) -> bool:
    rec = getattr(sh.gateway, "transcripts", None)
    mode = getattr(rec, "mode", "full")
    return mode == "full" or (mode == "errors" and status != "ok")


def emit(sh: Shared, node: str, step: int, position: int, call_id: str | None, r: ToolResult) -> None:
    """Send one tool call's row (and its observation's text, the first time) to the run's sink."""
    sink = sh.sink
    if sink is None:
        return
    h = None
    if _keeps_text(sh, r.status):
        h = text_hash(r.text)
        if h not in sh.texts:
            sh.texts.add(h)
            sink(TextRow(text_hash=h, text=r.text, chars=len(r.text)))
    ids = result_ids(r)
    tags = sh.tags
    sink(ToolCallRow(**{k: tags[k] for k in _ROW_TAGS if k in tags}, call_id=call_id, tool_call_id=r.call.id or None,
                     node=node, step=step, position=position, tool=r.call.name, arguments=r.arguments,
                     status=r.status, error=r.error, latency_s=r.latency_s, bytes_out=r.bytes_out,
                     truncated=r.truncated, text_hash=h, result_ids=json.dumps(ids) if ids is not None else None,
                     t_start=r.t_start or None, ts=time.time()))


def trace(r: ToolResult, step: int, tags: Mapping[str, object]) -> None:
    """The call's ``execute_tool`` span (:func:`masbench.telemetry.execute_tool`, a child of the
    node's span, over the tool's own time); a refused call gets one too, marked an error."""
    telemetry.execute_tool(r.call.name, call_id=r.call.id or None, status=r.status, error=r.error,
                           latency_s=r.latency_s, bytes_out=r.bytes_out, truncated=r.truncated,
                           t_start=r.t_start or None, step=step, arguments=r.arguments, result=r.text, tags=tags)


__all__ = ["emit", "result_ids", "trace"]
