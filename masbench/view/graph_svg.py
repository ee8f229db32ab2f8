"""A design's graph as inline SVG (no JavaScript): the networkx graph of
:func:`masbench.runtime.render.graph`, laid out in topological layers left to right, each node
boxed with its op label and coloured by the status the cell's ``nodes`` rows give it.

The design is resolved from the run's recorded suite (its label → design name and parameters) in
the library (user roots of ``$MASBENCH_PATH`` and the working directory first, then the bundled
designs). A design the library cannot resolve (a generated one, a ``--lib`` root not given here)
gets no graph; the trace page still lists its nodes.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import networkx as nx

from ..harness.cells import design_entries
from ..library import Library
from ..runtime.render import graph
from ..store import Store, suite_config

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 196, 46, 40, 18, 12
STATUS_STROKE = {"ok": "#2e7d32", "degraded": "#ef8f00", "budget_exhausted": "#ef8f00", "failed": "#c62828",
                 "error": "#c62828", "skipped": "#9e9e9e"}
"""Box outline by node status (anything else: grey)."""


@dataclass(frozen=True)
class Box:
    """A laid-out node."""

    key: str
    """The graph node (a ``nodes.node`` value, or question / answer)."""
    lines: tuple[str, ...]
    """Label lines."""
    x: float
    """Left edge."""
    y: float
    """Top edge."""
    fill: str
    """Fill colour (the op's)."""


@dataclass(frozen=True)
class Layout:
    """The laid-out graph: boxes, forward edges and loop back edges (as box keys), the canvas size."""

    boxes: tuple[Box, ...]
    """Every node."""
    edges: tuple[tuple[str, str], ...]
    """Forward edges."""
    back: tuple[tuple[str, str], ...]
    """Loop back edges (next round)."""
    width: float
    """Canvas width."""
    height: float
    """Canvas height."""


@functools.lru_cache(maxsize=1)
def _library() -> Library:
    return Library()


@functools.lru_cache(maxsize=256)
def _layout(name: str, params_json: str) -> Layout | None:
    try:
        lib = _library()
        g = graph(lib.design(name), lib, json.loads(params_json) or None)
    except Exception:  # noqa: BLE001 - not in this library (generated, another --lib): no graph
        return None
    dag = nx.DiGraph([(u, v) for u, v, d in g.edges(data=True) if not d.get("back")])
    dag.add_nodes_from(g.nodes)
    layers = list(nx.topological_generations(dag))
    boxes = []
    for i, layer in enumerate(layers):
        for j, n in enumerate(sorted(layer)):
            d = g.nodes[n]
            boxes.append(Box(str(n), tuple(str(d.get("label", n)).split("\n"))[:3], PAD + i * (BOX_W + GAP_X),
                             PAD + j * (BOX_H + GAP_Y), str(d.get("color") or "#ffffff")))
    tall = max((len(layer) for layer in layers), default=1)
    edges = tuple((str(u), str(v)) for u, v, d in g.edges(data=True) if not d.get("back"))
    back = tuple((str(u), str(v)) for u, v, d in g.edges(data=True) if d.get("back"))
    return Layout(tuple(boxes), edges, back, 2 * PAD + len(layers) * (BOX_W + GAP_X) - GAP_X,
                  2 * PAD + tall * (BOX_H + GAP_Y) - GAP_Y + (BOX_H if back else 0))


def design_layout(store: Store, run: str, design: str) -> Layout | None:
    """The laid-out graph of ``design`` (a run's label), or None if it cannot be resolved."""
    suite, _ = suite_config(store, run)
    if suite is None:
        return None
    try:
        entry = next((e for e in design_entries(suite) if e.label == design), None)
    except ValueError:
        return None
    if entry is None:
        return None
    return _layout(entry.name, json.dumps(entry.params, sort_keys=True, default=str))


def _status_of(statuses: dict[str, list[str]], key: str) -> str | None:
    got = statuses.get(key) or [s for k, v in statuses.items() if k.startswith(key + ".") for s in v]
    if not got:
        return None
    for worst in ("failed", "error", "budget_exhausted", "degraded"):
        if worst in got:
            return worst
    return got[0]


def svg(layout: Layout, nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """What the template draws: boxes with their status and stroke, edge paths, the canvas size."""
    statuses: dict[str, list[str]] = {}
    for n in nodes:
        statuses.setdefault(str(n["node"]), []).append(str(n["status"]))
    at = {b.key: b for b in layout.boxes}
    boxes = []
    for b in layout.boxes:
        st = _status_of(statuses, b.key)
        runs = len(statuses.get(b.key, []))
        boxes.append({"box": b, "status": st, "stroke": STATUS_STROKE.get(st or "", "#757575"),
                      "runs": runs})
    paths = []
    for u, v in layout.edges:
        a, b = at[u], at[v]
        x1, y1, x2, y2 = a.x + BOX_W, a.y + BOX_H / 2, b.x, b.y + BOX_H / 2
        mx = (x1 + x2) / 2
        paths.append({"d": f"M{x1:.0f},{y1:.0f} C{mx:.0f},{y1:.0f} {mx:.0f},{y2:.0f} {x2 - 2:.0f},{y2:.0f}",
                      "back": False})
    for u, v in layout.back:
        a, b = at[u], at[v]
        x1, y1, x2, y2 = a.x + BOX_W / 2, a.y + BOX_H, b.x + BOX_W / 2, b.y + BOX_H
        low = max(y1, y2) + BOX_H * 0.8
        d = (f"M{x1:.0f},{y1:.0f} C{x1 + 40:.0f},{low:.0f} {x2 - 40:.0f},{low:.0f} {x2:.0f},{y2 + 2:.0f}"
             if u != v else f"M{x1 - 20:.0f},{y1:.0f} C{x1 - 40:.0f},{low:.0f} {x1 + 40:.0f},{low:.0f} {x1 + 20:.0f},{y1 + 2:.0f}")
        paths.append({"d": d, "back": True})
    return {"boxes": boxes, "paths": paths, "width": layout.width, "height": layout.height, "w": BOX_W, "h": BOX_H}


__all__ = ["Box", "Layout", "STATUS_STROKE", "design_layout", "svg"]
