"""The one-shot holistic designer (MAS-Orchestra style, without training): one model call writes a
whole design — agents, edges, library blocks as sub-agents — as YAML data in our schema. Each
reply is parsed safely, repaired only in recorded safe ways and validated by the runtime's
validator; anything else is rejected with the reason (the rejection rate is a metric: the
``design_validity`` view). Nothing a model writes is executed.

Two uses:
- suite level: :meth:`HolisticDesigner.generate` writes ``n`` candidate designs for a task family
  (shown a few example questions, never their answers); valid ones are stored, exported to
  ``orchestrators/generated/`` and run by the harness like any design;
- per task: :func:`run_holistic_designer` designs for one question, then runs the design (or a
  fallback block if it was rejected) under the task's budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..budget import BudgetMeter
from ..library import Library
from ..llm import Gateway, metered_call
from ..runtime import DesignResult, RunContext, run_design
from ..spec.budget import Budget
from ..store import NodeRow
from .check import DesignCheck, DesignLimits, check_text
from .common import collecting_sink, config_from_params, n_answers, result, sub_context, tighter
from .prompts import holistic_messages, sim_design_hints
from .records import DesignRecord, DesignSink, prompt_hash, prompt_text


@dataclass
class HolisticConfig:
    """Settings of the one-shot designer."""

    n: int = 3
    """Candidate designs per call of :meth:`HolisticDesigner.generate` (independent samples)."""
    model: str = "default"
    """Model alias the designer uses."""
    max_tokens: int = 700
    """Designer reply cap."""
    temperature: float = 0.8
    """Designer sampling temperature."""
    limits: DesignLimits = field(default_factory=DesignLimits)
    """What a generated design may be."""
    agents: list[str] | None = None
    """Agents offered (default: every library agent)."""
    designs: list[str] | None = None
    """Blocks offered (default: every library design that is not generated)."""
    examples: int = 2
    """Example questions shown (suite level)."""
    example_chars: int = 700
    """Each example question is cut to this many characters."""
    budget: Budget | None = None
    """Cap on the search (designer calls); per task it also caps the design's run."""
    name: str = "holistic-designer"
    """Label of the designer's calls (``calls.design``) and of per-task results."""
    fallback: str | None = "cot"
    """Per task: the library design run when the generated one is rejected (None: fail the task)."""

    @classmethod
    def from_params(cls, params: dict[str, Any] | None) -> "HolisticConfig":
        """From suite ``params`` (``budget_tokens``/``budget_usd`` become a budget; limits by name)."""
        return config_from_params(cls, params)


class HolisticDesigner:
    """Writes whole designs in one call each. Every call goes through ``gateway.complete``
    (tagged ``purpose: search``); every reply becomes a :class:`DesignRecord`."""

    def __init__(self, gateway: Gateway, library: Library, config: HolisticConfig | None = None, *,
                 tags: dict[str, Any] | None = None, design_sink: DesignSink | None = None,
                 ledger: BudgetMeter | None = None):
        self.gateway = gateway
        self.library = library
        self.config = config or HolisticConfig()
        self.tags = dict(tags or {})
        self.design_sink = design_sink
        self.ledger = ledger or BudgetMeter(self.config.budget)

    def messages(self, examples: list[str], description: str | None = None) -> list[dict[str, str]]:
        c = self.config
        return holistic_messages(self.library, examples[: max(1, c.examples)], c.limits, agents=c.agents,
                                 designs=c.designs, description=description, example_chars=c.example_chars)

    async def generate(self, examples: list[str], *, description: str | None = None, task_id: str | None = None,
                       n: int | None = None, seed: int = 0) -> list[DesignRecord]:
        """``n`` candidate designs for tasks like ``examples`` (questions only). Stops early when
        the search budget cannot fit another call."""
        c = self.config
        msgs = self.messages(examples, description)
        ptext, phash = prompt_text(msgs), prompt_hash(msgs)
        hints = sim_design_hints(self.library, "holistic", designs=c.designs)
        out: list[DesignRecord] = []
        for i in range(c.n if n is None else n):
            tags = {**self.tags, "purpose": "search", "design": self.tags.get("design", c.name),
                    "node": f"holistic[{i}]", "agent": c.name, "task_id": task_id}
            res = await metered_call(self.gateway, self.ledger, c.model, msgs, max_tokens=c.max_tokens,
                                     temperature=c.temperature, sample_index=seed * 1000 + i, tags=tags,
                                     metadata={"sim": {"mode": "design", "role": "holistic", **hints}},
                                     where=tags["node"], search=True)
            if res is None:
                break
            if res.error is not None:
                check = DesignCheck(None, f"designer call failed: {res.error}"[:500], [], [], None)
            else:
                check = check_text(res.text, self.library, c.limits, designer="holistic")
            rec = DesignRecord("holistic", res.text, check, prompt=ptext, prompt_hash=phash,
                               run_id=self.tags.get("run_id"), task_id=task_id, round=0,
                               tokens=res.prompt_tokens + res.completion_tokens, calls=1, cost_usd=res.cost_usd)
            rec.with_lineage()
            out.append(rec)
            if self.design_sink is not None:
                self.design_sink(rec.row())
        return out


