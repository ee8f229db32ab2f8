"""A design compiled for one params set: checked, each node compiled by its op, scheduled (its
node directly, the straight-line chain, or a langgraph graph built once), then run on any number
of tasks (:meth:`CompiledDesign.run`)."""

from __future__ import annotations

import time
from typing import Any, Callable

from .. import telemetry
from ..bench.types import TaskInstance
from ..library import Library
from ..spec.design import DesignSpec
from ..spec.problems import SpecError
from .design_analysis import Analysis
from .bind import Binder
from .chain import chain_of
from .ops import op_of
from .ops.base import Node
from .result import assemble
from .scope import SEED_STRIDE, Scope, Shared
from .steps import single
from .types import SCHEDULERS, DesignResult, RunContext

Compile = Callable[[DesignSpec, Library, "dict[str, Any] | None", "tuple[str, ...]"], "CompiledDesign"]
"""How sub-designs are compiled (through the compile cache: :func:`masbench.runtime.cache.compiled`)."""


class CompiledDesign:
    """A design compiled for one params set: its nodes, and how they run — one node directly,
    a straight-line design on its :class:`~masbench.runtime.chain.Chain`, any other shape on the
    langgraph graph (built on first use); :attr:`RunContext.scheduler` may ask for a more general
    one (:data:`~masbench.runtime.types.SCHEDULERS`)."""

    def __init__(self, design: DesignSpec, library: Library, params: dict[str, Any] | None = None,
                 stack: tuple[str, ...] = (), compile_sub: Compile | None = None):
        self.design = design
        self.library = library
        an = Analysis(design, None, library, params)
        if an.problems:
            raise SpecError(an.problems)
        self.analysis = an
        self.params = an.params
        self.name = design.name
        self._stack = stack + (design.name,)
        make = compile_sub or (lambda d, lib, p, s: CompiledDesign(d, lib, p, s))

        def sub_design(name: str, sub_params: dict[str, Any]):
            if name in self._stack:  # pragma: no cover - the checker rejects recursion
                raise SpecError([])
            return make(library.design(name), library, sub_params, self._stack).run_scope

        binder = Binder(an, sub_design)
        self.nodes: dict[str, Node] = {info.key: binder.node(info) for info in an.top.values()}
        """Every node of the design (loop bodies' as ``loop.node``), compiled by its op."""
        for lp in an.loops.values():
            for b in lp.body.values():
                self.nodes[b.key] = binder.node(b)
        out = design.output
        if out not in an.top and out in an.channels:
            out = an.channels[out][0]
        self.output = out
        self.fan_keys = {k for k, n in self.nodes.items() if n.fan} | set(an.channels)
        self.recursion_limit = 0
        """langgraph's recursion limit for this design (set with the graph)."""
        self._graph: Any = None
        self.chain = chain_of(an, self.nodes)
        """The straight-line runner (:mod:`.chain`), None when the design needs the graph."""
        # A design that is one plain agent node (CoT, every CoT-SC pool sample) runs that node's
        # body directly: the one-node graph would add langgraph's ~0.3 ms fixed cost per run and
        # nothing else (same body, same rows, same result).
        only = next(iter(an.top.values())) if len(self.nodes) == 1 else None
        self._direct = self.nodes[only.key] if (only is not None and not an.loops and only.fan is None
                                                and op_of(only.kind).direct and only.spec.into is None) else None
        fits = {"direct": self._direct is not None, "chain": self.chain is not None, "graph": True}
        self.schedulers = tuple(s for s in SCHEDULERS if fits[s])
        """The schedulers that can take this design, simplest first (``graph`` takes every design)."""
        self._pick: dict[str | None, str] = {None: self.schedulers[0]}
        for i, s in enumerate(SCHEDULERS):
            self._pick[s] = next(x for x in SCHEDULERS[i:] if fits[x])

    @property
    def graph(self):
        """The compiled langgraph graph (built on first use: a straight-line design may never need it)."""
        if self._graph is None:
            from .graph import build_graph, recursion_bound  # langgraph: imported by the first design that needs it

            self.recursion_limit = recursion_bound(self.analysis)
            self._graph = build_graph(self.analysis, self.nodes, self.output)
        return self._graph

    async def run(self, task: Any, ctx: RunContext) -> DesignResult:
        """Run on one task (see :func:`masbench.runtime.run_design`)."""
        gold = [str(a) for a in (getattr(task, "answers", None) or [])]
        sh = Shared(ctx)
        sh.task = task if isinstance(task, TaskInstance) else None
        sc = Scope(sh, task.question, gold, list(getattr(task, "skills", None) or []), ctx.seed * SEED_STRIDE)
        return await self.run_scope(sc)

    async def run_scope(self, sc: Scope) -> DesignResult:
        """Run in a given scope (a top-level run, or a sub-design's scope)."""
        with telemetry.workflow(self.name, sc.sh.tags, sc.prefix) as span:
            res = await self._run_scope(sc)
            span.design_result(res)
        return res

    async def _run_scope(self, sc: Scope) -> DesignResult:
        t0 = time.perf_counter()
        error = None
        final: dict | None = None
        sc.sh.begin(sc)
        try:
            how = self._pick[sc.sh.scheduler]
            if how == "direct":
                assert self._direct is not None  # picked only when the design is one plain node
                final = await single(self._direct, {}, sc)
            elif how == "chain":
                assert self.chain is not None  # picked only for a straight-line design
                final = await self.chain.run(sc)
            else:
                graph = self.graph
                final = await graph.ainvoke({}, config={"recursion_limit": self.recursion_limit}, context=sc)
        except Exception as exc:  # noqa: BLE001 - an internal error still yields a result row
            error = f"{type(exc).__name__}: {exc}"[:1000]
        finally:
            usage = sc.sh.end(sc)
        return assemble(self.analysis, sc, final, self.output, self.fan_keys, time.perf_counter() - t0, error, usage)


__all__ = ["CompiledDesign"]
