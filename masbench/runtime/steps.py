"""The node steps every scheduler runs: a plain node, one branch of a fan-out, and a loop's round
controller and exit. Each takes the state and the run's :class:`~masbench.runtime.scope.Scope`
and returns the state update (the node's value; fan-outs append ``(round, index, value)``
entries to a list-reducer key). langgraph calls them through :mod:`.graph` (the scope is its
runtime context), the chain (:mod:`.chain`) and the direct run call them as they are."""

from __future__ import annotations

import time

from .node import run_node
from .ops.base import Node
from .scope import EMPTY, SKIP, Br, Env, Scope, Stats
from .values import Val


def branches(node: Node, state: dict, sc: Scope) -> list[Br]:
    """The branches of a fan-out this round (one marker branch if skipped or empty): the payloads
    the graph sends (:func:`masbench.runtime.graph.sends`) and the chain runs."""
    if node.loop is not None and node.loop in sc.stop:
        return [Br(state, 0, SKIP)]
    assert node.items is not None  # compiled for every fan-out node
    items = node.items(state, sc)
    if not items:
        return [Br(state, 0, EMPTY)]
    if isinstance(items, range):
        return [Br(state, i, None) for i in items]
    return [Br(state, i, it) for i, it in enumerate(items)]


async def single(node: Node, state: dict, sc: Scope) -> dict:
    """A node that runs once per round (or once)."""
    L = node.loop
    if L is not None and L in sc.stop:
        return {}
    val = await run_node(node, sc, Env(state, sc), None)
    if L is not None and not val.present:
        return {}  # a failed round keeps the previous round's value (the best so far)
    if node.into is not None:
        return {node.key: val, node.into: [(0, node.order * 100_000, val)]}
    return {node.key: val}


async def branch(node: Node, br: Br, sc: Scope) -> dict:
    """One branch of a fan-out (its payload is a :class:`~masbench.runtime.scope.Br`)."""
    it = br.item
    if it is SKIP:
        return {}
    key = node.key
    L = node.loop
    r = sc.rounds.get(L, 0) if L is not None else 0
    if it is EMPTY:
        val = Val(status="empty", error="nothing to map over (the upstream list is empty or missing)")
        sc.record(key, val, 0)
        sc.emit(key, node.row_op, node.actor, node.model, Stats(), val, time.perf_counter())
    else:
        val = await run_node(node, sc, Env(br.state, sc, br), br.i)
    if node.into is not None:
        return {key: [(r, br.i, val)], node.into: [(0, node.order * 100_000 + br.i, val)]}
    return {key: [(r, br.i, val)]}


__all__ = ["branch", "branches", "single"]
