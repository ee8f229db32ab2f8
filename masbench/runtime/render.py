"""Render a design as Mermaid text and as a PNG (networkx layout + matplotlib). What a node looks
like is its op's (``label``, ``color``, ``shape``); fan-outs and loops' sub-graphs are drawn here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import networkx as nx

from ..library import Library
from ..spec.design import DesignSpec
from .design_analysis import Analysis, NodeInfo
from .ops import op_of

FAN_COLOR = "#9ec5fe"
"""Fill of a fan-out node (``repeat`` / ``map``), whatever its op."""
IO_COLOR = "#ffffff"
"""Fill of the ``question`` and ``answer`` nodes."""


def _id(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _color(info: NodeInfo) -> str:
    return FAN_COLOR if info.fan else op_of(info.kind).color


def _label(info: NodeInfo) -> str:
    s = info.spec
    what = op_of(info.kind).label(info)
    if info.fan == "repeat":
        what += f" ×{info.k}"
    elif info.fan == "map":
        what += " map " + (s.map or "")
    if s.into:
        what += f" → {s.into}"
    return f"{info.name}<br/>{what}"


def _shape(info: NodeInfo, text: str) -> str:
    t = text.replace('"', "'")
    if info.fan:
        return f'[["{t}"]]'
    left, right = op_of(info.kind).shape
    return f"{left}{t}{right}"


def analyze(design: DesignSpec, library: Library, params: dict | None = None) -> Analysis:
    return Analysis(design, None, library, params)


def mermaid(design: DesignSpec, library: Library, params: dict | None = None) -> str:
    """Mermaid ``flowchart`` text of a design (fan-outs, votes, loops as subgraphs)."""
    an = analyze(design, library, params)
    lines = ["flowchart TD", "  question([question])"]
    out_node = design.output
    for name in an.order:
        info = an.top[name]
        lp = an.loops.get(name)
        if lp is not None:  # a node with a sub-graph (a loop's body)
            cond = f", until {info.spec.loop.until}" if info.spec.loop and info.spec.loop.until else ""
            lines.append(f'  subgraph {_id(name)} ["loop {name}: ≤{lp.max_rounds} rounds{cond}"]')
            for b in lp.body.values():
                lines.append(f"    {_id(b.key)}{_shape(b, _label(b))}")
            for b in lp.body.values():
                for d in sorted(b.deps):
                    lines.append(f"    {_id(lp.body[d].key)} --> {_id(b.key)}")
            roots = [b for b in lp.body.values() if not b.deps]
            readers = set().union(*(b.deps for b in lp.body.values())) if lp.body else set()
            sinks = [b for b in lp.body.values() if b.name not in readers]
            for s in sinks:
                for r in roots:
                    lines.append(f"    {_id(s.key)} -.->|next round| {_id(r.key)}")
            lines.append("  end")
        else:
            lines.append(f"  {_id(name)}{_shape(info, _label(info))}")
    for name in an.order:
        info = an.top[name]
        deps = sorted(d for d in info.deps if d in an.top)
        if not deps:
            lines.append(f"  question --> {_id(name)}")
        for d in deps:
            lines.append(f"  {_id(d)} --> {_id(name)}")
    lines.append("  answer([answer])")
    target = out_node if out_node in an.top else (an.channels.get(out_node) or [out_node])[0]
    lines.append(f"  {_id(target)} --> answer")
    for name in an.order:
        if name not in an.loops:
            lines.append(f"  style {_id(name)} fill:{_color(an.top[name])}")
    return "\n".join(lines) + "\n"


def graph(design: DesignSpec, library: Library, params: dict | None = None) -> nx.DiGraph:
    """The design as a networkx graph: every node (loop bodies flattened as ``loop.node``) plus
    ``question`` and ``answer``; loop back edges are marked ``back=True``."""
    an = analyze(design, library, params)
    g = nx.DiGraph()
    g.add_node("question", kind="io", label="question", color=IO_COLOR)
    for name in an.order:
        info = an.top[name]
        lp = an.loops.get(name)
        if lp is not None:
            for b in lp.body.values():
                g.add_node(b.key, kind=b.fan or b.kind, label=_label(b).replace("<br/>", "\n"), loop=name,
                           color=_color(b))
            for b in lp.body.values():
                for d in b.deps:
                    g.add_edge(lp.body[d].key, b.key)
            roots = [b.key for b in lp.body.values() if not b.deps]
            readers = set().union(*(b.deps for b in lp.body.values()))
            sinks = [b.key for b in lp.body.values() if b.name not in readers]
            for s in sinks:
                for r in roots:
                    if s != r:
                        g.add_edge(s, r, back=True)
            g.graph.setdefault("loops", {})[name] = {"entry": roots, "exit": sinks, "rounds": lp.max_rounds}
        else:
            g.add_node(name, kind=info.fan or info.kind, label=_label(info).replace("<br/>", "\n"),
                       color=_color(info))
    loops = g.graph.get("loops", {})

    def entry(n: str) -> list[str]:
        return loops[n]["entry"] if n in loops else [n]

    def exit_(n: str) -> list[str]:
        return loops[n]["exit"] if n in loops else [n]

    for name in an.order:
        info = an.top[name]
        deps = sorted(d for d in info.deps if d in an.top)
        for tgt in entry(name):
            if not deps:
                g.add_edge("question", tgt)
            for d in deps:
                for src in exit_(d):
                    g.add_edge(src, tgt)
    g.add_node("answer", kind="io", label="answer", color=IO_COLOR)
    out = design.output if design.output in an.top else (an.channels.get(design.output) or [design.output])[0]
    for src in exit_(out):
        g.add_edge(src, "answer")
    return g


def png(design: DesignSpec, library: Library, path: str | Path, params: dict | None = None) -> Path:
    """Draw the design to a PNG file (layered left-to-right layout)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    g = graph(design, library, params)
    dag = nx.DiGraph([(u, v) for u, v, d in g.edges(data=True) if not d.get("back")])
    dag.add_nodes_from(g.nodes)
    for layer, nodes in enumerate(nx.topological_generations(dag)):
        for n in nodes:
            g.nodes[n]["layer"] = layer
    pos = nx.multipartite_layout(g, subset_key="layer", align="vertical")
    pos = {n: (x, -y) for n, (x, y) in pos.items()}
    n_layers = max(d["layer"] for _, d in g.nodes(data=True)) + 1
    width = max(6.0, 2.6 * n_layers)
    height = max(3.0, 1.4 * max(sum(1 for _, d in g.nodes(data=True) if d["layer"] == i) for i in range(n_layers)))
    fig, ax = plt.subplots(figsize=(width, height))
    fwd = [(u, v) for u, v, d in g.edges(data=True) if not d.get("back")]
    back = [(u, v) for u, v, d in g.edges(data=True) if d.get("back")]
    nx.draw_networkx_edges(g, pos, edgelist=fwd, ax=ax, arrows=True, arrowsize=14, node_size=2600,
                           edge_color="#555555")
    nx.draw_networkx_edges(g, pos, edgelist=back, ax=ax, arrows=True, arrowsize=14, node_size=2600, style="dashed",
                           edge_color="#b02a37", connectionstyle="arc3,rad=0.35")
    for n, d in g.nodes(data=True):
        x, y = pos[n]
        ax.text(x, y, d.get("label", n), ha="center", va="center", fontsize=8,
                bbox={"boxstyle": "round,pad=0.4", "fc": d.get("color", IO_COLOR),
                      "ec": "#444444", "ls": "--" if d.get("loop") else "-"})
    ax.set_title(f"{design.name}" + (f" ({design.kind})" if design.kind else ""), fontsize=11)
    ax.axis("off")
    ax.margins(0.15)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return p
