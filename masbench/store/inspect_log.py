"""``masbench export --format inspect``: a run as inspect_ai eval logs, one per design and one for
the CoT-SC pool, readable by inspect's own tools (``read_eval_log``, ``inspect view``, ``evals_df``).

One log per run × design (a results ``design`` label): the suite and design are the task and its
cells the dataset, the design the solver and its nodes the plan, its agents the model roles (usage
and cost per role), one sample per cell (input, target, messages, output, score, tokens by class),
each call a model event carrying its agent as role, each tool call a tool event, each node a span,
a failed cell a sample error, and the paired tests and verdicts in the eval's metadata. The CoT-SC
pool is one more log whose samples are the pool's draws as epochs (the curve in its metadata).

The log format (version 2, JSON) is the contract: the logs are built from plain JSON values, so
exporting needs no inspect_ai, and the tests read every exported log back with inspect's reader.
Content is exported as stored; sums (role, model and sample usage, the metrics) come from SQL.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .cells import POOL_DESIGN
from .db import Store
from .inspect_events import Json, Spans, call_start, iso, loads, message, model_event, model_output, ordered, \
    reply_message, tool_event, usage

NO_AGENT = "(no agent)"
"""The role of a call without an agent (a program design's unattributed call)."""

POOL_LABEL = "cot-sc-pool"
"""The solver name (and file name part) of the CoT-SC pool's log."""

_DESIGN_J = "0"
_POOL_J = "row_number() OVER (PARTITION BY task_id, seed ORDER BY sample_index, call_id) - 1"
"""A call's sample within its cell: a design cell is one sample; a pool cell's j-th call (by sample
index) is its sample j — the rule the trace viewer's pool uses (one call per pool sample)."""

_RANKED = """WITH ranked AS (SELECT call_id, {j} AS j FROM calls
                             WHERE run_id = $run AND purpose = $purpose AND design = $design),
cc AS (SELECT k.*, ranked.j FROM call_classes k JOIN ranked USING (call_id)
       WHERE k.run_id = $run AND k.purpose = $purpose AND k.design = $design)
"""

_SUMS = """CAST(sum(prompt_tokens) AS BIGINT) AS prompt_tokens,
       CAST(sum(completion_tokens) AS BIGINT) AS completion_tokens,
       CAST(sum(fresh_tokens) AS BIGINT) AS fresh_tokens, CAST(sum(cached_read_tokens) AS BIGINT) AS cached_read_tokens,
       CAST(sum(cache_write_tokens) AS BIGINT) AS cache_write_tokens,
       CAST(sum(visible_tokens) AS BIGINT) AS visible_tokens, CAST(sum(reasoning_tokens) AS BIGINT) AS reasoning_tokens,
       sum(cost_usd) AS cost_usd, count(*) AS calls"""

_CALLS = """WITH ranked AS (SELECT call_id, {j} AS j FROM calls
                             WHERE run_id = $run AND purpose = $purpose AND design = $design)
SELECT c.* EXCLUDE (cache_write_tokens, reasoning_tokens), k.fresh_tokens, k.cached_read_tokens, k.cache_write_tokens,
       k.reasoning_tokens, ranked.j
FROM calls c JOIN ranked USING (call_id) JOIN call_classes k ON k.run_id = c.run_id AND k.call_id = c.call_id
WHERE c.run_id = $run AND c.purpose = $purpose AND c.design = $design
ORDER BY c.task_id, c.seed, ranked.j, coalesce(c.t_start, c.ts - coalesce(c.latency_s, 0)), c.call_id"""

_MESSAGES = """SELECT m.call_id, m.direction, m.position, m.role, t.text, m.content_type, m.extra
FROM call_messages m JOIN texts t USING (text_hash)
WHERE m.run_id = $run AND m.purpose = $purpose AND m.design = $design ORDER BY m.call_id, m.direction, m.position"""

_TOOLS = """SELECT k.*, t.text FROM tool_calls k LEFT JOIN texts t USING (text_hash)
WHERE k.run_id = $run AND k.purpose = $purpose AND k.design = $design
ORDER BY k.task_id, k.seed, k.step, k.position, k.t_start"""

_RESULTS = """SELECT task_id, seed, 0 AS j, answer, gold, correct, partial, prompt_tokens, completion_tokens, tokens,
       cost_usd, calls, wall_s, status, error, detail, ts, source, axis, axis_value, design_name, budget_spent
FROM results WHERE run_id = $run AND design = $design ORDER BY task_id, seed"""

_POOL = """SELECT p.task_id, p.seed, p.sample_index AS j, p.answer,
       (SELECT any_value(r.gold) FROM results r WHERE r.run_id = p.run_id AND r.task_id = p.task_id
                                                 AND r.seed = p.seed) AS gold,
       p.correct, NULL AS partial, p.prompt_tokens, p.completion_tokens, p.tokens, p.cost_usd, NULL AS calls,
       NULL AS wall_s, CASE WHEN p.error IS NULL THEN 'ok' ELSE 'failed' END AS status, p.error, NULL AS detail,
       p.ts, p.budget_spent
FROM pool p WHERE p.run_id = $run ORDER BY p.task_id, p.seed, p.sample_index"""


def rows(store: Store, sql: str, params: Mapping[str, Any]) -> list[Json]:
    """Query → list of {column: value} (of ``params``, the ones ``sql`` names as ``$name``)."""
    used = {k: v for k, v in params.items() if re.search(rf"\${k}\b", sql)}
    with store.lock:
        cur = store.con.execute(sql, used)
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]


