"""One cell's rows as inspect_ai log parts: messages, usage, a model event per call, a span per node.

The shapes are those inspect_ai's log reader (``inspect_ai.log.read_eval_log``, log format
version 2) validates — written here as plain JSON values, so exporting needs no inspect_ai
installed. Content is the store's as stored: texts are not rewritten, and a message role inspect
does not know is kept in the message's metadata under the nearest role it does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

Json = dict[str, Any]
"""One JSON object of the log."""

ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
"""Store message role → inspect message role (inspect knows system, user, assistant and tool)."""

STOP_REASONS = {"stop": "stop", "length": "max_tokens", "max_tokens": "max_tokens", "tool_calls": "tool_calls",
                "function_call": "tool_calls", "content_filter": "content_filter"}
"""A call's ``finish_reason`` → inspect's ``stop_reason`` (anything else: ``unknown``)."""

GENERATE_CONFIG = {"temperature": "temperature", "max_tokens": "max_tokens", "top_p": "top_p", "stop": "stop_seqs",
                   "seed": "seed", "top_k": "top_k", "presence_penalty": "presence_penalty",
                   "frequency_penalty": "frequency_penalty"}
"""A call's allow-listed request parameter → inspect ``GenerateConfig`` field (the rest go to the
event's metadata, where nothing is dropped)."""

CALL_METADATA = ("call_id", "node", "agent", "model_alias", "purpose", "sample_index", "latency_s", "attempts",
                 "cache_hit", "status", "usage_status", "cost_source", "cost_usd", "finish_reason")
"""Columns of a call kept on its model event's metadata."""


def iso(ts: float | datetime | None) -> str | None:
    """Epoch seconds (or a naive UTC / aware datetime) → ISO 8601 with its UTC offset."""
    if ts is None:
        return None
    if isinstance(ts, datetime):
        return (ts if ts.tzinfo else ts.replace(tzinfo=timezone.utc)).isoformat()
    return datetime.fromtimestamp(float(ts), timezone.utc).isoformat()


def loads(value: Any) -> Any:
    """A JSON column's value (DuckDB hands JSON back as text); None stays None."""
    return json.loads(value) if isinstance(value, str) else value


def usage(row: Mapping[str, Any]) -> Json | None:
    """inspect's ``ModelUsage`` from a row of token classes (``call_classes`` columns, or their
    sums): ``input_tokens`` is the fresh prompt, cache reads and writes apart; ``output_tokens``
    every completion token, ``reasoning_tokens`` the reasoning among them. None: no usage recorded."""
    if row.get("prompt_tokens") is None and row.get("completion_tokens") is None:
        return None
    prompt, completion = int(row.get("prompt_tokens") or 0), int(row.get("completion_tokens") or 0)
    return {"input_tokens": int(row.get("fresh_tokens") or 0), "output_tokens": completion,
            "total_tokens": prompt + completion,
            "input_tokens_cache_read": int(row.get("cached_read_tokens") or 0),
            "input_tokens_cache_write": int(row.get("cache_write_tokens") or 0),
            "reasoning_tokens": int(row.get("reasoning_tokens") or 0),
            "total_cost": None if row.get("cost_usd") is None else float(row["cost_usd"])}


def _tool_call(tc: Mapping[str, Any]) -> Json:
    """An OpenAI-shaped tool call (as stored in a message's ``extra``) → inspect's ``ToolCall``."""
    fn = tc.get("function") or {}
    raw = fn.get("arguments", tc.get("arguments"))
    parse_error = None
    if isinstance(raw, dict):
        args = raw
    else:
        try:
            args = json.loads(raw) if raw else {}
        except ValueError as exc:
            args, parse_error = {}, f"arguments are not JSON: {exc}"
        if not isinstance(args, dict):
            args, parse_error = {}, "arguments are not a JSON object"
    out: Json = {"id": str(tc.get("id") or ""), "function": str(fn.get("name") or tc.get("name") or ""),
                 "arguments": args, "type": "function"}
    if parse_error:
        out["parse_error"] = f"{parse_error}: {raw!r}"
    return out


def message(role: str, text: str | None, extra: Any = None, *, source: str | None = None,
            model: str | None = None, metadata: Json | None = None) -> Json:
    """One stored message (role, content text, ``extra`` JSON) → an inspect ``ChatMessage``."""
    kind = ROLES.get(role, "user")
    meta = dict(metadata or {})
    if kind != role:
        meta["masbench_role"] = role
    msg: Json = {"role": kind, "content": text or ""}
    if source:
        msg["source"] = source
    extra = loads(extra) or {}
    if kind == "assistant":
        if model:
            msg["model"] = model
        if extra.get("tool_calls"):
            msg["tool_calls"] = [_tool_call(tc) for tc in extra["tool_calls"]]
    elif kind == "tool":
        if extra.get("tool_call_id"):
            msg["tool_call_id"] = str(extra["tool_call_id"])
        if extra.get("name"):
            msg["function"] = str(extra["name"])
    if meta:
        msg["metadata"] = meta
    return msg


