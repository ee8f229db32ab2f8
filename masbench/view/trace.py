"""One cell's trace, read from the store: its result, nodes, calls with their messages and routing
decisions (and the tool calls a reply asked for), the tool calls its tool-using nodes made, a timeline, and the CoT-SC pool of the same task and seed with its vote tally. Every
query reads only this cell's rows (the (run, design, task, seed) key), so a trace costs the same on
any store size."""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..store import POOL_DESIGN, Store

TOKEN_CLASSES = ("prompt_fresh_tokens", "cached_tokens", "cache_write_tokens", "completion_visible_tokens",
                 "reasoning_tokens")
"""The call's token classes, in the order the trace shows them."""

_CALL_COLUMNS = ("call_id", "node", "agent", "model_alias", "model", "sample_index", "prompt_tokens",
                 "completion_tokens", *TOKEN_CLASSES, "cost_usd", "cost_source", "latency_s", "cache_hit", "attempts",
                 "error", "attempt_errors", "status", "finish_reason", "usage_status", "t_start", "ts", "request")

_MESSAGES = """
SELECT m.call_id, m.direction, m.position, m.role, m.content_type, m.extra, t.text
FROM call_messages m LEFT JOIN texts t USING (text_hash)
WHERE m.run_id = $run AND m.purpose = $purpose AND m.design = $design AND m.task_id = $task AND m.seed = $seed
ORDER BY m.call_id, m.direction, m.position
"""


_TOOL_CALLS = """
SELECT c.node, c.step, c.position, c.tool, c.tool_call_id, c.call_id, c.arguments, c.status, c.error, c.latency_s,
       c.bytes_out, c.truncated, c.result_ids, c.t_start, t.text AS observation
FROM tool_calls c LEFT JOIN texts t USING (text_hash)
WHERE c.run_id = $run AND c.purpose = 'design' AND c.design = $design AND c.task_id = $task AND c.seed = $seed
ORDER BY c.node, c.step, c.position, c.t_start, c.ts
"""


class NotFound(LookupError):
    """A run or cell the store does not hold (the page answers 404 with this message)."""


@dataclass
class Message:
    """One message of a call: a request message or the reply."""

    role: str | None
    """system | user | assistant | tool."""
    text: str | None
    """The content (JSON text when ``content_type`` is json)."""
    content_type: str | None = "text"
    """text | json."""
    extra: dict[str, Any] | None = None
    """The message's other fields (name, tool_calls, tool_call_id)."""

    @property
    def other_extra(self) -> dict[str, Any] | None:
        """``extra`` without its ``tool_calls`` (those are shown as a list): name, tool_call_id."""
        rest = {k: v for k, v in (self.extra or {}).items() if k != "tool_calls"}
        return rest or None

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls this message (an assistant request message or the reply) asked for, as
        ``{"id", "name", "arguments"}`` (arguments as the JSON text the model wrote)."""
        out: list[dict[str, Any]] = []
        for tc in (self.extra or {}).get("tool_calls") or []:
            fn = tc.get("function") if isinstance(tc, dict) else None
            if isinstance(fn, dict):
                out.append({"id": tc.get("id"), "name": fn.get("name"), "arguments": fn.get("arguments")})
        return out


@dataclass
class Call:
    """One model call of the cell, with its transcript and routing decision."""

    row: dict[str, Any]
    """The ``calls`` row (the columns of ``_CALL_COLUMNS``)."""
    inputs: list[Message] = field(default_factory=list)
    """The request's messages, in order."""
    reply: Message | None = None
    """The reply (None: not recorded)."""
    attempt_errors: list[str] = field(default_factory=list)
    """One description per failed attempt."""
    routing: dict[str, Any] | None = None
    """The routing decision of this call (a ``routing_decisions`` row with parsed candidates), if routed."""
    start: float | None = None
    """Epoch seconds the call began (``t_start``, else ``ts − latency_s``)."""
    end: float | None = None
    """Epoch seconds it was recorded."""


@dataclass
class Bar:
    """A timeline bar: ``left``/``width`` in percent of the cell's span."""

    label: str
    """What the bar is (node or call)."""
    kind: str
    """node | call."""
    status: str | None
    """Its status (colours the bar)."""
    left: float
    """Start, percent of the span."""
    width: float
    """Length, percent of the span."""
    seconds: float
    """Duration in seconds."""


@dataclass
class Pool:
    """The CoT-SC pool of the cell's task and seed: samples (with their replies) and the vote tally."""

    samples: list[dict[str, Any]]
    """Pool rows in sample order, each with ``reply`` (the sample call's reply text, if recorded)."""
    tally: list[dict[str, Any]]
    """Answers by votes: answer, votes, correct."""