def _clean(value: Any) -> Any:
    """A JSON-safe copy: NaN and infinities become null (browsers' JSON.parse rejects them)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]+", "-", text).strip("-") or "x"


class _Source:
    """Which rows one log holds: a design label's (``purpose`` design) or the pool's."""

    def __init__(self, run: str, purpose: str, design: str, label: str):
        self.run, self.purpose, self.design, self.label = run, purpose, design, label
        self.params = {"run": run, "purpose": purpose, "design": design}
        self.j = _POOL_J if purpose == "pool" else _DESIGN_J

    @property
    def is_pool(self) -> bool:
        return self.purpose == "pool"

    def usage_by(self, store: Store, cols: str) -> list[Json]:
        """Token classes and cost summed over this log's calls, grouped by ``cols`` (SQL)."""
        return rows(store, _RANKED.format(j=self.j) + f"SELECT {cols}, {_SUMS} FROM cc GROUP BY ALL ORDER BY ALL",
                    self.params)


def _usages(store: Store, src: _Source, key: str, cell: bool) -> dict[Any, dict[str, Json]]:
    """``{cell or None: {role or model: ModelUsage}}``."""
    col = f"coalesce({key}, '{NO_AGENT}')" if key == "agent" else f"coalesce({key}, 'unknown')"
    out: dict[Any, dict[str, Json]] = defaultdict(dict)
    for r in src.usage_by(store, ("task_id, seed, j, " if cell else "") + f"{col} AS name"):
        u = usage(r)
        if u is not None:
            out[(r["task_id"], r["seed"], r["j"]) if cell else None][r["name"]] = u
    return out


def _messages(store: Store, src: _Source) -> dict[str, tuple[list[Json], Json | None]]:
    """call_id → (input messages as inspect messages, the stored reply row)."""
    out: dict[str, tuple[list[Json], Json | None]] = {}
    for m in rows(store, _MESSAGES, src.params):
        inputs, reply = out.get(m["call_id"], ([], None))
        if m["direction"] == "input":
            inputs.append(message(m["role"], m["text"], m["extra"], source="input"))
        else:
            reply = m
        out[m["call_id"]] = (inputs, reply)
    return out


