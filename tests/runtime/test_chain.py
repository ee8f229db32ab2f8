"""The straight-line shape (:func:`masbench.runtime.chain.straight`, :func:`~masbench.runtime.chain.chain_of`);
that the chain runs every bundled design like langgraph does is tests/runtime/test_compiled.py; a
fan-out's branches torn down together (:func:`~masbench.runtime.chain._gather`)."""

from __future__ import annotations

import asyncio

import pytest

from masbench.library import Library
from masbench.runtime.chain import _gather, chain_of, straight

LIB = Library()


class _I:
    def __init__(self, name: str, deps: set[str]):
        self.name, self.deps = name, deps


def test_straight_orders_by_depth_and_rejects_two_nodes_at_one_depth() -> None:
    # a → b → c, with c also reading a: one node per depth, depth order
    got = straight([_I("c", {"a", "b"}), _I("a", set()), _I("b", {"a"})])  # type: ignore[list-item]
    assert got is not None and [i.name for i in got] == ["a", "b", "c"]
    # a → b, a → c: b and c share depth 1 (they run in parallel in the graph)
    assert straight([_I("a", set()), _I("b", {"a"}), _I("c", {"a"})]) is None  # type: ignore[list-item]
    # two roots
    assert straight([_I("a", set()), _I("b", set())]) is None  # type: ignore[list-item]
    # a dependency outside the group (a loop body reading a top-level node) is ignored
    got = straight([_I("x", {"top"}), _I("y", {"x", "top"})])  # type: ignore[list-item]
    assert got is not None and [i.name for i in got] == ["x", "y"]


def test_a_design_writing_a_channel_runs_on_the_graph() -> None:
    from masbench.runtime.design_analysis import Analysis
    from masbench.runtime.compiled import CompiledDesign
    from masbench.spec import DesignSpec

    d = DesignSpec.model_validate({
        "name": "chan", "agents": {"a": {"name": "a", "model": "default", "prompt": "{question}"}},
        "nodes": {"x": {"agent": "a", "into": "pool"}, "v": {"op": "majority", "from": "pool"}}, "output": "v"})
    an = Analysis(d, None, LIB, None)
    assert an.problems == []
    cd = CompiledDesign(d, LIB)
    assert chain_of(an, cd.nodes) is None and cd.chain is None and cd.schedulers == ("graph",)


def _in_flight(log: list[str], name: str, started: list[str] | None = None):
    """A branch still waiting on its call; cancelled, it cleans up over a few turns of the event loop
    (as closing a connection does) and then logs its name."""
    async def branch() -> str:
        if started is not None:
            started.append(name)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            for _ in range(3):
                await asyncio.sleep(0)
            log.append(name)
            raise
        return name
    return branch()


async def test_when_a_branch_raises_the_others_are_cancelled_and_waited_for() -> None:
    async def fails() -> str:
        await asyncio.sleep(0)
        raise ValueError("boom")

    log: list[str] = []
    with pytest.raises(ValueError, match="boom"):
        await _gather([_in_flight(log, "a"), fails(), _in_flight(log, "b")])
    # both in-flight branches were cancelled, and had finished their cleanup when the error arrived
    assert sorted(log) == ["a", "b"]


async def test_a_fan_out_cancelled_from_outside_cancels_every_branch_and_waits() -> None:
    log: list[str] = []
    started: list[str] = []
    run = asyncio.ensure_future(_gather([_in_flight(log, "a", started), _in_flight(log, "b", started)]))
    while len(started) < 2:
        await asyncio.sleep(0)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert sorted(log) == ["a", "b"]


async def test_branches_that_all_return_come_back_in_branch_order() -> None:
    async def after(turns: int, value: str) -> str:
        for _ in range(turns):
            await asyncio.sleep(0)
        return value
    # the first branch finishes last: the results are still in branch order
    assert await _gather([after(3, "a"), after(0, "b"), after(1, "c")]) == ["a", "b", "c"]