@dataclass
class TraceData:
    """Everything a trace page shows."""

    result: dict[str, Any]
    """The ``results`` row."""
    nodes: list[dict[str, Any]]
    """The ``nodes`` rows in start order."""
    calls: list[Call]
    """The calls in start order."""
    bars: list[Bar]
    """The timeline."""
    span_s: float
    """The timeline's length in seconds."""
    pool: Pool
    """The CoT-SC pool beside it."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """The cell's ``tool_calls`` rows by node, in step order (then position among a step's parallel
    calls), each with ``observation``: the text the model was shown (None: not stored)."""


def _json(v: Any) -> Any:
    if v is None or isinstance(v, (dict, list)):
        return v
    try:
        return json.loads(v)
    except (TypeError, ValueError):
        return None


def _dicts(store: Store, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    with store.lock:
        cur = store.con.execute(sql, params)
        cols = [d[0] for d in cur.description or []]
        return [dict(zip(cols, r)) for r in cur.fetchall()]


def _messages(store: Store, key: dict[str, Any]) -> dict[str, tuple[list[Message], Message | None]]:
    out: dict[str, tuple[list[Message], Message | None]] = {}
    for r in _dicts(store, _MESSAGES, key):
        inputs, reply = out.get(r["call_id"], ([], None))
        msg = Message(r["role"], r["text"], r["content_type"], _json(r["extra"]))
        if r["direction"] == "output":
            reply = reply or msg
        else:
            inputs.append(msg)
        out[r["call_id"]] = (inputs, reply)
    return out


def result_row(store: Store, run: str, design: str, task: str, seed: int) -> dict[str, Any]:
    """The cell's ``results`` row; :class:`NotFound` if the run or the cell is not in the store."""
    rows = _dicts(store, "SELECT * FROM results WHERE run_id = $run AND design = $design AND task_id = $task "
                         "AND seed = $seed ORDER BY ts DESC LIMIT 1", {"run": run, "design": design, "task": task,
                                                                        "seed": seed})
    if rows:
        return rows[0]
    if not store.sql("SELECT 1 FROM runs WHERE run_id = ?", [run]):
        raise NotFound(f"no run {run!r} in this store")
    raise NotFound(f"run {run!r} has no cell design={design!r} task={task!r} seed={seed}")


def calls(store: Store, run: str, design: str, task: str, seed: int, purpose: str = "design") -> list[Call]:
    """The cell's calls (``purpose`` design, or pool for the pool's cell) with messages and routing."""
    key = {"run": run, "purpose": purpose, "design": design, "task": task, "seed": seed}
    rows = _dicts(store, f"SELECT {', '.join(_CALL_COLUMNS)} FROM calls WHERE run_id = $run AND purpose = $purpose "
                         "AND design = $design AND task_id = $task AND seed = $seed "
                         "ORDER BY coalesce(t_start, ts - coalesce(latency_s, 0)), sample_index, call_id", key)
    msgs = _messages(store, key) if rows else {}
    decisions: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    if purpose == "design" and rows:
        for d in _dicts(store, "SELECT * FROM routing_decisions WHERE run_id = $run AND design = $design "
                               "AND task_id = $task AND seed = $seed ORDER BY ts, decision_id",
                        {k: v for k, v in key.items() if k != "purpose"}):
            d["candidates"] = _json(d["candidates"]) or []
            d["skills"] = _json(d["skills"]) or {}
            decisions.setdefault((d["node"], d["agent"]), []).append(d)
    out = []
    for r in rows:
        inputs, reply = msgs.get(r["call_id"], ([], None))
        errs = _json(r["attempt_errors"]) or []
        queue = decisions.get((r["node"], r["agent"]), [])  # the n-th call of a node/agent ↔ its n-th decision
        start = r["t_start"] if r["t_start"] is not None else (
            r["ts"] - (r["latency_s"] or 0.0) if r["ts"] is not None else None)
        out.append(Call(r, inputs, reply, [str(e) for e in errs] if isinstance(errs, list) else [str(errs)],
                        queue.pop(0) if queue else None, start, r["ts"]))
    return out


def _timeline(nodes: list[dict[str, Any]], calls_: list[Call]) -> tuple[list[Bar], float]:
    spans: list[tuple[str, str, str | None, float, float]] = []
    for n in nodes:
        end = n["t_end"] if n["t_end"] is not None else n["ts"]
        start = n["t_start"] if n["t_start"] is not None else (end - (n["latency_s"] or 0.0) if end is not None else None)
        if start is not None and end is not None:
            spans.append((str(n["node"]), "node", n["status"], float(start), float(end)))
    for c in calls_:
        if c.start is not None and c.end is not None:
            spans.append((f"{c.row['node']} · {c.row['agent'] or ''}".strip(" ·"), "call", c.row["status"],
                          float(c.start), float(c.end)))
    if not spans:
        return [], 0.0
    t0, t1 = min(s[3] for s in spans), max(s[4] for s in spans)
    span = max(t1 - t0, 1e-9)
    return [Bar(label, kind, status, 100 * (a - t0) / span, max(0.4, 100 * (b - a) / span), b - a)
            for label, kind, status, a, b in spans], t1 - t0