async def run_holistic_designer(task: Any, ctx: RunContext, config: HolisticConfig | dict | None = None, *,
                                design_sink: DesignSink | None = None) -> DesignResult:
    """Per task: design once for this question, then run that design (or ``config.fallback`` if it
    was rejected). Total spend (designer call + run) stays within ``config.budget`` or the
    context's budget, whichever is smaller."""
    cfg = config if isinstance(config, HolisticConfig) else HolisticConfig.from_params(config)
    t0 = time.perf_counter()
    budget = tighter(cfg.budget, ctx.budget)
    ledger = BudgetMeter(budget)
    label = str(ctx.tags.get("design") or cfg.name)
    d = HolisticDesigner(ctx.gateway, ctx.library, cfg, tags={**ctx.tags, "design": label}, design_sink=design_sink,
                         ledger=ledger)
    recs = await d.generate([task.question], task_id=task.id, n=1, seed=ctx.seed)
    rec = recs[0] if recs else None
    detail: dict[str, Any] = {"holistic": {"design": rec.summary() if rec else None}}
    design: Any = rec.spec if rec is not None and rec.valid else None
    if design is None and cfg.fallback:
        design = cfg.fallback
        detail["holistic"]["fallback"] = cfg.fallback
    res = None
    rows: list[NodeRow] = []
    if design is not None:
        try:
            sub_budget = ledger.remaining()
        except ValueError:
            sub_budget = None
            ledger.refuse("run", "budget used up by the designer")
        if not ledger.exhausted:
            sub = sub_context(ctx, sub_budget, collecting_sink(ctx.node_sink, "gen/", rows))
            res = await run_design(design, task, sub)
            ledger.absorb(res)
    detail["budget"] = ledger.summary()
    detail["simulated"] = bool(res.detail.get("simulated")) if res is not None else ctx.gateway.is_simulated(cfg.model)
    if res is not None:
        for k in ("nodes", "branches", "votes", "loops", "selects", "errors"):
            if res.detail.get(k):
                detail[k] = res.detail[k]
    n = n_answers(task)
    if res is None:
        status = "budget_exhausted" if ledger.exhausted else "failed"
        why = "budget exhausted before the design could run" if ledger.exhausted else (
            f"design rejected: {rec.rejection}" if rec is not None else "no design")
        return result(text="", answers=[""] * n, status=status, ledger=ledger, wall_s=time.perf_counter() - t0,
                      error=why, detail=detail)
    status = res.status
    if ledger.exhausted and status == "ok":
        status = "budget_exhausted"
    if "fallback" in detail["holistic"] and status == "ok":
        status = "degraded"
    return result(text=res.text, answers=res.answers, status=status, ledger=ledger,
                  wall_s=time.perf_counter() - t0, error=res.error, detail=detail)


__all__ = ["HolisticConfig", "HolisticDesigner", "run_holistic_designer"]
