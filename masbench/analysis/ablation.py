"""Per-node ablation (reruns): drop one node (dangling references removed; a node others still
need by name cannot be dropped), rerun the design on a sample of the run's tasks with the run's
models and budget, and report the accuracy change against the full design rerun the same way."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..bench import load_suite_tasks, score
from ..design.check import spec_data
from ..library import Library
from ..llm import Gateway, models_from
from ..runtime import RunContext, check_design, run_design
from ..spec.design import DesignSpec
from ..spec.problems import SpecError
from ..store import Store
from .lookup import design_spec, entry_params, suite_config


def drop_node(spec: DesignSpec, node: str, library: Library) -> tuple[DesignSpec | None, str | None]:
    """The design without ``node`` (its dangling ``from`` references dropped), validated."""
    data = spec_data(spec)
    if node == data.get("output"):
        return None, "the output node"
    nodes = data["nodes"]
    if node not in nodes:
        return None, "no such node"
    nodes.pop(node)
    for other in nodes.values():
        f = other.get("from")
        if f is not None:
            lst = [f] if isinstance(f, str) else list(f)
            keep = [e for e in lst if e.split(".")[0] != node]
            if keep != lst:
                if keep:
                    other["from"] = keep
                else:
                    other.pop("from")
    data["name"] = f"{spec.name}--no-{node}"[:120]
    try:
        s = DesignSpec.model_validate(data)
    except Exception as exc:  # noqa: BLE001
        return None, f"invalid without it: {exc}"[:300]
    probs = check_design(s, None, library)
    if probs:
        return None, "invalid without it: " + "; ".join(f"{p.field}: {p.message}" for p in probs[:2])
    return s, None


async def ablate_async(store: Store, run_id: str, design: str, n: int, library: Library, *,
                       gateway: Gateway | None = None, nodes: list[str] | None = None,
                       concurrency: int = 8) -> list[dict[str, Any]]:
    """Drop each top-level node (or ``nodes``) in turn and rerun on the first ``n`` tasks of the
    run (by task id) with the run's models and budget. Δ accuracy is against the full design rerun
    on the same sample under the same conditions."""
    suite, extra = suite_config(store, run_id)
    if suite is None:
        raise ValueError(f"run {run_id!r} has no suite config to regenerate its tasks from")
    name, params = entry_params(suite, design)
    spec = design_spec(store, library, name)
    if spec is None:
        raise ValueError(f"design {name!r} is not in the library nor in the store's designs (a designer runner "
                         "has no fixed graph to ablate)")
    ids = [r[0] for r in store.sql("SELECT DISTINCT task_id FROM results WHERE run_id = ? AND design = ? "
                                   "ORDER BY task_id", [run_id, design])]
    base = Path.cwd()
    try:
        base = library.get("suite", suite.name).path.parent
    except SpecError:
        pass
    tasks = {t.id: t for t in load_suite_tasks(suite, base)}
    sample = [tasks[i] for i in ids if i in tasks][:n]
    if not sample:
        raise ValueError("no tasks of this run could be regenerated")
    gw = gateway or Gateway(models_from(suite.models, extra.get("_overrides") or {}))
    sem = asyncio.Semaphore(concurrency)

    async def evaluate(s: DesignSpec) -> tuple[float, float]:
        async def one(t):
            async with sem:
                ctx = RunContext(gateway=gw, library=library, budget=suite.budget,
                                 tags={"run_id": f"{run_id}:ablation", "design": s.name, "task_id": t.id,
                                       "purpose": "ablation"})
                r = await run_design(s, t, ctx, params=params or None)
                return score(t, r.answers).correct, r.tokens
        res = await asyncio.gather(*[one(t) for t in sample])
        return sum(c for c, _ in res) / len(res), sum(t for _, t in res) / len(res)

    full_acc, full_tok = await evaluate(spec)
    rows = [{"node": "(full design)", "op": "", "valid": True, "reason": None, "n": len(sample),
             "accuracy": full_acc, "delta_accuracy": 0.0, "tokens": full_tok, "delta_tokens": 0.0}]
    for node in nodes or list(spec.nodes):
        op = spec.nodes[node].kind if node in spec.nodes else ""
        ab, why = drop_node(spec, node, library)
        if ab is None:
            rows.append({"node": node, "op": op, "valid": False, "reason": why, "n": 0, "accuracy": None,
                         "delta_accuracy": None, "tokens": None, "delta_tokens": None})
            continue
        acc, tok = await evaluate(ab)
        rows.append({"node": node, "op": op, "valid": True, "reason": None, "n": len(sample), "accuracy": acc,
                     "delta_accuracy": acc - full_acc, "tokens": tok, "delta_tokens": tok - full_tok})
    return rows


def ablate(store: Store, run_id: str, design: str, n: int, library: Library, **kw: Any) -> list[dict[str, Any]]:
    """Synchronous :func:`ablate_async`."""
    return asyncio.run(ablate_async(store, run_id, design, n, library, **kw))


__all__ = ["ablate", "ablate_async", "drop_node"]
