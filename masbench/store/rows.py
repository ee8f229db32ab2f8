"""One record type per table the run writes row by row: what a row of ``calls``, ``nodes``,
``results``, ``pool``, ``routing_decisions``, ``designs`` … holds, checked where it is built; and of the
derived tables the verdicts come from (``cot_sc_curve``, ``cot_sc_task_curve``, ``paired_tests``,
``sequential_looks``).

The store sits low in the layer map (just above ``spec``) so that ``llm/`` (call rows),
``runtime/`` (node rows), ``routing/`` (decisions), ``design/`` (generated designs) and
``harness/`` (results, pool samples) all build these records instead of dicts: a misspelt
column is a ``TypeError`` where the row is made, not a ``KeyError`` at the next flush in
another task. ``tests/store/test_rows.py`` checks every record against the migrated schema
(same columns, nothing missing), so a migration that adds a column fails there until the
record has it.

A record is a slotted keyword-only dataclass (:class:`~.row_base.Row`); the derived tables'
records are in :mod:`.derived_rows`, and :data:`ROWS` maps every table to its record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .derived_rows import CurveRow, PairedTestRow, SequentialLookRow, TaskCurveRow
from .row_base import Row


@dataclass(kw_only=True, slots=True)
class CallRow(Row):
    """One logical model call (after retries). Token columns are NULL when usage is missing."""

    TABLE: ClassVar[str] = "calls"
    call_id: str
    run_id: str | None = None
    purpose: str | None = None
    """design | pool | search | routing | smoke | scoring (a judge scorer's call: never a design's cost)"""
    design: str | None = None
    task_id: str | None = None
    seed: int | None = None
    node: str | None = None
    agent: str | None = None
    model_alias: str | None = None
    model: str | None = None
    sample_index: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    cache_hit: bool | None = None
    attempts: int | None = None
    error: str | None = None
    attempt_errors: str | None = None
    """JSON list: one description per failed attempt."""
    simulated: bool | None = None
    finish_reason: str | None = None
    ts: float | None = None
    prompt_fresh_tokens: int | None = None
    cache_write_tokens: int | None = None
    completion_visible_tokens: int | None = None
    reasoning_tokens: int | None = None
    usage_status: str | None = None
    """reported | estimated | missing"""
    usage_raw: str | None = None
    """The usage object as received (JSON text)."""
    cost_source: str | None = None
    status: str | None = None
    """ok | error | usage_missing | truncated | empty"""
    t_start: float | None = None
    """Epoch seconds the call began (``ts`` is when it was recorded)."""
    request: str | None = None
    """JSON text: the allow-listed request parameters (temperature, max_tokens, …); never keys."""


@dataclass(kw_only=True, slots=True)
class NodeRow(Row):
    """One node (or loop round / branch) of one design run on one task."""

    TABLE: ClassVar[str] = "nodes"
    run_id: str | None = None
    design: str | None = None
    task_id: str | None = None
    seed: int | None = None
    node: str | None = None
    op: str | None = None
    agent: str | None = None
    model: str | None = None
    calls: int | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    status: str | None = None
    error: str | None = None
    output: str | None = None
    ts: float | None = None
    t_start: float | None = None
    """Epoch seconds the node began (its timeline)."""
    t_end: float | None = None
    """Epoch seconds the node ended."""


@dataclass(kw_only=True, slots=True)
class ResultRow(Row):
    """One design cell's outcome: (design, task, seed) scored, with its cost."""

    TABLE: ClassVar[str] = "results"
    run_id: str
    design: str
    task_id: str
    seed: int
    source: str | None = None
    axis: str | None = None
    axis_value: int | None = None
    answer: str | None = None
    gold: str | None = None
    correct: bool | None = None
    partial: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    calls: int | None = None
    wall_s: float | None = None
    status: str | None = None
    """ok | degraded | budget_exhausted | failed"""
    error: str | None = None
    detail: str | None = None
    """JSON text."""
    simulated: bool | None = None
    ts: float | None = None
    design_name: str | None = None
    budget_basis: str | None = None
    budget_spent: float | None = None
    evidence: str | None = None
    """JSON list: the task's gold evidence ids (``TaskInstance.meta["evidence"]``), when it has them."""
    judge: str | None = None
    """The judge agent whose verdict set ``correct`` (None: a rule scorer)."""
    judge_model: str | None = None
    """The model id the judge ran on."""
    judge_samples: int | None = None
    """Judge samples of this reply (k)."""
    judge_passes: int | None = None
    """Samples that passed."""
    judge_value: float | None = None
    """The aggregate: share passing (majority) or mean score (mean)."""
    rule_correct: bool | None = None
    """The rule-checked verdict where the task also has a gold (None: none, or not judged)."""


@dataclass(kw_only=True, slots=True)
class PoolRow(Row):
    """One CoT-SC pool sample of one (task, seed) cell."""

    TABLE: ClassVar[str] = "pool"
    run_id: str
    task_id: str
    seed: int
    sample_index: int
    answer: str | None = None
    correct: bool | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    error: str | None = None
    ts: float | None = None
    budget_spent: float | None = None
    judge: str | None = None
    """The judge agent whose verdict set ``correct`` (None: a rule scorer)."""
    judge_model: str | None = None
    """The model id the judge ran on."""
    judge_samples: int | None = None
    """Judge samples of this reply (k)."""
    judge_passes: int | None = None
    """Samples that passed."""
    judge_value: float | None = None
    """The aggregate: share passing (majority) or mean score (mean)."""
    rule_correct: bool | None = None
    """The rule-checked verdict where the task also has a gold (None: none, or not judged)."""


