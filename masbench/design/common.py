"""Small pieces shared by the designers: sub-run contexts, node-row prefixes, results, budgets."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

from ..runtime import DesignResult, RunContext
from ..spec.budget import Budget
from ..store import NodeRow, Row, ToolCallRow
from .check import DesignLimits

TOO_HARD = re.compile(r"too[\s_\-]*hard", re.I)


def sim_gold(task: Any) -> list[str]:
    """The task's gold answers, for a *simulated* model's request metadata only.

    This is the one place a designer touches gold: it goes into ``metadata={"sim": {...}}`` so
    ``sim/…`` models can simulate correctness (the runtime does the same for every agent call).
    It never enters a prompt and no designer decision reads it; real providers never see metadata.
    """
    return [str(a) for a in (getattr(task, "answers", None) or [])]


def n_answers(task: Any) -> int:
    """How many answer positions the task asks for (its format, like the runtime's ``n``)."""
    return max(1, len(getattr(task, "answers", None) or []))


def collecting_sink(sink: Callable[[Row], None] | None, prefix: str,
                    rows: list[NodeRow]) -> Callable[[Row], None]:
    """A node sink that prefixes node names (``seed:cot/solve``) and keeps a copy of each node row;
    a run's other records (tool calls, their texts) pass on, a tool call's node prefixed too."""

    def add(row: Row) -> None:
        if isinstance(row, (NodeRow, ToolCallRow)):
            row = dataclasses.replace(row, node=prefix + (row.node or ""))
        if isinstance(row, NodeRow):
            rows.append(row)
        if sink is not None:
            sink(row)

    return add


def sub_context(ctx: RunContext, budget: Any, sink: Callable[[Row], None]) -> RunContext:
    return dataclasses.replace(ctx, budget=budget, node_sink=sink)


def result(*, text: str, answers: list[str], status: str, ledger: Any, wall_s: float, error: str | None,
           detail: dict[str, Any]) -> DesignResult:
    """A designer's outcome as a :class:`DesignResult` (its cost: every designer call and sub-run)."""
    return DesignResult(text=text, answers=answers, status=status, prompt_tokens=ledger.prompt,
                        completion_tokens=ledger.completion, tokens=ledger.tokens, cost_usd=ledger.usd,
                        calls=ledger.calls, wall_s=wall_s, error=error, detail=detail)


def tag(ctx: RunContext, label: str, node: str, task_id: str | None) -> dict[str, Any]:
    """Call tags for a designer call: the run's tags with ``purpose: search``."""
    t = dict(ctx.tags)
    t.update({"purpose": "search", "node": node, "agent": label})
    t.setdefault("design", label)
    if task_id is not None:
        t["task_id"] = task_id
    return t


def config_from_params(cls: type, params: dict[str, Any] | None) -> Any:
    """Build a designer config (a dataclass with ``limits`` and ``budget`` fields) from suite
    ``params``: ``budget_tokens`` / ``budget_usd`` / ``budget_calls`` or a ``budget`` mapping become
    a :class:`~masbench.spec.Budget`; check limits may be given by name or as a ``limits`` mapping."""
    p = dict(params or {})
    b: dict[str, Any] = {}
    for key, field_name, conv in (("budget_tokens", "per_task_tokens", int), ("budget_usd", "per_task_usd", float),
                                  ("budget_calls", "per_task_calls", int)):
        if key in p:
            b[field_name] = conv(p.pop(key))
    if isinstance(p.get("budget"), dict):
        b.update(p.pop("budget"))
    fields = {f.name for f in dataclasses.fields(cls)}
    lim = {k: p.pop(k) for k in list(p) if k in DesignLimits.__dataclass_fields__ and k not in fields}
    if isinstance(p.get("limits"), dict):
        lim.update(p.pop("limits"))
    cfg = cls(**p)
    if lim:
        cfg.limits = DesignLimits(**{**cfg.limits.__dict__, **lim})
    if b:
        cfg.budget = Budget(**b)
    return cfg


def tighter(a: Budget | None, b: Budget | None) -> Budget | None:
    """The smaller of two budgets, cap by cap (None: no cap)."""
    if a is None:
        return b
    if b is None:
        return a

    def lo(x, y):
        return y if x is None else x if y is None else min(x, y)

    return Budget(per_task_tokens=lo(a.per_task_tokens, b.per_task_tokens),
                  per_task_usd=lo(a.per_task_usd, b.per_task_usd),
                  per_task_calls=lo(a.per_task_calls, b.per_task_calls), match=a.match)


def short(s: str, n: int = 80) -> str:
    """``s`` on one line, cut to ``n`` characters."""
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"
