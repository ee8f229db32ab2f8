"""Running a straight-line design without langgraph.

A design is *straight-line* when its nodes, ordered by depth (a node's depth is one more than its
deepest dependency's), have one node per depth — at top level and inside every loop body — and it
writes no shared channel (``into``). A fan-out (``repeat``/``map``) counts as one node: its
branches run concurrently, as they do in the graph. Most bundled designs have this shape: CoT-SC
(samples → vote), Self-Refine (draft → loop(critic → revise)), step-back, Reflexion, debate...

For such a design the langgraph schedule is fixed: one node (or one fan-out's branches) per
superstep, in depth order, each reading the state every earlier step wrote. :class:`Chain` runs
exactly that schedule with the *same* nodes and steps the graph is built from (:mod:`.steps`), so
a node sees the same state, makes the same calls with the same sample indices and records the same
rows; what it skips is langgraph's per-run and per-step machinery (checkpoints, channels, task
preparation, callbacks), most of a node's runtime overhead. ``tests/runtime/test_compiled.py``
runs every bundled design under both and compares rows and results.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .design_analysis import Analysis
from .info import LoopInfo, NodeInfo
from .ops.base import Node
from .ops.loop import LoopNode
from .scope import Scope
from .steps import branch, branches, single

def straight(infos: list[NodeInfo]) -> list[NodeInfo] | None:
    """The nodes in depth order if there is one per depth (``deps`` outside ``infos`` ignored), else None."""
    names = {i.name for i in infos}
    by_name = {i.name: i for i in infos}
    depth: dict[str, int] = {}

    def of(name: str) -> int:
        if name not in depth:
            deps = [d for d in by_name[name].deps if d in names and d != name]
            depth[name] = 1 + max((of(d) for d in deps), default=-1)
        return depth[name]

    levels = sorted((of(i.name), i.name) for i in infos)
    if len({d for d, _ in levels}) != len(levels):
        return None
    return [by_name[n] for _, n in levels]


class _Node:
    """One depth of a straight-line run: a plain node or a fan-out."""

    def __init__(self, node: Node):
        self.node = node

    async def run(self, state: dict[str, Any], sc: Scope) -> None:
        n = self.node
        if not n.fan:
            _apply(state, await single(n, dict(state), sc), ())
            return
        # the fan-out's branches: decided on the state as it is now (what the graph's routing
        # edge sees), run concurrently, their appends applied in branch order
        brs = branches(n, dict(state), sc)
        if len(brs) == 1:
            outs = [await branch(n, brs[0], sc)]
        else:
            outs = await _gather([branch(n, br, sc) for br in brs])
        for out in outs:
            _apply(state, out, (n.key,))


class _Loop:
    """A loop at one depth: round controller, the body's nodes in depth order, then the exit."""

    def __init__(self, loop: LoopNode, body: list[_Node]):
        self.loop = loop
        self.body = body

    async def run(self, state: dict[str, Any], sc: Scope) -> None:
        go = sc.go
        name = self.loop.key
        while True:
            await self.loop.round(dict(state), sc)
            if not go.get(name):
                break
            for node in self.body:
                await node.run(state, sc)
        _apply(state, await self.loop.exit(dict(state), sc), ())


async def _gather(coros: list) -> list:
    """Run branch coroutines concurrently; if one raises, cancel the rest (as the graph does)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _apply(state: dict[str, Any], update: dict[str, Any], appended: tuple[str, ...]) -> None:
    """Apply one step's state update: fan-out keys append (the graph's list reducer), others replace."""
    for k, v in update.items():
        if k in appended:
            state[k] = state.get(k, []) + v
        else:
            state[k] = v


class Chain:
    """A straight-line design's runner (build with :func:`chain_of`, None when the shape does not fit)."""

    def __init__(self, steps: list[_Node | _Loop]):
        self.steps = steps

    async def run(self, sc: Scope) -> dict[str, Any]:
        """Run every node in depth order; the final state (what ``graph.ainvoke`` returns)."""
        state: dict[str, Any] = {}
        for step in self.steps:
            await step.run(state, sc)
        return state


def chain_of(an: Analysis, nodes: dict[str, Node]) -> Chain | None:
    """The :class:`Chain` of a design, or None if it is not straight-line (or writes a channel)."""
    if an.channels:
        return None
    top = straight(list(an.top.values()))
    if top is None:
        return None
    steps: list[_Node | _Loop] = []
    for info in top:
        n = nodes[info.key]
        if info.name in an.loops:  # a node with a sub-graph
            assert isinstance(n, LoopNode)
            loop = _loop(an.loops[info.name], n, nodes)
            if loop is None:
                return None
            steps.append(loop)
        else:
            steps.append(_Node(n))
    return Chain(steps)


def _loop(lp: LoopInfo, n: LoopNode, nodes: dict[str, Node]) -> _Loop | None:
    body = straight(list(lp.body.values()))
    if body is None:
        return None
    return _Loop(n, [_Node(nodes[b.key]) for b in body])


__all__ = ["Chain", "chain_of", "straight"]
