"""Behaviour of a run's designs, from its ``nodes`` and ``results`` rows: *unanimity at once*
(for every repeat/map node, whether all branch answers were equal and present in round 1; the
design-level share uses each task's first such node — the DyLAN failure mode: consensus before any
debate happens; for the meta-designer, whether all seed blocks agreed) and *verifier choices* (a
histogram of what each select / self-verifier picked, by source where it can be told — the
MAS-Zero failure mode: the verifier picks CoT)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, cast

from ..design.topology import resolve_param
from ..library import Library
from ..spec.design import DesignSpec
from ..spec.problems import SpecError
from ..store import Store


def _fan_k(spec: DesignSpec | None, library: Library | None, params: dict, node_path: str) -> int | None:
    """Branches per round of a fan-out node, from the spec (None if it depends on data)."""
    if spec is None:
        return None
    segs = node_path.split("/")
    cur, pr = spec, {**spec.params, **params}
    for seg in segs[:-1]:
        n = cur.nodes.get(seg)
        if n is None or n.design is None or library is None:  # a nested design is looked up in the library
            return None
        try:
            nxt = library.design(n.design)
        except SpecError:
            return None
        cur, pr = nxt, {**nxt.params, **n.params}
    last = segs[-1]
    loop, _, body = last.partition(".")
    n = cur.nodes.get(loop)
    if body and n is not None and n.loop is not None:
        n = n.loop.nodes.get(body)
    elif body:
        return None
    if n is None:
        return None
    if n.repeat is not None:
        k = resolve_param(n.repeat, pr)
        return k if isinstance(k, int) else None
    if n.map is not None:
        v = resolve_param(n.map, pr)
        return len(v) if isinstance(v, list) else None
    return None


def unanimity(store: Store, run_id: str, design: str, spec: DesignSpec | None = None, library: Library | None = None,
              params: dict | None = None) -> dict[str, Any]:
    """Share of tasks whose first fan-out (≥ 2 branches) was unanimous in round 1, plus per node."""
    df = store.df("SELECT task_id, seed, node, op, output, ts FROM nodes WHERE run_id = ? AND design = ? "
                  "AND op IN ('repeat', 'map') ORDER BY task_id, seed, ts", [run_id, design])
    details = {(t, s): json.loads(d) if d else {} for t, s, d in store.sql(
        "SELECT task_id, seed, detail FROM results WHERE run_id = ? AND design = ?", [run_id, design])}
    per_node: dict[str, list[bool]] = {}
    first: dict[tuple, bool] = {}
    for key, g in df.groupby(["task_id", "seed", "node"], sort=False):
        task, seed, node = cast(tuple[str, int, str], key)  # nodes.task_id, seed, node: VARCHAR, INTEGER, VARCHAR
        outs = [o if isinstance(o, str) else "" for o in g["output"].tolist()]
        in_loop = "." in node.split("/")[-1]
        k = len(outs)
        if in_loop:
            k = _fan_k(spec, library, params or {}, node) if spec is not None else None
            if k is None:
                loops = (details.get((task, seed)) or {}).get("loops") or {}
                lname = node.rsplit(".", 1)[0]
                r = (loops.get(lname) or {}).get("rounds")
                k = len(outs) // r if r and len(outs) % r == 0 else None
            if k is None:
                continue
        r1 = [o.strip().lower() for o in outs[:k]]
        if len(r1) < 2:
            continue
        u = all(r1) and len(set(r1)) == 1 and len(r1[0]) <= 200
        per_node.setdefault(node, []).append(u)
        first.setdefault((task, seed), u)  # rows are in time order: the first fan-out wins
    out: dict[str, Any] = {"tasks": len(first), "share": (sum(first.values()) / len(first)) if first else None,
                           "nodes": {n: {"tasks": len(v), "share": sum(v) / len(v)} for n, v in per_node.items()}}
    meta = [d.get("meta", {}).get("seed_unanimous") for d in details.values() if "meta" in d]
    meta = [m for m in meta if m is not None]
    if meta:  # a meta-designer's "agents" are its seed blocks: did they all agree at once?
        out["seeds"] = {"tasks": len(meta), "share": sum(meta) / len(meta)}
        out["tasks"], out["share"] = len(meta), sum(meta) / len(meta)
    return out


def verifier_choices(store: Store, run_id: str, design: str, spec: DesignSpec | None = None) -> dict[str, Any]:
    """Histogram of select / self-verifier choices (by source where it can be told)."""
    hist: Counter = Counter()
    n = 0
    for (d,) in store.sql("SELECT detail FROM results WHERE run_id = ? AND design = ?", [run_id, design]):
        det = json.loads(d) if d else {}
        for node, sel in (det.get("selects") or {}).items():
            if not isinstance(sel, dict) or sel.get("n") is None:
                continue
            n += 1
            if sel.get("unanimous"):
                label = "(all agree: no call)"
            elif sel.get("chosen_source"):
                label = str(sel["chosen_source"]) + (" (fallback)" if sel.get("fallback") else "")
            elif sel.get("fallback"):
                label = "(fallback: majority)"
            else:
                label = f"candidate {sel.get('choice')}"
                if spec is not None and node in spec.nodes and sel.get("choice"):
                    srcs = [x for x in spec.nodes[node].inputs if x != "question"]
                    if len(srcs) == sel.get("n") and all(spec.nodes.get(s) is not None and spec.nodes[s].repeat is None
                                                         and spec.nodes[s].map is None for s in srcs):
                        label = srcs[sel["choice"] - 1]
            hist[label] += 1
    return {"decisions": n, "histogram": dict(hist.most_common())}


def approvals(store: Store, run_id: str, design: str) -> dict[str, Any]:
    """Judge approvals: tasks on which a loop stopped because its ``until`` held (a critic or
    verifier said "correct"), and the share of them whose final answer was wrong — the verifier
    rubber-stamping rate (exact when the loop's value is the design's output, as in self-refine)."""
    n = wrong = 0
    for correct, d in store.sql("SELECT correct, detail FROM results WHERE run_id = ? AND design = ?",
                                [run_id, design]):
        loops = (json.loads(d) if d else {}).get("loops") or {}
        if any(isinstance(lp, dict) and lp.get("stopped") == "until" for lp in loops.values()):
            n += 1
            wrong += not correct
    return {"approved": n, "wrong": wrong, "share_wrong": wrong / n if n else None}


__all__ = ["approvals", "unanimity", "verifier_choices"]
