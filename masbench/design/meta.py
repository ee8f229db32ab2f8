"""The meta-designer (MAS-Zero style), per task, at inference time.

1. Seed blocks run on the task (default: CoT, CoT-SC, Reflexion, Debate); their answers are the
   first candidates.
2. Up to ``max_rounds`` rounds: the meta-agent (one model call) decomposes the problem into at most
   ``max_subtasks`` sub-tasks and assigns a library block to each. The decomposition becomes a
   *design* (data: one ``design:`` node per sub-task, an aggregator when there are several),
   checked by the same validator as every generated design, stored with its lineage, and run.
   Feedback, with no gold answer:
   - *solvability*: a sub-agent may answer ``TOO_HARD`` (it is told how), or give no answer —
     the next round is asked to split that sub-task further;
   - *completeness*: numbers of the problem that no sub-task carries (information dropped between
     sub-tasks), sub-tasks whose results nothing uses;
   - a *memory of failed answers*: answers of rounds with negative feedback, shown to the
     meta-agent in later rounds and kept out of the final choice (unless nothing else is left).
3. A self-verifier (one model call) picks the final answer among the distinct candidates; a
   single distinct answer needs no call; an unusable reply falls back to a majority.

Budget: every designer/verifier call is checked against what is left before it is made, and every
sub-run gets the remainder as its enforced runtime budget, so the task's total spend stays within
``config.budget`` (and the context's budget). Gold answers reach only simulated models' request
metadata (see :func:`masbench.design.common.sim_gold`); nothing in the loop reads them.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

from ..budget import BudgetMeter
from ..llm import metered_call
from ..runtime import DesignResult, RunContext, majority_vote, run_design
from ..spec import DesignRef
from ..store import NodeRow
from ..text import parse_choice
from .check import DesignCheck, Rejected, check_data
from .common import TOO_HARD, collecting_sink, n_answers, result, short, sim_gold, sub_context, tag, tighter
from .decompose import TOO_HARD_NOTE, MetaDesignerConfig, completeness, decomposition_design, parse_decomposition
from .prompts import decompose_messages, sim_design_hints, verify_messages
from .records import DesignRecord, DesignSink, prompt_hash, prompt_text


@dataclass
class Candidate:
    source: str
    round: int
    answers: list[str]
    text: str
    status: str
    flagged: str | None = None
    design_id: str | None = None

    @property
    def key(self) -> tuple[str, ...]:
        return tuple(self.answers)

    @property
    def present(self) -> bool:
        return any(a for a in self.answers) and not any(TOO_HARD.search(a) for a in self.answers)

    def summary(self) -> dict[str, Any]:
        return {"source": self.source, "round": self.round, "answers": self.answers, "status": self.status,
                "flagged": self.flagged, "design_id": self.design_id}


# --------------------------------------------------------------------------- the loop


class MetaDesigner:
    """One task's meta-design loop (see the module docstring)."""

    def __init__(self, ctx: RunContext, config: MetaDesignerConfig | None = None, *,
                 design_sink: DesignSink | None = None):
        self.ctx = ctx
        self.cfg = config or MetaDesignerConfig()
        self.design_sink = design_sink
        self.ledger = BudgetMeter(tighter(self.cfg.budget, ctx.budget))
        self.label = str(ctx.tags.get("design") or self.cfg.name)
        self.records: list[DesignRecord] = []
        self.simulated = False
        self.sub_status: list[str] = []
        self.subtasks: dict[str, list[dict[str, Any]]] = {}
        """design_id → the parsed decomposition behind that round's design."""

    async def _sub_run(self, design: Any, task: Any, params: dict | None, prefix: str
                       ) -> tuple[DesignResult | None, list[NodeRow]]:
        if self.ledger.exhausted:
            return None, []
        try:
            b = self.ledger.remaining()
        except ValueError:
            self.ledger.refuse(prefix, "used up")
            return None, []
        rows: list[NodeRow] = []
        sub = sub_context(self.ctx, b, collecting_sink(self.ctx.node_sink, prefix, rows))
        res = await run_design(design, task, sub, params)
        self.ledger.absorb(res)
        self.simulated |= bool(res.detail.get("simulated"))
        self.sub_status.append(res.status)
        return res, rows

    async def run(self, task: Any) -> DesignResult:
        t0 = time.perf_counter()
        cfg = self.cfg
        cands: list[Candidate] = []
        rounds: list[dict[str, Any]] = []
        # 1. seed blocks
        for ref in cfg.seed_blocks:
            ref = DesignRef(design=ref) if isinstance(ref, str) else ref
            label = ref.label or ref.design
            res, _rows = await self._sub_run(ref.design, task, ref.params or None, f"seed:{label}/")
            if res is None:
                break
            cands.append(Candidate(label, 0, list(res.answers), res.text, res.status))
        seed_keys = [c.key for c in cands if c.present]
        seed_unanimous = len(seed_keys) >= 2 and len(set(seed_keys)) == 1
        # 2. rounds
        feedback: list[str] = []
        failed: list[str] = []
        previous: dict | None = None
        parent: str | None = None
        with_context = cfg.context is True or (cfg.context == "auto" and len(task.question) > cfg.context_chars)
        for r in range(1, cfg.max_rounds + 1):
            if self.ledger.exhausted:
                break
            seen = [(c.source, ", ".join(c.answers)) for c in cands]
            msgs = decompose_messages(task.question, cfg.blocks, cfg.max_subtasks, seen=seen, feedback=feedback,
                                      failed=failed, previous=previous)
            sim = {"mode": "design", "role": "decompose", "round": r,
                   **sim_design_hints(self.ctx.library, "decompose", question=task.question, blocks=cfg.blocks)}
            call = await metered_call(self.ctx.gateway, self.ledger, cfg.model, msgs, max_tokens=cfg.max_tokens,
                                      temperature=cfg.temperature, sample_index=self.ctx.seed * 1000 + r,
                                      tags=tag(self.ctx, self.label, f"meta/decompose[{r}]", task.id),
                                      metadata={"sim": sim}, where=f"meta/decompose[{r}]", search=True)
            if call is None:
                break
            rec = self._record(task, call, msgs, r, parent, with_context)
            parent = rec.design_id
            info: dict[str, Any] = {"round": r, "design_id": rec.design_id, "valid": rec.valid,
                                    "rejection": rec.rejection, "repairs": rec.repairs}
            rounds.append(info)
            if not rec.valid:
                feedback = [f"your reply was rejected: {rec.rejection}"]
                continue
            subtasks = self.subtasks[rec.design_id]
            previous = {"subtasks": subtasks}
            res, rows = await self._sub_run(rec.spec, task, None, f"r{r}/")
            if res is None:
                break
            solv = self._solvability(subtasks, res, rows, f"r{r}/")
            comp = completeness(task.question, subtasks, with_context)
            cand = Candidate(f"round{r}", r, list(res.answers), res.text, res.status, design_id=rec.design_id)
            if not cand.present:
                solv.append("the design gave no usable final answer")
            info.update({"answers": cand.answers, "status": res.status, "solvability": solv, "completeness": comp})
            if solv or comp:
                cand.flagged = "; ".join(solv + comp)
                failed.append(f"{', '.join(cand.answers) or '(none)'} (round {r}: {cand.flagged[:200]})")
                feedback = solv + comp
                cands.append(cand)
                continue
            cands.append(cand)
            feedback = []
            if cfg.stop_when_solved:
                break
        # 3. self-verifier
        chosen, select = await self._verify(task, cands)
        detail: dict[str, Any] = {
            "meta": {"candidates": [c.summary() for c in cands], "rounds": rounds,
                     "chosen": chosen.summary() if chosen else None, "seed_unanimous": seed_unanimous,
                     "failed_memory": failed, "designs": [r.design_id for r in self.records]},
            "selects": {"meta/verify": select},
            "budget": self.ledger.summary(),
            "simulated": self.simulated or self.ctx.gateway.is_simulated(cfg.model),
        }
        n = n_answers(task)
        wall = time.perf_counter() - t0
        if chosen is None:
            status = "budget_exhausted" if self.ledger.exhausted else "failed"
            return result(text="", answers=[""] * n, status=status, ledger=self.ledger, wall_s=wall,
                          error="no candidate answer" + (" (budget exhausted)" if self.ledger.exhausted else ""),
                          detail=detail)
        answers = (list(chosen.answers) + [""] * n)[:n]
        if self.ledger.exhausted:
            status = "budget_exhausted"
        elif chosen.status == "ok" and not select.get("fallback"):
            status = "ok"
        else:
            status = "degraded"
        return result(text=chosen.text, answers=answers, status=status, ledger=self.ledger, wall_s=wall, error=None,
                      detail=detail)

    # ----- pieces ----------------------------------------------------------------------------
    def _record(self, task: Any, call: Any, msgs: list[dict], r: int, parent: str | None,
                with_context: bool) -> DesignRecord:
        cfg = self.cfg
        subtasks: list[dict[str, Any]] = []
        if call.error is not None:
            check = DesignCheck(None, f"designer call failed: {call.error}"[:500], [], [], None)
        else:
            try:
                subtasks, repairs = parse_decomposition(call.text, cfg)
            except Rejected as exc:
                check = DesignCheck(None, exc.reason, [], [exc.reason], None)
            else:
                digest = hashlib.sha1(f"{task.id}|{r}".encode()).hexdigest()[:6]
                data = decomposition_design(subtasks, cfg, title=f"meta-r{r}-{digest}", with_context=with_context)
                check = check_data(data, self.ctx.library, cfg.limits, designer="meta")
                check.repairs = repairs + check.repairs
        rec = DesignRecord("meta", call.text, check, prompt=prompt_text(msgs), prompt_hash=prompt_hash(msgs),
                           run_id=self.ctx.tags.get("run_id"), task_id=task.id, parent=parent, round=r,
                           tokens=call.prompt_tokens + call.completion_tokens, calls=1, cost_usd=call.cost_usd)
        self.subtasks[rec.design_id] = subtasks
        rec.with_lineage()
        self.records.append(rec)
        if self.design_sink is not None:
            self.design_sink(rec.row())
        return rec

    @staticmethod
    def _solvability(subtasks: list[dict[str, Any]], res: DesignResult, rows: list[NodeRow], pre: str) -> list[str]:
        out = []
        subs = (res.detail or {}).get("subdesigns") or {}
        for st in subtasks:
            sid = st["id"]
            mine = [x for x in rows if x.node == pre + sid or (x.node or "").startswith(pre + sid + "/")]
            info = subs.get(sid) or {}
            answers = info.get("answers") or []
            if any(TOO_HARD.search(str(x.output or "")) for x in mine) or any(
                    TOO_HARD.search(a) for a in answers):
                out.append(f"sub-task {sid} was answered TOO_HARD: split it into smaller sub-tasks "
                           f"({short(st['task'], 120)})")
            elif info and not any(answers):
                out.append(f"sub-task {sid} produced no answer ({info.get('status')})")
        return out

    async def _verify(self, task: Any, cands: list[Candidate]) -> tuple[Candidate | None, dict[str, Any]]:
        usable = [c for c in cands if c.present]
        pool = [c for c in usable if not c.flagged] or usable
        if not pool:
            return None, {"n": 0, "choice": None, "fallback": True, "call": False}
        distinct: list[Candidate] = []
        for c in pool:
            if c.key not in [d.key for d in distinct]:
                distinct.append(c)
        support = {d.key: [c.source for c in pool if c.key == d.key] for d in distinct}
        rec: dict[str, Any] = {"n": len(distinct), "choice": None, "fallback": False, "call": False,
                               "sources": [d.source for d in distinct], "support": [support[d.key] for d in distinct]}
        if len(distinct) == 1:
            rec.update(choice=1, unanimous=True)
            return distinct[0], rec
        choice = None
        if self.cfg.verify:
            msgs = verify_messages(task.question, [(", ".join(d.answers), d.text) for d in distinct])
            sim = {"mode": "choice", "candidates": [",".join(d.answers) for d in distinct],
                   "gold": sim_gold(task)}  # simulated models only (see sim_gold)
            call = await metered_call(self.ctx.gateway, self.ledger, self.cfg.model, msgs,
                                      max_tokens=self.cfg.verify_max_tokens, temperature=0.1,
                                      sample_index=self.ctx.seed * 1000, metadata={"sim": sim},
                                      tags=tag(self.ctx, self.label, "meta/verify", task.id), where="meta/verify",
                                      search=True)
            if call is not None:
                rec["call"] = True
                if call.error is None:
                    choice = parse_choice(call.text, len(distinct))
        if choice is None:  # no verifier, no budget, or no usable choice: majority (first seen wins ties)
            winner, _tally, _tie = majority_vote([c.key for c in pool])
            choice = next(i for i, d in enumerate(distinct) if d.key == winner)
            rec["fallback"] = True
        rec["choice"] = choice + 1
        rec["chosen_source"] = distinct[choice].source
        return distinct[choice], rec


async def run_meta_designer(task: Any, ctx: RunContext, config: MetaDesignerConfig | dict | None = None, *,
                            design_sink: DesignSink | None = None) -> DesignResult:
    """Run the meta-designer on one task (the harness's designer-runner signature). Its result
    counts every designer, verifier and sub-run call; per-round designs go to ``design_sink``."""
    cfg = config if isinstance(config, MetaDesignerConfig) else MetaDesignerConfig.from_params(config)
    return await MetaDesigner(ctx, cfg, design_sink=design_sink).run(task)


__all__ = ["Candidate", "MetaDesigner", "MetaDesignerConfig", "TOO_HARD_NOTE", "completeness",
           "decomposition_design", "parse_decomposition", "run_meta_designer"]