def reply_message(call: Mapping[str, Any], reply: Mapping[str, Any] | None, *, metadata: Json | None = None) -> Json:
    """A call's stored reply as an assistant message (empty when the call has none)."""
    if reply is None:
        return message("assistant", "", source="generate", model=call["model"], metadata=metadata)
    return message("assistant", reply["text"], reply["extra"], source="generate", model=call["model"],
                   metadata=metadata)


def model_output(model: str, reply: Json, stop_reason: str, use: Json | None, *, time: float | None = None,
                 error: str | None = None) -> Json:
    """inspect's ``ModelOutput``: one choice holding ``reply``."""
    out: Json = {"model": model, "choices": [{"message": reply, "stop_reason": stop_reason}],
                 "completion": reply["content"] if isinstance(reply["content"], str) else "", "usage": use}
    if time is not None:
        out["time"] = float(time)
    if error:
        out["error"] = error
    return out


def model_event(call: Mapping[str, Any], inputs: list[Json], reply: Json, span_id: str | None, t0: float) -> Json:
    """One call → an inspect ``ModelEvent``: its agent as the model role, its request parameters as
    the generate config, its usage by token class and cost, its error and retries."""
    request = loads(call.get("request")) or {}
    config = {GENERATE_CONFIG[k]: v for k, v in request.items() if k in GENERATE_CONFIG}
    if isinstance(config.get("stop_seqs"), str):
        config["stop_seqs"] = [config["stop_seqs"]]
    start = call_start(call)
    meta = {k: call.get(k) for k in CALL_METADATA if call.get(k) is not None}
    if other := {k: v for k, v in request.items() if k not in GENERATE_CONFIG}:
        meta["request"] = other
    if errs := loads(call.get("attempt_errors")):
        meta["attempt_errors"] = errs
    ev: Json = {"event": "model", "uuid": f"call-{call['call_id']}", "span_id": span_id,
                "timestamp": iso(start), "working_start": max(0.0, (start or t0) - t0), "metadata": meta,
                "model": call["model"] or call.get("model_alias") or "unknown", "role": call.get("agent"),
                "input": inputs, "tools": [], "tool_choice": "auto" if reply.get("tool_calls") else "none",
                "config": config,
                "output": model_output(call["model"] or "unknown", reply,
                                       STOP_REASONS.get(call.get("finish_reason") or "", "unknown"), usage(call),
                                       time=call.get("latency_s"), error=call.get("error")),
                "error": call.get("error"), "retries": max(0, int(call.get("attempts") or 1) - 1),
                "completed": iso(call.get("ts")), "working_time": call.get("latency_s")}
    if call.get("cache_hit"):
        ev["cache"] = "read"
    return ev


TOOL_ERRORS = {"invalid_args": "parsing", "unknown_tool": "parsing", "not_allowed": "permission",
               "refused": "approval"}
"""A tool call's failed ``status`` → inspect's ``ToolCallError.type`` (anything else: ``unknown``)."""


def tool_event(row: Mapping[str, Any], span_id: str | None, t0: float) -> Json:
    """One ``tool_calls`` row (its observation's text as ``text``) → an inspect ``ToolEvent``: the
    tool, its arguments (a JSON object; raw text that failed its schema goes to the metadata), what
    the model was shown, its error and latency."""
    args = loads(row.get("arguments"))
    meta = {k: row.get(k) for k in ("call_id", "node", "step", "position", "status", "bytes_out", "truncated")
            if row.get(k) is not None}
    if not isinstance(args, dict):
        meta["raw_arguments"] = args
        args = {}
    if ids := loads(row.get("result_ids")):
        meta["result_ids"] = ids
    start = row.get("t_start") if row.get("t_start") is not None else row.get("ts")
    ev: Json = {"event": "tool", "uuid": f"tool-{row['call_id']}-{row['step']}-{row['position']}", "span_id": span_id,
                "timestamp": iso(start), "working_start": max(0.0, float(start or t0) - t0), "metadata": meta,
                "type": "function", "id": str(row.get("tool_call_id") or f"{row['call_id']}-{row['step']}"),
                "function": str(row.get("tool") or ""), "arguments": args, "result": row.get("text") or "",
                "completed": iso(row.get("ts")), "working_time": row.get("latency_s"),
                "failed": row.get("status") not in (None, "ok")}
    if ev["failed"]:
        ev["error"] = {"type": TOOL_ERRORS.get(str(row.get("status")), "unknown"),
                       "message": row.get("error") or str(row.get("status"))}
    return ev


def call_start(call: Mapping[str, Any]) -> float | None:
    """When a call began (older rows: its record time less its latency)."""
    if call.get("t_start") is not None:
        return float(call["t_start"])
    if call.get("ts") is not None:
        return float(call["ts"]) - float(call.get("latency_s") or 0.0)
    return None


