"""Architecture diagnostics for any run: is a (generated) MAS really a MAS?

Per design of a run:
- **structure** (from the spec, networkx): nodes (loop bodies included), graph depth (longest
  chain of top-level nodes), sequential depth (model-call stages on the longest chain, loops
  counted × their max rounds, sub-designs expanded), widest fan-out;
- **calls / tokens per task** (from ``results``);
- **unanimity at once** (from ``nodes`` rows): for every repeat/map node, whether all branch
  answers were equal (and present) in round 1; the design-level share uses each task's first
  such node (the DyLAN failure mode: consensus before any debate happens). For the meta-designer:
  whether all seed blocks agreed;
- **approved wrong** (from ``results.detail``): of the tasks on which a judge's approval ended a
  loop, the share whose answer was wrong (verifier rubber-stamping);
- **verifier choices** (from ``results.detail``): a histogram of what each select / self-verifier
  picked (by source where it can be told; the MAS-Zero failure mode: the verifier picks CoT);
- **collapse** (from the spec): a design that is effectively one call ("single call", the MaAS
  failure mode), one library block, or "the same agent k times, then a vote" (CoT-SC — the AFlow
  failure mode), also when wrapped in a sub-design, behind pass-through nodes, or followed by a
  single restating call;
- **per-node ablation** (optional, reruns): drop one node (dangling references removed; a node
  others still need by name cannot be dropped), rerun the design on a sample of the run's tasks
  with the run's models and budget, and report the accuracy change.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx

from ..spec.design import DesignSpec, NodeSpec
from ..spec.problems import SpecError
from .check import node_reads, spec_data

SINGLE_CALL = "single call"


# --------------------------------------------------------------------------- spec lookup


def design_spec(store: Any, library: Any, name: str) -> DesignSpec | None:
    """A design by name: the library first, else the latest valid row of the ``designs`` table."""
    try:
        if library.has("design", name):
            return library.design(name)
    except SpecError:
        pass
    if store is not None:
        rows = store.sql("SELECT spec FROM designs WHERE name = ? AND valid AND spec IS NOT NULL "
                         "ORDER BY ts DESC LIMIT 1", [name])
        if rows:
            spec = DesignSpec.model_validate(json.loads(rows[0][0]))
            library.add("design", spec)
            return spec
    return None


def _resolve(v: Any, params: dict) -> Any:
    if isinstance(v, str):
        t = v.strip()
        if t.startswith("{") and t.endswith("}") and t[1:-1] in params:
            return params[t[1:-1]]
        try:
            return int(t)
        except ValueError:
            return v
    return v


# --------------------------------------------------------------------------- structure


def top_graph(spec: DesignSpec) -> nx.DiGraph:
    """Top-level dependency graph (edges: what a node reads → the node)."""
    data = spec_data(spec)
    nodes = data["nodes"]
    agents = data.get("agents") or {}
    channels: dict[str, list[str]] = {}
    for n, d in nodes.items():
        if isinstance(d.get("into"), str):
            channels.setdefault(d["into"], []).append(n)
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for n, d in nodes.items():
        for r in node_reads(d, agents):
            for src in channels.get(r, [r]):
                if src in nodes and src != n:
                    g.add_edge(src, n)
    return g


def _stage_weight(node: NodeSpec, library: Any, params: dict, seen: tuple[str, ...]) -> int:
    k = node.kind
    if k in ("agent", "select"):
        return 1
    if k == "design":
        if node.design in seen:
            return 1
        try:
            sub = library.design(node.design)
        except SpecError:
            return 1
        return structure(sub, library, {**sub.params, **node.params}, seen + (node.design,))["sequential_depth"]
    if k == "loop":
        lp = node.loop
        rounds = _resolve(lp.max_rounds, params)
        rounds = rounds if isinstance(rounds, int) else 1
        body = DesignSpec(name="body", nodes=lp.nodes, output=lp.output)
        g = top_graph(body)
        w = {n: _stage_weight(b, library, params, seen) for n, b in lp.nodes.items()}
        best = _heaviest(g, w) if nx.is_directed_acyclic_graph(g) else sum(w.values())
        return rounds * max(best, 1)
    return 0  # majority / python: no model call


def _heaviest(g: nx.DiGraph, w: dict[str, int]) -> int:
    """Largest total node weight along a path of a DAG (dynamic programming, linear time)."""
    best: dict[str, int] = {}
    for n in nx.topological_sort(g):
        best[n] = w.get(n, 0) + max((best[p] for p in g.predecessors(n)), default=0)
    return max(best.values(), default=0)


def structure(spec: DesignSpec, library: Any, params: dict | None = None, _seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """Node count, depth, sequential depth, widest fan-out, ops and agents of a design."""
    params = {**spec.params, **(params or {})}
    g = top_graph(spec)
    n_nodes = len(spec.nodes) + sum(len(n.loop.nodes) for n in spec.nodes.values() if n.loop is not None)
    depth = (nx.dag_longest_path_length(g) + 1) if nx.is_directed_acyclic_graph(g) and len(g) else len(g)
    weights = {n: _stage_weight(d, library, params, _seen + (spec.name,)) for n, d in spec.nodes.items()}
    seq = 0
    if nx.is_directed_acyclic_graph(g):
        seq = _heaviest(g, weights)
    ops: Counter = Counter()
    agents: set[str] = set()
    fan = 1

    def walk(nodes):
        nonlocal fan
        for n in nodes.values():
            ops[n.kind] += 1
            if isinstance(n.agent, str):
                agents.add(n.agent)
            if n.select:
                agents.add(n.select)
            if n.repeat is not None:
                k = _resolve(n.repeat, params)
                fan = max(fan, k if isinstance(k, int) else 1)
            if n.map is not None:
                v = _resolve(n.map, params)
                fan = max(fan, len(v) if isinstance(v, list) else 2)
            if n.loop is not None:
                walk(n.loop.nodes)

    walk(spec.nodes)
    return {"nodes": n_nodes, "depth": depth, "sequential_depth": seq, "max_fanout": fan, "ops": dict(ops),
            "agents": sorted(agents)}


# --------------------------------------------------------------------------- collapse


def _passthrough(n: NodeSpec) -> bool:
    return n.kind == "python" and n.python == "identity" and len([x for x in n.inputs if x != "question"]) == 1


def _sampler(name: str, n: NodeSpec, spec: DesignSpec, library: Any) -> tuple[Any, int] | None:
    """(signature, samples) if the node is "the same call from the question" k times."""
    if n.map is not None:
        return None
    reads = node_reads(spec_data(spec)["nodes"][name], spec_data(spec).get("agents") or {})
    if reads - {"question"} - set(spec.params):
        return None
    k = _resolve(n.repeat, {**spec.params}) if n.repeat is not None else 1
    k = k if isinstance(k, int) else 1
    if n.kind == "agent":
        return (("agent", str(n.agent), n.prompt, n.system), k)
    if n.kind == "design":
        try:
            sub = library.design(n.design)
        except SpecError:
            return None
        c = collapse(sub, library, {**sub.params, **n.params})
        if c == SINGLE_CALL:
            return (("design", n.design, json.dumps(n.params, sort_keys=True, default=str)), k)
        if c and c.startswith("cot-sc(k=") and k == 1:
            return (("design", n.design, json.dumps(n.params, sort_keys=True, default=str)), int(c[9:-1]))
    return None


def collapse(spec: DesignSpec, library: Any, params: dict | None = None) -> str | None:
    """What the design effectively is, if it is a degenerate MAS: ``single call``,
    ``cot-sc(k=K)`` (the same call K times from the question, then a vote or a selector; ``+wrapper``
    if one more call merely restates it), or ``block:<name>`` (it only calls one library block).
    None: a real multi-agent structure."""
    spec = spec if not params else spec.model_copy(update={"params": {**spec.params, **params}})
    nodes = dict(spec.nodes)
    # drop pass-through nodes (identity python with one input)
    out = spec.output
    while out in nodes and _passthrough(nodes[out]):
        out = [x for x in nodes[out].inputs if x != "question"][0]
    nodes = {k: v for k, v in nodes.items() if not _passthrough(v)}
    if out not in nodes:
        return None
    sub = spec.model_copy(update={"nodes": nodes, "output": out})
    live = nx.ancestors(top_graph(sub), out) | {out}
    nodes = {k: v for k, v in nodes.items() if k in live}
    sub = sub.model_copy(update={"nodes": nodes})
    if len(nodes) == 1:
        n = nodes[out]
        if n.kind == "agent" and n.map is None:
            k = _resolve(n.repeat, spec.params) if n.repeat is not None else 1
            if not node_reads(spec_data(sub)["nodes"][out]) - {"question"} - set(spec.params):
                return SINGLE_CALL if k == 1 else f"cot-sc(k={k})"
            return None
        if n.kind == "design":
            s = _sampler(out, n, sub, library)
            if s is not None:
                return SINGLE_CALL if s[1] == 1 else f"cot-sc(k={s[1]})"
            try:
                inner = collapse(library.design(n.design), library, n.params or None)
            except SpecError:
                inner = None
            return inner or f"block:{n.design}"
        return None
    o = nodes[out]
    if o.kind in ("majority", "select") or (o.kind == "python" and o.python == "majority"):
        srcs = [x for x in o.inputs if x != "question"]
        if srcs and set(nodes) == set(srcs) | {out}:
            sigs = [_sampler(s, nodes[s], sub, library) for s in srcs]
            if all(sigs) and len({s[0] for s in sigs}) == 1:  # type: ignore[index]
                k = sum(s[1] for s in sigs)  # type: ignore[index]
                if k >= 2:
                    return f"cot-sc(k={k})"
    # a single restating call after a collapsed core
    if o.kind == "agent" and o.map is None and o.repeat is None:
        ins = [x for x in (node_reads(spec_data(sub)["nodes"][out], spec_data(sub).get("agents") or {}))
               if x in nodes and x != out]
        if len(ins) == 1:
            core = sub.model_copy(update={"nodes": {k: v for k, v in nodes.items() if k != out}, "output": ins[0]})
            c = collapse(core, library)
            if c is not None and c != SINGLE_CALL and not c.endswith("+wrapper"):
                return c + "+wrapper"
    return None


# --------------------------------------------------------------------------- run-based metrics


def _suite_of(store: Any, run_id: str):
    from ..spec import SuiteSpec

    rows = store.sql("SELECT config FROM runs WHERE run_id = ?", [run_id])
    if not rows or rows[0][0] is None:
        return None, {}
    cfg = json.loads(rows[0][0])
    extra = {k: v for k, v in cfg.items() if k.startswith("_")}
    try:
        return SuiteSpec.model_validate({k: v for k, v in cfg.items() if not k.startswith("_")}), extra
    except Exception:  # noqa: BLE001 - an old or foreign config: no suite, diagnostics still run
        return None, extra


def _entry_params(suite: Any, label: str) -> tuple[str, dict]:
    from ..harness.cells import design_entries

    if suite is not None:
        try:
            for e in design_entries(suite):
                if e.label == label:
                    return e.name, dict(e.params)
        except ValueError:
            pass
    return label, {}


def _fan_k(spec: DesignSpec | None, library: Any, params: dict, node_path: str) -> int | None:
    """Branches per round of a fan-out node, from the spec (None if it depends on data)."""
    if spec is None:
        return None
    segs = node_path.split("/")
    cur, pr = spec, {**spec.params, **params}
    for seg in segs[:-1]:
        n = cur.nodes.get(seg)
        if n is None or n.design is None:
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
        k = _resolve(n.repeat, pr)
        return k if isinstance(k, int) else None
    if n.map is not None:
        v = _resolve(n.map, pr)
        return len(v) if isinstance(v, list) else None
    return None


def unanimity(store: Any, run_id: str, design: str, spec: DesignSpec | None = None, library: Any = None,
              params: dict | None = None) -> dict[str, Any]:
    """Share of tasks whose first fan-out (≥ 2 branches) was unanimous in round 1, plus per node."""
    df = store.df("SELECT task_id, seed, node, op, output, ts FROM nodes WHERE run_id = ? AND design = ? "
                  "AND op IN ('repeat', 'map') ORDER BY task_id, seed, ts", [run_id, design])
    details = {(t, s): json.loads(d) if d else {} for t, s, d in store.sql(
        "SELECT task_id, seed, detail FROM results WHERE run_id = ? AND design = ?", [run_id, design])}
    per_node: dict[str, list[bool]] = {}
    first: dict[tuple, bool] = {}
    for (task, seed, node), g in df.groupby(["task_id", "seed", "node"], sort=False):
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


def verifier_choices(store: Any, run_id: str, design: str, spec: DesignSpec | None = None) -> dict[str, Any]:
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


def approvals(store: Any, run_id: str, design: str) -> dict[str, Any]:
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


# --------------------------------------------------------------------------- ablation


def drop_node(spec: DesignSpec, node: str, library: Any) -> tuple[DesignSpec | None, str | None]:
    """The design without ``node`` (its dangling ``from`` references dropped), validated."""
    from ..runtime import validate_design

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
    probs = validate_design(s, None, library)
    if probs:
        return None, "invalid without it: " + "; ".join(f"{p.field}: {p.message}" for p in probs[:2])
    return s, None


async def ablate_async(store: Any, run_id: str, design: str, n: int, library: Any, *, gateway: Any = None,
                       nodes: list[str] | None = None, concurrency: int = 8) -> list[dict[str, Any]]:
    """Drop each top-level node (or ``nodes``) in turn and rerun on the first ``n`` tasks of the
    run (by task id) with the run's models and budget. Δ accuracy is against the full design rerun
    on the same sample under the same conditions."""
    from ..bench import load_suite_tasks, score
    from ..llm import Gateway, models_from
    from ..runtime import RunContext, run_design

    suite, extra = _suite_of(store, run_id)
    if suite is None:
        raise ValueError(f"run {run_id!r} has no suite config to regenerate its tasks from")
    name, params = _entry_params(suite, design)
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


def ablate(store: Any, run_id: str, design: str, n: int, library: Any, **kw: Any) -> list[dict[str, Any]]:
    """Synchronous :func:`ablate_async`."""
    return asyncio.run(ablate_async(store, run_id, design, n, library, **kw))


# --------------------------------------------------------------------------- the report


def diagnose(store: Any, run_id: str | None = None, designs: list[str] | None = None, library: Any = None,
             ablate_n: int = 0) -> list[dict[str, Any]]:
    """Every diagnostic for every design of a run (default: the latest run)."""
    from ..library import Library
    from ..store import latest_run
    from .runners import DESIGNERS

    library = library or Library()
    run_id = run_id or latest_run(store)
    if run_id is None:
        raise ValueError("the store has no runs")
    suite, _ = _suite_of(store, run_id)
    labels = [r[0] for r in store.sql("SELECT DISTINCT design FROM results WHERE run_id = ? ORDER BY design",
                                      [run_id])]
    out = []
    for label in labels:
        if designs and label not in designs:
            continue
        name, params = _entry_params(suite, label)
        agg = store.sql("SELECT count(*), avg(CAST(correct AS DOUBLE)), avg(calls), avg(tokens), avg(cost_usd), "
                        "coalesce(bool_or(simulated), false) FROM results WHERE run_id = ? AND design = ?",
                        [run_id, label])[0]
        row: dict[str, Any] = {"run_id": run_id, "design": label, "design_name": name, "n": agg[0],
                               "accuracy": agg[1], "calls_per_task": agg[2], "tokens_per_task": agg[3],
                               "usd_per_task": agg[4], "simulated": bool(agg[5])}
        spec = None if name in DESIGNERS else design_spec(store, library, name)
        if spec is not None:
            st = structure(spec, library, params)
            row.update(kind=spec.kind, nodes=st["nodes"], depth=st["depth"], sequential_depth=st["sequential_depth"],
                       max_fanout=st["max_fanout"], collapse=collapse(spec, library, params or None))
        else:
            row.update(kind="designer" if name in DESIGNERS else None, **_per_task_structure(store, run_id, library))
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


def _per_task_structure(store: Any, run_id: str, library: Any) -> dict[str, Any]:
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


def illusion_table(store: Any, run_id: str | None = None, library: Any = None):
    """The Illusion paper's layout: baselines, expert MAS and automatic MAS, each with accuracy,
    cost per task (search excluded and amortized), cost multiple over CoT-SC@5 and the iso-cost gap
    to the CoT-SC curve; then the CoT-SC curve's own points."""
    import pandas as pd

    from ..library import Library
    from ..store import latest_run
    from .runners import DESIGNERS
    from .views import ensure_views

    library = library or Library()
    run_id = run_id or latest_run(store)
    ensure_views(store)
    suite, _ = _suite_of(store, run_id)
    df = store.df("SELECT * FROM design_cost_search WHERE run_id = ? AND axis = 'all' ORDER BY design", [run_id])
    rows = []
    order = {"baseline": 0, "expert": 1, "automatic": 2}
    for _, r in df.iterrows():
        name, params = _entry_params(suite, r["design"])
        spec = None if name in DESIGNERS else design_spec(store, library, name)
        group = "automatic" if name in DESIGNERS or (spec is not None and spec.kind == "generated") else (
            spec.kind if spec is not None else "expert")
        col = collapse(spec, library, params or None) if spec is not None else None
        rows.append({"group": group, "design": r["design"], "n": int(r["n"]), "accuracy": r["accuracy"],
                     "tokens_excl": r["tokens_search_excluded"], "tokens_amort": r["tokens_search_amortized"],
                     "usd_excl": r["usd_search_excluded"], "usd_amort": r["usd_search_amortized"],
                     "x_sc5_tokens": r["x_sc5_tokens"], "iso_gap_tokens": r["iso_gap_tokens"],
                     "collapse": col})
    curve = store.df("SELECT k, accuracy, tokens, cost_usd, n_tasks FROM cot_sc_curve WHERE run_id = ? AND axis = 'all' "
                     "ORDER BY k", [run_id])
    for _, c in curve.iterrows():
        if int(c["k"]) in (1, 3, 5) or int(c["k"]) == int(curve["k"].max()):
            rows.append({"group": "cot-sc curve", "design": f"CoT-SC@{int(c['k'])}", "n": int(c["n_tasks"]),
                         "accuracy": c["accuracy"], "tokens_excl": c["tokens"], "tokens_amort": c["tokens"],
                         "usd_excl": c["cost_usd"], "usd_amort": c["cost_usd"], "x_sc5_tokens": None,
                         "iso_gap_tokens": 0.0, "collapse": None})
    out = pd.DataFrame(rows)
    if len(out):
        out["_g"] = out["group"].map(lambda g: order.get(g, 3))
        out = out.sort_values(["_g", "design"], kind="stable").drop(columns="_g").reset_index(drop=True)
    return out


__all__ = ["SINGLE_CALL", "ablate", "ablate_async", "approvals", "collapse", "design_spec", "diagnose", "drop_node",
           "illusion_table", "structure", "top_graph", "unanimity", "verifier_choices"]