def tool_calls(store: Store, run: str, design: str, task: str, seed: int) -> list[dict[str, Any]]:
    """The cell's tool calls (``tool_calls`` ⋈ ``texts`` on the observation's hash), by node in
    step order; ``arguments`` and ``result_ids`` as JSON text. A store older than the table (opened
    read-only, so not migrated) has none."""
    if not _dicts(store, "SELECT 1 FROM information_schema.tables WHERE table_name = 'tool_calls'", {}):
        return []
    return _dicts(store, _TOOL_CALLS, {"run": run, "design": design, "task": task, "seed": seed})


def pool(store: Store, run: str, task: str, seed: int) -> Pool:
    """The pool of (task, seed): samples with their sample call's reply, and the vote tally (SQL)."""
    key = {"run": run, "task": task, "seed": seed, "purpose": "pool", "design": POOL_DESIGN}
    samples = _dicts(store, """
        WITH pc AS (SELECT call_id, row_number() OVER (ORDER BY sample_index, call_id) - 1 AS j FROM calls
                    WHERE run_id = $run AND purpose = $purpose AND task_id = $task AND seed = $seed),
             rep AS (SELECT m.call_id, t.text FROM call_messages m JOIN texts t USING (text_hash)
                     WHERE m.run_id = $run AND m.purpose = $purpose AND m.design = $design AND m.task_id = $task
                       AND m.seed = $seed AND m.direction = 'output' AND m.position = 0)
        SELECT p.sample_index, p.answer, p.correct, p.tokens, p.cost_usd, p.error, pc.call_id, rep.text AS reply
        FROM pool p LEFT JOIN pc ON pc.j = p.sample_index LEFT JOIN rep ON rep.call_id = pc.call_id
        WHERE p.run_id = $run AND p.task_id = $task AND p.seed = $seed ORDER BY p.sample_index""", key)
    tally = _dicts(store, """SELECT answer, count(*) AS votes, bool_or(correct) AS correct FROM pool
                             WHERE run_id = $run AND task_id = $task AND seed = $seed
                             GROUP BY answer ORDER BY votes DESC, answer NULLS LAST""",
                   {"run": run, "task": task, "seed": seed})
    return Pool(samples, tally)


class _Memo(OrderedDict[tuple[str, str, str, int], "TraceData"]):
    """The last cells :func:`trace` read, oldest first, at most ``size``."""

    def __init__(self, size: int):
        super().__init__()
        self.size = size


_MEMO: contextvars.ContextVar[_Memo | None] = contextvars.ContextVar("trace_memo", default=None)


@contextlib.contextmanager
def memo(size: int = 128) -> Iterator[None]:
    """Within the block, :func:`trace` keeps the last ``size`` cells it read (the static export
    writes a cell's trace and its side-by-side pages one after another: each is read once)."""
    token = _MEMO.set(_Memo(size))
    try:
        yield
    finally:
        _MEMO.reset(token)


def trace(store: Store, run: str, design: str, task: str, seed: int) -> TraceData:
    """The whole trace of one cell (:class:`NotFound` if the store has no such cell)."""
    cache = _MEMO.get()
    if cache is None:
        return _trace(store, run, design, task, seed)
    key = (run, design, task, seed)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = _trace(store, run, design, task, seed)
        while len(cache) > cache.size:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return hit


def _trace(store: Store, run: str, design: str, task: str, seed: int) -> TraceData:
    """:func:`trace` without the memo."""
    res = result_row(store, run, design, task, seed)
    res["detail"] = _json(res.get("detail"))
    nodes = _dicts(store, "SELECT * FROM nodes WHERE run_id = $run AND design = $design AND task_id = $task "
                          "AND seed = $seed ORDER BY coalesce(t_start, ts - coalesce(latency_s, 0)), ts",
                   {"run": run, "design": design, "task": task, "seed": seed})
    cs = calls(store, run, design, task, seed)
    bars, span = _timeline(nodes, cs)
    return TraceData(res, nodes, cs, bars, span, pool(store, run, task, seed),
                     tool_calls(store, run, design, task, seed))


__all__ = ["Bar", "Call", "Message", "NotFound", "Pool", "TOKEN_CLASSES", "TraceData", "calls", "memo", "pool", "result_row",
           "tool_calls", "trace"]