def _sample(src: _Source, r: Json, calls: list[Json], nodes: list[Json],
            msgs: dict[str, tuple[list[Json], Json | None]], tools: list[Json],
            cell_usage: Json | None, roles: dict[str, Json], models: dict[str, Json], one_seed: bool) -> Json:
    """One cell (or one pool draw) → an inspect ``EvalSample``."""
    end = float(r["ts"]) if r.get("ts") is not None else None
    starts = [s for s in (call_start(c) for c in calls) if s is not None]
    start = (end - float(r["wall_s"])) if end is not None and r.get("wall_s") is not None else (
        min(starts) if starts else end)
    t0 = start if start is not None else 0.0
    ends = [float(c["ts"]) for c in calls if c.get("ts") is not None] + ([end] if end is not None else [])
    t1: float = max([t0, *ends])
    sid = f"{r['task_id']}" if one_seed else f"{r['task_id']}@seed{r['seed']}"
    root = f"{_slug(src.label)}-{_slug(sid)}-e{int(r['j']) + 1}"
    if src.is_pool:  # the pool's node rows do not say which draw they belong to: its calls' nodes do
        nodes = [{"node": c["node"], "op": "agent", "agent": c["agent"], "model": c["model"], "t_start": call_start(c),
                  "t_end": c["ts"], "status": c["status"], "error": c["error"]} for c in calls]
    spans = Spans(root, src.label if not src.is_pool else f"{POOL_LABEL} draw {int(r['j']) + 1}", nodes, t0)
    events = spans.events(t0, t1)
    conversation: list[Json] = []
    for c in calls:
        inputs, reply_row = msgs.get(c["call_id"], ([], None))
        reply = reply_message(c, reply_row, metadata={"agent": c["agent"], "node": c["node"], "call_id": c["call_id"]})
        if not conversation:
            conversation.extend(inputs)
        conversation.append(reply)
        events.append((call_start(c) or t0, 1, model_event(c, inputs, reply_message(c, reply_row),
                                                           spans.span_of(c["node"], call_start(c)), t0)))
    for k in tools:
        t = k["t_start"] if k.get("t_start") is not None else k.get("ts")
        events.append((float(t) if t is not None else t0, 1, tool_event(k, spans.span_of(k["node"], t), t0)))
    first_input = msgs.get(calls[0]["call_id"], ([], None))[0] if calls else []
    answer = r["answer"] or ""
    correct = bool(r["correct"])
    meta = {k: r.get(k) for k in ("task_id", "seed", "source", "axis", "axis_value", "status", "error", "answer",
                                  "gold", "partial", "calls", "budget_spent") if r.get(k) is not None}
    meta["design"] = src.label
    if cell_usage is not None:
        meta["tokens"] = {k: cell_usage[k] for k in ("prompt_tokens", "completion_tokens", "fresh_tokens",
                                                      "cached_read_tokens", "cache_write_tokens", "visible_tokens",
                                                      "reasoning_tokens")}
        meta["cost_usd"] = cell_usage["cost_usd"]
    if detail := loads(r.get("detail")):
        meta["detail"] = detail
    model = calls[-1]["model"] if calls else "none"
    out_msg = {"role": "assistant", "content": answer, "source": "generate"}
    sample: Json = {
        "id": sid, "epoch": int(r["j"]) + 1, "input": first_input or "", "target": r.get("gold") or "",
        "messages": conversation, "output": model_output(model, out_msg, "stop", usage(cell_usage or {})),
        "scores": {"correct": {"value": "C" if correct else "I", "answer": answer,
                               "explanation": f"gold: {r.get('gold')}" if r.get("gold") is not None else None,
                               "metadata": {k: r[k] for k in ("partial", "status") if r.get(k) is not None}}},
        "metadata": meta, "events": ordered(events), "model_usage": models, "role_usage": roles,
        "started_at": iso(start), "completed_at": iso(end), "total_time": r.get("wall_s"),
        "working_time": r.get("wall_s"), "uuid": root}
    if r["status"] == "failed":
        sample["error"] = {"message": r.get("error") or "failed", "traceback": "", "traceback_ansi": ""}
    return sample


def _design_entry(config: Json, label: str) -> tuple[str | None, Json]:
    """The suite's entry for a design label: (design name, params)."""
    for d in config.get("designs") or []:
        if isinstance(d, str) and d == label:
            return d, {}
        if isinstance(d, dict) and (d.get("label") or d.get("design")) == label:
            return d.get("design"), d.get("params") or {}
    return None, {}


class RunViews:
    """The run-wide rows the logs' metrics and metadata come from, read once per run (the
    comparison view is the dearest query of an export)."""

    def __init__(self, store: Store, run_id: str):
        p = {"run": run_id}
        self.comparison = rows(store, "SELECT * EXCLUDE (run_id) FROM design_comparison WHERE run_id = $run "
                                      "ORDER BY design, axis, axis_value", p)
        self.paired = rows(store, "SELECT * EXCLUDE (run_id) FROM paired_tests WHERE run_id = $run "
                                  "ORDER BY design, axis, axis_value, against, unit", p)
        self.curve = rows(store, "SELECT * EXCLUDE (run_id) FROM cot_sc_curve WHERE run_id = $run "
                                 "ORDER BY axis, axis_value, k", p)

    def metrics(self, src: _Source) -> tuple[dict[str, Json], Json]:
        """The log's metrics (the store's views' figures) and the metadata that explains them: the
        pool's CoT-SC curve (maj@k); a design's comparison rows, paired tests and verdicts."""
        if src.is_pool:
            overall = {int(c["k"]): c for c in self.curve if c["axis"] == "all"}
            metrics = {f"maj@{k}": {"name": f"maj@{k}", "value": c["accuracy"], "params": {}}
                       for k, c in sorted(overall.items()) if c["accuracy"] is not None}
            return metrics, {"cot_sc_curve": self.curve}
        comp = [c for c in self.comparison if c["design"] == src.label]
        tests = [t for t in self.paired if t["design"] == src.label]
        overall = next((c for c in comp if c["axis"] == "all"), {})
        metrics = {k: {"name": k, "value": overall[k], "params": {}}
                   for k in ("accuracy", "ci_lo", "ci_hi", "tokens", "cost_usd", "iso_gap_budget")
                   if overall.get(k) is not None}
        verdicts = [t for t in tests if t.get("is_verdict")]
        return metrics, {"comparison": comp, "paired_tests": tests, "verdicts": verdicts}


