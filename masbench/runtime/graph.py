"""Build the langgraph ``StateGraph`` of a design from its plans.

Graph shape (one langgraph node per design node, plus):
- a fan-out node (``repeat``/``map``) is fanned out with ``Send`` — one branch per sample / item —
  from its single upstream node, or from a ``<node>#send`` dispatcher when it waits on several;
  branches append ``(round, index, value)`` to a list-reducer key, so parallel writes are safe;
- a loop ``L`` becomes ``L#round`` (the round controller: start a round or exit), its body nodes
  ``L.<name>`` (inlined; the body's sinks lead back to ``L#round``), and ``L`` (the exit node,
  which writes the loop's value). That back edge is the only cycle, and it is bounded;
- several upstream nodes join with a waiting edge (``add_edge([a, b], c)``).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from .design_analysis import Analysis
from .info import LoopInfo
from .plan import Plan
from .scope import Scope
from .steps import branch_step, branches, exit_step, round_step, single_step


def recursion_bound(an: Analysis) -> int:
    """A langgraph recursion limit no valid run of the design can reach."""
    n = 2 * len(an.top) + 4
    for lp in an.loops.values():
        n += (lp.max_rounds + 1) * (2 * len(lp.body) + 2)
    return 2 * n + 10


def sends(p: Plan, state: dict, sc: Scope) -> list[Send]:
    """The branches of a fan-out this round, as ``Send`` s (see :func:`~masbench.runtime.steps.branches`)."""
    key = p.key
    return [Send(key, br) for br in branches(p, state, sc)]


class GraphBuilder:
    """Wires one design's plans into a compiled langgraph graph."""

    def __init__(self, an: Analysis, plans: dict[str, Plan], output: str):
        self.an = an
        self.plans = plans
        self.output = output
        fields: dict[str, Any] = {key: Annotated[list, operator.add] if p.fan else Any for key, p in plans.items()}
        for ch in an.channels:
            fields[ch] = Annotated[list, operator.add]
        # the fields are built at run time, but the functional TypedDict form is typed for a dict literal only
        State = TypedDict("State", fields)  # pyright: ignore[reportArgumentType]  # see above
        self.g: StateGraph[Any, Any, Any, Any] = StateGraph(State)
        self.fan_nodes = {k for k, p in plans.items() if p.fan}

    def build(self):
        an, g = self.an, self.g
        for key, p in self.plans.items():
            if key in an.loops:  # a node with a sub-graph: its round controller, body and exit
                lp = an.loops[key]
                until_plan = self.plans[lp.body[lp.until.node].key] if lp.until is not None and lp.until.node else None
                g.add_node(key, exit_step(p, lp))
                g.add_node(f"{key}#round", round_step(p, lp, until_plan))
            elif p.fan:
                g.add_node(key, branch_step(p))
            else:
                g.add_node(key, single_step(p))
        for name in an.order:
            p = self.plans[name]
            srcs = sorted(d for d in an.top[name].deps if d in an.top)
            if name in an.loops:
                self._edges(srcs, f"{name}#round")
                self._wire_loop(an.loops[name])
            elif p.fan:
                self._fan_edges(p, srcs)
            else:
                self._edges(srcs, name)
        g.add_edge(self.output, END)
        return g.compile()

    def _edges(self, srcs: list[str], target: str) -> None:
        if not srcs:
            self.g.add_edge(START, target)
        elif len(srcs) == 1:
            self.g.add_edge(srcs[0], target)
        else:
            self.g.add_edge(srcs, target)

    def _fan_edges(self, p: Plan, srcs: list[str]) -> None:
        def route(state: dict, runtime: Runtime[Any]) -> list[Send]:
            return sends(p, state, runtime.context)
        route.__name__ = f"send:{p.key}"
        if not srcs:
            self.g.add_conditional_edges(START, route, [p.key])
        elif len(srcs) == 1 and srcs[0] not in self.fan_nodes:
            self.g.add_conditional_edges(srcs[0], route, [p.key])
        else:
            disp = f"{p.key}#send"

            async def dispatch(state: object) -> dict:
                return {}
            self.g.add_node(disp, dispatch)
            self._edges(srcs, disp)
            self.g.add_conditional_edges(disp, route, [p.key])

    def _wire_loop(self, lp: LoopInfo) -> None:
        ctrl = f"{lp.name}#round"
        roots = [b for b in lp.body.values() if not b.deps]
        plain = [b.key for b in roots if b.fan is None]
        fans = [self.plans[b.key] for b in roots if b.fan is not None]
        exit_key = lp.name

        def route(state: dict, runtime: Runtime[Any]) -> list:
            sc: Scope = runtime.context
            if not sc.go.get(exit_key):
                return [exit_key]
            out: list = list(plain)
            for fp in fans:
                out.extend(sends(fp, state, sc))
            return out
        route.__name__ = f"round:{lp.name}"
        self.g.add_conditional_edges(ctrl, route, plain + [f.key for f in fans] + [exit_key])
        readers: set[str] = set()
        for b in lp.body.values():
            readers |= b.deps
            if not b.deps:
                continue
            srcs = sorted(lp.body[d].key for d in b.deps)
            if b.fan is not None:
                self._fan_edges(self.plans[b.key], srcs)
            else:
                self._edges(srcs, b.key)
        self._edges(sorted(b.key for b in lp.body.values() if b.name not in readers), ctrl)


def build_graph(an: Analysis, plans: dict[str, Plan], output: str):
    """The compiled langgraph graph of a design's plans."""
    return GraphBuilder(an, plans, output).build()


__all__ = ["build_graph", "recursion_bound", "sends"]
