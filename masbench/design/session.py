"""Search sessions and designer runs over a suite, written to the store.

- :func:`holistic_session`: the one-shot designer writes ``n`` candidates for a suite's task
  family; every call is a ``calls`` row (``purpose: search``), every candidate a ``designs`` row;
  valid ones can be exported and (``suite_out``) listed in a derived suite.
- :func:`run_designer_suite`: a per-task designer (``meta-designer``, ``holistic-designer``) over
  a suite's tasks, written as ``results``/``calls``/``nodes``/``designs`` rows — into a new run, or
  into an existing harness run (``run_id``) so it is compared against that run's CoT-SC curve.
  Until the harness dispatches designer names itself, this is how a designer joins a suite run.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .holistic import HolisticConfig, HolisticDesigner
from .records import DesignRecord, export_designs
from .runners import DESIGNERS


@dataclass
class SessionResult:
    run_id: str
    records: list[DesignRecord]
    exported: list[Path] = field(default_factory=list)
    suite_out: Path | None = None
    tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def valid_rate(self) -> float:
        return sum(r.valid for r in self.records) / len(self.records) if self.records else 0.0


def _examples(tasks: list[Any], k: int) -> list[str]:
    """Up to k example questions, one per task source first (never their answers)."""
    out, seen = [], set()
    for t in tasks:
        if t.source not in seen:
            seen.add(t.source)
            out.append(t.question)
    for t in tasks:
        if len(out) >= k:
            break
        if t.question not in out:
            out.append(t.question)
    return out[:k]


async def holistic_session(prep: Any, store: Any, config: HolisticConfig, *, export: Path | None = None,
                           suite_out: Path | None = None, seed: int = 0, gateway: Any = None) -> SessionResult:
    """Run the holistic designer once for a prepared suite (see :func:`masbench.harness.runner.prepare`)."""
    from ..llm import Gateway
    from ..store import StoreWriter, finish_run, new_run_id, start_run
    from ..store import ensure_views

    ensure_views(store)
    run_id = new_run_id(f"{prep.suite.name}-holistic")
    start_run(store, run_id, f"{prep.suite.name}:design-search",
              {"designer": "holistic", "suite": prep.suite.name, "n": config.n, "model": config.model},
              {a: m.id for a, m in prep.models.items()}, prep.simulated, command="masbench design holistic")
    writer = StoreWriter(store)
    gw = gateway or Gateway(prep.models, sink=writer.sink("calls"))
    d = HolisticDesigner(gw, prep.library, config, tags={"run_id": run_id}, design_sink=writer.sink("designs"))
    try:
        recs = await d.generate(_examples(prep.tasks, config.examples), description=prep.suite.description, seed=seed)
    finally:
        writer.flush()
        finish_run(store, run_id)
    res = SessionResult(run_id, recs, tokens=d.ledger.tokens, cost_usd=d.ledger.usd, calls=d.ledger.calls)
    if export is not None:
        res.exported = export_designs(store, export, run_id=run_id)
    if suite_out is not None:
        names = []
        for r in recs:
            if r.valid and r.name not in names:
                names.append(r.name)
        res.suite_out = derive_suite(prep.suite_path, suite_out, names)
    return res


def derive_suite(suite_path: Path, out: Path, add: list[str], name_suffix: str = "-auto") -> Path:
    """A copy of a suite file with generated designs appended to ``designs`` (same store, tasks,
    models, budget — so search sessions and runs share a store and the cost views join)."""
    data = yaml.safe_load(Path(suite_path).read_text(encoding="utf-8"))
    data["name"] = str(data.get("name", "suite")) + name_suffix
    designs = list(data.get("designs") or [])
    have = {d if isinstance(d, str) else d.get("design") for d in designs}
    designs += [n for n in add if n not in have]
    data["designs"] = designs
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    head = (f"# Derived from {Path(suite_path).name} by `masbench design holistic --suite-out`: the same suite plus\n"
            "# the generated designs (exported to orchestrators/generated/). Run it with `masbench run`.\n")
    out.write_text(head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    return out


async def run_designer_suite(prep: Any, store: Any, designer: str = "meta-designer", params: dict | None = None, *,
                             run_id: str | None = None, label: str | None = None, seed: int = 0,
                             concurrency: int = 4, gateway: Any = None) -> dict[str, Any]:
    """Run a per-task designer on every task of a prepared suite; resumable per (label, task)."""
    from ..bench import score
    from ..llm import Gateway
    from ..runtime import RunContext
    from ..store import StoreWriter, finish_run, new_run_id, start_run
    from ..store import ensure_views

    runner = DESIGNERS[designer]
    label = label or designer
    ensure_views(store)
    own_run = run_id is None
    if run_id is None:
        run_id = new_run_id(f"{prep.suite.name}-{designer}")
        cfg = prep.suite.model_dump(mode="json", by_alias=True)
        start_run(store, run_id, prep.suite.name, cfg, {a: m.id for a, m in prep.models.items()}, prep.simulated,
                  command=f"masbench design {designer}")
    elif not store.sql("SELECT 1 FROM runs WHERE run_id = ?", [run_id]):
        raise ValueError(f"no run {run_id!r} in the store")
    done = {(t, s) for t, s in store.sql("SELECT task_id, seed FROM results WHERE run_id = ? AND design = ?",
                                          [run_id, label])}
    writer = StoreWriter(store, flush_rows=5000)
    gw = gateway or Gateway(prep.models, sink=writer.sink("calls"))
    sem = asyncio.Semaphore(concurrency)
    todo = [t for t in prep.tasks if (t.id, seed) not in done]

    async def one(task: Any) -> None:
        async with sem:
            ctx = RunContext(gateway=gw, library=prep.library, budget=prep.suite.budget,
                             tags={"run_id": run_id, "design": label, "task_id": task.id, "seed": seed,
                                   "purpose": "design"},
                             node_sink=writer.sink("nodes"), seed=seed)
            t0 = time.perf_counter()
            try:
                res = await runner(task, ctx, params, design_sink=writer.sink("designs"))
                sc = score(task, res.answers)
                row = dict(answer=", ".join(res.answers), correct=sc.correct, partial=sc.partial,
                           prompt_tokens=res.prompt_tokens, completion_tokens=res.completion_tokens,
                           tokens=res.tokens, cost_usd=res.cost_usd, calls=res.calls, wall_s=res.wall_s,
                           status=res.status, error=res.error, detail=json.dumps(res.detail, default=str))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded as a failed cell, like the harness does
                row = dict(answer="", correct=False, partial=0.0, prompt_tokens=0, completion_tokens=0, tokens=0,
                           cost_usd=0.0, calls=0, wall_s=time.perf_counter() - t0, status="failed",
                           error=f"{type(exc).__name__}: {exc}", detail=None)
            writer.add("results", {
                "run_id": run_id, "design": label, "design_name": designer, "task_id": task.id, "seed": seed,
                "source": task.source, "axis": task.axis, "axis_value": task.axis_value,
                "gold": ", ".join(task.answers), "simulated": prep.simulated, "ts": time.time(), **row})

    try:
        await asyncio.gather(*[one(t) for t in todo])
    finally:
        writer.flush()
        if own_run:
            finish_run(store, run_id)
    agg = store.sql("SELECT count(*), avg(CAST(correct AS DOUBLE)), avg(tokens), avg(calls) FROM results "
                    "WHERE run_id = ? AND design = ?", [run_id, label])[0]
    val = store.sql("SELECT count(*), count(*) FILTER (WHERE valid) FROM designs WHERE run_id = ? AND task_id IS NOT NULL",
                    [run_id])[0]
    return {"run_id": run_id, "design": label, "ran": len(todo), "skipped": len(prep.tasks) - len(todo),
            "tasks": agg[0], "accuracy": agg[1], "tokens_per_task": agg[2], "calls_per_task": agg[3],
            "designs": val[0], "valid_designs": val[1], "valid_rate": (val[1] / val[0]) if val[0] else None}


__all__ = ["SessionResult", "derive_suite", "holistic_session", "run_designer_suite"]