def build_log(store: Store, run: Json, src: _Source, views: RunViews) -> Json:
    """One inspect ``EvalLog`` (a JSON object) of ``src``'s rows of ``run`` (a ``runs`` row)."""
    config = loads(run["config"]) or {}
    suite = run["suite"] or config.get("name") or "suite"
    samples_rows = rows(store, _POOL if src.is_pool else _RESULTS, src.params)
    calls_by_cell: dict[tuple, list[Json]] = defaultdict(list)
    for c in rows(store, _CALLS.format(j=src.j), src.params):
        calls_by_cell[(c["task_id"], c["seed"], c["j"])].append(c)
    nodes_by_cell: dict[tuple, list[Json]] = defaultdict(list)
    if not src.is_pool:
        for n in rows(store, "SELECT * FROM nodes WHERE run_id = $run AND design = $design "
                             "ORDER BY coalesce(t_start, ts - coalesce(latency_s, 0)), ts", src.params):
            nodes_by_cell[(n["task_id"], n["seed"], 0)].append(n)
    msgs = _messages(store, src)
    tools_by_cell: dict[tuple, list[Json]] = defaultdict(list)
    if not src.is_pool and store.sql("SELECT 1 FROM information_schema.tables WHERE table_name = 'tool_calls'"):
        for k in rows(store, _TOOLS, src.params):
            tools_by_cell[(k["task_id"], k["seed"], 0)].append(k)
    cell_totals = {(u["task_id"], u["seed"], u["j"]): u for u in src.usage_by(store, "task_id, seed, j")}
    cell_roles, cell_models = _usages(store, src, "agent", True), _usages(store, src, "model", True)
    one_seed = len({r["seed"] for r in samples_rows}) <= 1
    samples = []
    for r in samples_rows:
        key = (r["task_id"], r["seed"], r["j"])
        samples.append(_sample(src, r, calls_by_cell.get(key, []), nodes_by_cell.get(key, []), msgs,
                               tools_by_cell.get(key, []), cell_totals.get(key), cell_roles.get(key, {}),
                               cell_models.get(key, {}), one_seed))
    role_models: dict[str, list[str]] = defaultdict(list)
    for a in src.usage_by(store, f"coalesce(agent, '{NO_AGENT}') AS agent, coalesce(model, 'unknown') AS model"):
        role_models[a["agent"]].append(a["model"])
    model_calls = src.usage_by(store, "coalesce(model, 'unknown') AS model")
    main_model = max(model_calls, key=lambda m: m["calls"])["model"] if model_calls else (
        next(iter((loads(run["models"]) or {}).values()), None) or "none")
    metrics, extra = views.metrics(src)
    design_name, params = (None, {}) if src.is_pool else _design_entry(config, src.label)
    if not src.is_pool and samples_rows:
        design_name = design_name or samples_rows[0].get("design_name")
    plan = [] if src.is_pool else rows(store, """SELECT node, any_value(op) AS op, any_value(agent) AS agent
        FROM nodes WHERE run_id = $run AND design = $design GROUP BY node
        ORDER BY min(coalesce(t_start, ts)), node""", src.params)
    budget = config.get("budget") or {}
    k_max = (config.get("cot_sc") or {}).get("k_max")
    eval_id = hashlib.blake2b(f"{src.run}\0{src.label}".encode(), digest_size=11).hexdigest()
    status = {"finished": "success", "interrupted": "cancelled", "failed": "error"}.get(run["status"], "started")
    done = sum(1 for s in samples if "error" not in s)
    log: Json = {
        "version": 2, "status": status,
        "eval": {
            "eval_id": eval_id, "run_id": src.run, "created": iso(run["created_at"]),
            "task": f"{suite}/{src.label}",  # the design in the name: inspect's log list shows only the task
            "task_id": f"{_slug(suite)}-{_slug(src.label)}", "task_version": 0,
            "task_display_name": f"{suite} · {src.label}",
            "task_args": {"design": src.label},  # what inspect's log list shows beside the task name
            "task_args_passed": {"design": src.label},
            "task_description": config.get("description"),
            "solver": POOL_LABEL if src.is_pool else (design_name or src.label),
            "solver_args": {"agent": (config.get("cot_sc") or {}).get("agent"), "k_max": k_max} if src.is_pool
            else params,
            "tags": ["masbench"] + (["simulated"] if run.get("simulated") else []),
            "dataset": {"name": suite, "samples": len({(r["task_id"], r["seed"]) for r in samples_rows}),
                        "sample_ids": list(dict.fromkeys(s["id"] for s in samples)), "shuffled": False},
            "model": main_model,
            "model_roles": {a: ({"model": ms[0]} if len(ms) == 1 else [{"model": m} for m in ms])
                            for a, ms in role_models.items()},
            "config": {"epochs": int(k_max) if src.is_pool and k_max else 1,
                       **({"token_limit": int(budget["per_task_tokens"])} if budget.get("per_task_tokens") else {})},
            "packages": {"masbench": run.get("masbench_version") or "unknown"},
            "metadata": {"masbench": {"run_id": src.run, "design": src.label, "design_name": design_name,
                                      "purpose": src.purpose, "simulated": bool(run.get("simulated")),
                                      "run_status": run["status"], "models": loads(run["models"])}, **extra},
        },
        "plan": {"name": src.label, "steps": [{"solver": p["node"], "params": {"op": p["op"], "agent": p["agent"]}}
                                              for p in plan] or [{"solver": POOL_LABEL if src.is_pool else src.label,
                                                                  "params": {}}],
                 "config": {}},
        "results": {"total_samples": len(samples), "completed_samples": done,
                    "scores": [{"name": "correct", "scorer": "masbench", "reducer": "mean" if src.is_pool else None,
                                "scored_samples": len(samples), "unscored_samples": 0, "params": {},
                                "metrics": metrics}]},
        "stats": {"started_at": iso(run["created_at"]) or "", "completed_at": iso(run.get("finished_at")) or "",
                  "model_usage": _usages(store, src, "model", False).get(None, {}),
                  "role_usage": _usages(store, src, "agent", False).get(None, {})},
        "samples": samples,  # (the log's own tags and metadata are the eval's: inspect derives them on reading)
    }
    if status == "error":
        log["error"] = {"message": run.get("reason") or "the run failed", "traceback": "", "traceback_ansi": ""}
    return _clean(log)