class Spans:
    """The node rows of one cell as inspect spans under one root span (the design).

    Each node row is a span, nested in a row of the node whose dotted name prefixes its own (a
    loop's rounds, a map's branches): the one whose time holds its start, else the nearest in time.
    A parent's span is widened to hold its children (a loop's row is written as it ends). A call
    belongs to the span of its node whose time holds the call's start."""

    def __init__(self, root_id: str, root_name: str, nodes: Iterable[Mapping[str, Any]], t0: float):
        self.root_id, self.root_name, self.t0 = root_id, root_name, t0
        self.nodes = [n for n in nodes if _node_start(n) is not None]
        self.ids = [f"{root_id}-n{i}" for i in range(len(self.nodes))]
        self.times: list[tuple[float, float]] = []
        for n in self.nodes:
            a = _node_start(n)
            assert a is not None
            b = _node_end(n)
            self.times.append((a, a if b is None else max(a, b)))
        self.parent = [self._parent(i) for i in range(len(self.nodes))]
        for i in sorted(range(len(self.nodes)), key=lambda i: -str(self.nodes[i]["node"]).count(".")):
            p = self.parent[i]
            if p is not None:
                self.times[p] = (min(self.times[p][0], self.times[i][0]), max(self.times[p][1], self.times[i][1]))

    def _parent(self, i: int) -> int | None:
        """The row of the dotted-prefix node that holds row ``i``'s start, else the nearest in time."""
        name, t = str(self.nodes[i]["node"]), self.times[i][0]
        cands = [j for j, n in enumerate(self.nodes) if name.startswith(str(n["node"]) + ".")]
        if not cands:
            return None
        longest = max(len(str(self.nodes[j]["node"])) for j in cands)
        cands = [j for j in cands if len(str(self.nodes[j]["node"])) == longest]
        return min(cands, key=lambda j: 0.0 if self.times[j][0] <= t <= self.times[j][1]
                   else min(abs(self.times[j][0] - t), abs(self.times[j][1] - t)))

    def span_of(self, node: str | None, t: float | None) -> str:
        """The span a call of ``node`` starting at ``t`` belongs to (the root when the cell has no such node)."""
        rows = [i for i, n in enumerate(self.nodes) if n["node"] == node]
        if not rows:
            return self.root_id
        if t is None:
            return self.ids[rows[0]]
        return self.ids[min(rows, key=lambda i: 0.0 if self.times[i][0] - 1e-6 <= t <= self.times[i][1] + 1e-6
                            else min(abs(self.times[i][0] - t), abs(self.times[i][1] - t)))]

    def events(self, start: float, end: float) -> list[tuple[float, float, Json]]:
        """(time, order, event): the root's begin and end (widened to hold every node), and each
        node's, its metadata on its end."""
        start = min([start, *(a for a, _ in self.times)])
        end = max([end, *(b for _, b in self.times)])
        out: list[tuple[float, float, Json]] = [
            (start, 0, self._begin(self.root_id, None, self.root_name, "solver", start)),
            (end, 4, self._end(self.root_id, end, None))]
        for i, n in enumerate(self.nodes):
            a, b = self.times[i]
            p = self.parent[i]
            depth = str(n["node"]).count(".")
            meta = {k: n.get(k) for k in ("op", "agent", "model", "calls", "tokens", "cost_usd", "status", "error",
                                          "output") if n.get(k) is not None}
            parent = self.root_id if p is None else self.ids[p]
            begin = self._begin(self.ids[i], parent, str(n["node"]), str(n.get("op") or "node"), a)
            out.append((a, depth / (depth + 2), begin))
            out.append((b, 3 - 1 / (depth + 2), self._end(self.ids[i], b, meta)))  # inner spans end first
        return out

    def _begin(self, sid: str, parent: str | None, name: str, kind: str, t: float) -> Json:
        return {"event": "span_begin", "uuid": f"{sid}-begin", "span_id": sid, "timestamp": iso(t),
                "working_start": max(0.0, t - self.t0), "id": sid, "parent_id": parent, "type": kind, "name": name}

    def _end(self, sid: str, t: float, meta: Json | None) -> Json:
        ev: Json = {"event": "span_end", "uuid": f"{sid}-end", "span_id": sid, "timestamp": iso(t),
                    "working_start": max(0.0, t - self.t0), "id": sid}
        if meta:
            ev["metadata"] = meta
        return ev


def _node_start(n: Mapping[str, Any]) -> float | None:
    if n.get("t_start") is not None:
        return float(n["t_start"])
    end = _node_end(n)
    return None if end is None else end - float(n.get("latency_s") or 0.0)


def _node_end(n: Mapping[str, Any]) -> float | None:
    t = n.get("t_end") if n.get("t_end") is not None else n.get("ts")
    return None if t is None else float(t)


def ordered(events: Iterable[tuple[float, float, Json]]) -> list[Json]:
    """Events by time; at one instant span begins (outer first: a parent starts no later than its
    children), then calls, then span ends (inner first, the root's last)."""
    return [e for _, _, e in sorted(events, key=lambda x: (x[0], x[1]))]
