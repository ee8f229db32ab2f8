"""Architecture diagnostics for any run: is a (generated) MAS really a MAS? Per design of a run:
structure and collapse (from the spec, :mod:`masbench.design.topology`), calls / tokens per task
(from ``results``), unanimity at once and verifier choices (:mod:`.behaviour`), and optionally a
per-node ablation (:mod:`.ablation`). A per-task designer has no fixed graph: its row shows the mean
structure of the designs it wrote in that run."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..design.runnable import is_designer
from ..design.topology import collapse, structure
from ..library import Library
from ..spec.design import DesignSpec
from ..spec.problems import SpecError
from ..store import Store, latest_run
from .ablation import ablate
from .behaviour import approvals, unanimity, verifier_choices
from .lookup import design_spec, entry_params, suite_config


def diagnose(store: Store, run_id: str | None = None, designs: list[str] | None = None, library: Library | None = None,
             ablate_n: int = 0) -> list[dict[str, Any]]:
    """Every diagnostic for every design of a run (default: the latest run)."""
    library = library or Library()
    run_id = run_id or latest_run(store)
    if run_id is None:
        raise ValueError("the store has no runs")
    suite, _ = suite_config(store, run_id)
    labels = [r[0] for r in store.sql("SELECT DISTINCT design FROM results WHERE run_id = ? ORDER BY design",
                                      [run_id])]
    out = []
    for label in labels:
        if designs and label not in designs:
            continue
        name, params = entry_params(suite, label)
        agg = store.sql("SELECT count(*), avg(CAST(correct AS DOUBLE)), avg(calls), avg(tokens), avg(cost_usd), "
                        "coalesce(bool_or(simulated), false) FROM results WHERE run_id = ? AND design = ?",
                        [run_id, label])[0]
        row: dict[str, Any] = {"run_id": run_id, "design": label, "design_name": name, "n": agg[0],
                               "accuracy": agg[1], "calls_per_task": agg[2], "tokens_per_task": agg[3],
                               "usd_per_task": agg[4], "simulated": bool(agg[5])}
        spec = None if is_designer(name) else design_spec(store, library, name)
        if spec is not None:
            st = structure(spec, library, params)
            row.update(kind=spec.kind, nodes=st["nodes"], depth=st["depth"], sequential_depth=st["sequential_depth"],
                       max_fanout=st["max_fanout"], collapse=collapse(spec, library, params or None))
        else:
            row.update(kind="designer" if is_designer(name) else None, **_per_task_structure(store, run_id, library))
        row["unanimity"] = unanimity(store, run_id, label, spec, library, params)
        row["verifier"] = verifier_choices(store, run_id, label, spec)
        row["approvals"] = approvals(store, run_id, label)
        if ablate_n and spec is not None:
            try:
                row["ablation"] = ablate(store, run_id, label, ablate_n, library)
            except ValueError as exc:
                row["ablation_error"] = str(exc)
        out.append(row)
    return out


def _per_task_structure(store: Store, run_id: str, library: Library) -> dict[str, Any]:
    """Mean structure of a per-task designer's valid designs in this run, and their collapses."""
    rows = store.sql("SELECT spec FROM designs WHERE run_id = ? AND valid AND task_id IS NOT NULL", [run_id])
    if not rows:
        return {"nodes": None, "depth": None, "sequential_depth": None, "collapse": None}
    sts, cols = [], Counter()
    for (s,) in rows:
        spec = DesignSpec.model_validate(json.loads(s))
        try:
            sts.append(structure(spec, library))
            cols[collapse(spec, library) or "(multi-agent)"] += 1
        except SpecError:
            continue
    if not sts:
        return {"nodes": None, "depth": None, "sequential_depth": None, "collapse": None}
    return {"nodes": sum(s["nodes"] for s in sts) / len(sts), "depth": sum(s["depth"] for s in sts) / len(sts),
            "sequential_depth": sum(s["sequential_depth"] for s in sts) / len(sts),
            "max_fanout": max(s["max_fanout"] for s in sts), "collapse": dict(cols.most_common()),
            "designs": len(sts)}


__all__ = ["diagnose"]