def _sources(store: Store, run_id: str) -> list[_Source]:
    """The logs of a run: one per design label with results, then the pool's (if it has draws)."""
    labels = [r[0] for r in store.sql("SELECT design FROM results WHERE run_id = ? GROUP BY design "
                                      "ORDER BY min(ts), design", [run_id])]
    out = [_Source(run_id, "design", d, d) for d in labels]
    if store.sql("SELECT 1 FROM pool WHERE run_id = ? LIMIT 1", [run_id]):
        out.append(_Source(run_id, "pool", POOL_DESIGN, POOL_LABEL))
    return out


def inspect_logs(store: Store, run_id: str | None = None) -> list[tuple[str, Json]]:
    """(file name, inspect eval log) for every design and the pool of one run (or of every run)."""
    runs = rows(store, "SELECT * FROM runs WHERE ($run IS NULL OR run_id = $run) ORDER BY created_at, run_id",
                {"run": run_id})
    if run_id is not None and not runs:
        raise KeyError(f"no run {run_id!r} in this store")
    out = []
    for run in runs:
        stamp = iso(run["created_at"]) or "1970-01-01T00:00:00+00:00"
        prefix = re.sub(r"[:]", "-", stamp.split(".")[0].replace("+00:00", "")) + "+00-00"
        views = RunViews(store, run["run_id"])
        for src in _sources(store, run["run_id"]):
            log = build_log(store, run, src, views)
            out.append((f"{prefix}_{_slug(log['eval']['task'])}_{log['eval']['eval_id']}.json", log))
    return out


def export_inspect(store: Store, out_dir: str | Path, run_id: str | None = None) -> list[Path]:
    """Write one inspect eval log (JSON) per run × design and per run's CoT-SC pool into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, log in inspect_logs(store, run_id):
        path = out / name
        path.write_text(json.dumps(log, ensure_ascii=False, allow_nan=False, default=str), encoding="utf-8")
        written.append(path)
    return written