@dataclass(kw_only=True, slots=True)
class RoutingDecisionRow(Row):
    """One routed call: the candidates a router weighed and the model it chose."""

    TABLE: ClassVar[str] = "routing_decisions"
    decision_id: str
    run_id: str | None = None
    design: str | None = None
    task_id: str | None = None
    seed: int | None = None
    node: str | None = None
    agent: str | None = None
    handbook: str | None = None
    strategy: str | None = None
    lambda_: float | None = None
    skills: str | None = None
    """JSON text: inferred skill demand."""
    candidates: str | None = None
    """JSON text: [{model, utility, p_mean, p_lo, cost}]."""
    chosen: str | None = None
    outcome: bool | None = None
    ts: float | None = None


@dataclass(kw_only=True, slots=True)
class DesignRow(Row):
    """One generated (or manual) design, valid or rejected, with what generating it cost."""

    TABLE: ClassVar[str] = "designs"
    design_id: str
    run_id: str | None = None
    name: str | None = None
    designer: str | None = None
    task_id: str | None = None
    parent: str | None = None
    round: int | None = None
    prompt_hash: str | None = None
    prompt: str | None = None
    raw_output: str | None = None
    spec: str | None = None
    """JSON text: the validated design, if any."""
    valid: bool | None = None
    rejection: str | None = None
    repairs: str | None = None
    """JSON text."""
    tokens: int | None = None
    calls: int | None = None
    cost_usd: float | None = None
    ts: float | None = None


@dataclass(kw_only=True, slots=True)
class TextRow(Row):
    """One distinct text (a message's content, a reply), stored once: ``text_hash`` is
    :func:`~masbench.store.texts.text_hash` of ``text``."""

    TABLE: ClassVar[str] = "texts"
    text_hash: str
    text: str
    chars: int | None = None


@dataclass(kw_only=True, slots=True)
class MessageRow(Row):
    """One message of one call's transcript: a request message (``direction`` input, in order) or
    the reply (output). Its content is the :class:`TextRow` named by ``text_hash``."""

    TABLE: ClassVar[str] = "call_messages"
    call_id: str
    direction: str
    """input | output"""
    position: int
    """Order within the direction (the request's messages 0..n-1; the reply 0)."""
    text_hash: str
    run_id: str | None = None
    purpose: str | None = None
    design: str | None = None
    task_id: str | None = None
    seed: int | None = None
    role: str | None = None
    """system | user | assistant | tool"""
    content_type: str = "text"
    """text | json (content that was not a string, stored as JSON text)"""
    extra: str | None = None
    """JSON text: the message's other fields (name, tool_calls, tool_call_id)."""


@dataclass(kw_only=True, slots=True)
class ToolCallRow(Row):
    """One tool call a tool-using node made (a ReAct step's action): the tool, its arguments, what
    the model was shown back (the :class:`TextRow` named by ``text_hash``) and its cost in time."""

    TABLE: ClassVar[str] = "tool_calls"
    tool: str
    """The tool's registered name (as the model wrote it, when no such tool is allowed)."""
    status: str
    """ok | invalid_args | unknown_tool | not_allowed | error | refused"""
    run_id: str | None = None
    call_id: str | None = None
    """The model call whose reply asked for this tool call (``calls.call_id``)."""
    tool_call_id: str | None = None
    """The provider's id of the tool call, or one of ours (text protocol)."""
    purpose: str | None = None
    design: str | None = None
    task_id: str | None = None
    seed: int | None = None
    node: str | None = None
    step: int | None = None
    """The ReAct step (0-based) that made it."""
    position: int | None = None
    """Order among the tool calls of one step."""
    arguments: str | None = None
    """JSON text: the arguments object, or a JSON string holding the raw text that did not parse."""
    error: str | None = None
    latency_s: float | None = None
    bytes_out: int | None = None
    """UTF-8 bytes of the full result, before the size cap."""
    truncated: bool | None = None
    text_hash: str | None = None
    """The observation the model was shown (``texts.text_hash``)."""
    result_ids: str | None = None
    """JSON list: ids the result names (documents a search returned or a read opened)."""
    t_start: float | None = None
    ts: float | None = None


ROWS: dict[str, type[Row]] = {r.TABLE: r for r in (CallRow, NodeRow, ResultRow, PoolRow, RoutingDecisionRow,
                                                    DesignRow, TextRow, MessageRow, ToolCallRow, CurveRow,
                                                    TaskCurveRow, PairedTestRow, SequentialLookRow)}
"""Table name → its record type."""

__all__ = ["ROWS", "CallRow", "CurveRow", "DesignRow", "MessageRow", "NodeRow", "PairedTestRow", "PoolRow", "ResultRow",
           "RoutingDecisionRow", "Row", "SequentialLookRow", "TaskCurveRow", "TextRow", "ToolCallRow"]
