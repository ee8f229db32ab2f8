"""Per-node overhead of the graph runtime over bare gateway calls (sim model, zero latency).

For each shape, the same model calls are made three times: bare (``gateway.complete`` in a loop,
or ``asyncio.gather`` for fan-outs), through ``run_design`` (a straight-line shape — every shape
here — runs on :mod:`masbench.runtime.chain`), and through ``run_design`` with every design forced
onto langgraph. The difference per node execution is the runtime's overhead: scheduling, template
rendering, budget checks, answer extraction, node rows. Beside it: bare langgraph running the same
shape with trivial nodes, and the same bare langgraph whose nodes make the bare gateway calls
(a hand-written langgraph app doing the same calls). "ours on graph" subtracts bare langgraph and
the bare calls timed apart, which assumes their costs add up; on a 2-core VM they do not — run in
turn, each evicts the other's code and data from the CPU caches, so the pair costs more than its
parts, with no code of ours involved. "ours on lg+calls" subtracts the calling graph instead: what
the runtime adds to a langgraph app making the same calls. Run::

    python benchmarks/runtime_overhead.py [--tasks 300] [--budget] [--clock wall|cpu]

Reference (bare langgraph on a 2-core machine): langgraph alone ≈ 0.43 ms per run + 0.19 ms per
chained node + 0.16 ms per Send branch. Target: ≤ 200 µs per node on top of the gateway, every shape.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from masbench.bench.types import TaskInstance  # noqa: E402
from masbench.library import Library  # noqa: E402
from masbench.llm import Gateway  # noqa: E402
from masbench.runtime import RunContext, compile_design, run_design  # noqa: E402
from masbench.spec import Budget, DesignSpec  # noqa: E402
from masbench.spec.model import ModelSpec  # noqa: E402

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = time.perf_counter
"""What a measurement times (``--clock``): wall time, or this process's CPU time (everything here
runs in this process at zero latency, so on an idle machine they agree; on a shared one CPU is the
figure that means something)."""

AGENT = {"name": "a", "model": "default", "prompt": "{question}\nThink step by step. End with \"Answer: <x>\".",
         "max_tokens": 256}


def chain(n: int) -> DesignSpec:
    nodes: dict = {"n0": {"agent": "a"}}
    for i in range(1, n):
        nodes[f"n{i}"] = {"agent": "a", "from": [f"n{i - 1}"]}
    return DesignSpec.model_validate({"name": f"chain{n}", "agents": {"a": AGENT}, "nodes": nodes,
                                      "output": f"n{n - 1}"})


def fan(k: int) -> DesignSpec:
    return DesignSpec.model_validate({"name": f"fan{k}", "agents": {"a": AGENT},
                                      "nodes": {"s": {"agent": "a", "repeat": k}, "v": {"op": "majority", "from": "s"}},
                                      "output": "v"})


def task(i: int) -> TaskInstance:
    return TaskInstance(id=f"t{i}", source="bench", question=f"What is {i} + 4?", answers=[str(i + 4)])


async def bare(gw: Gateway, shape: str, size: int, tasks: list[TaskInstance]) -> float:
    t0 = clock()
    for t in tasks:
        msgs = [{"role": "user", "content": AGENT["prompt"].replace("{question}", t.question)}]
        meta = {"sim": {"gold": t.answers, "skills": [], "mode": "answer"}}
        if shape == "chain":
            for i in range(size):
                await gw.complete("default", msgs, sample_index=i, max_tokens=256, tags={"node": f"n{i}"},
                                  metadata=meta)
        else:
            await asyncio.gather(*(gw.complete("default", msgs, sample_index=i, max_tokens=256, tags={"node": "s"},
                                               metadata=meta) for i in range(size)))
    return clock() - t0


def bare_langgraph(shape: str, size: int) -> Any:
    """The same graph shape in plain langgraph with trivial nodes: langgraph's own share (its
    state type is built at run time, so its ``ainvoke`` is not checked)."""
    import operator
    from typing import Annotated, Any, TypedDict

    from langgraph.graph import START, StateGraph
    from langgraph.types import Send

    if shape == "chain":
        S = TypedDict("S", {f"n{i}": Any for i in range(size)})  # type: ignore[misc]
        g = StateGraph(S)
        for i in range(size):
            async def node(state: dict, i: int = i) -> dict:
                return {f"n{i}": i}
            g.add_node(f"n{i}", node)  # pyright: ignore[reportArgumentType]  # S is built at run time
            g.add_edge(START if i == 0 else f"n{i - 1}", f"n{i}")
    else:
        S = TypedDict("S", {"s": Annotated[list, operator.add], "v": Any})  # type: ignore[misc]
        g = StateGraph(S)

        async def s(i: int) -> dict:
            return {"s": [i]}

        async def v(state: dict) -> dict:
            return {"v": len(state["s"])}
        g.add_node("s", s)  # pyright: ignore[reportArgumentType]  # S is built at run time
        g.add_node("v", v)  # pyright: ignore[reportArgumentType]  # S is built at run time
        g.add_conditional_edges(START, lambda st: [Send("s", i) for i in range(size)], ["s"])
        g.add_edge("s", "v")
    return g.compile()


async def langgraph_only(shape: str, size: int, n: int) -> float:
    graph = bare_langgraph(shape, size)
    t0 = clock()
    for _ in range(n):
        await graph.ainvoke({})
    return clock() - t0


def langgraph_calling(gw: Gateway, shape: str, size: int) -> Any:
    """:func:`bare_langgraph` whose nodes make the bare gateway calls (:func:`bare`'s, same
    arguments): a hand-written langgraph app doing the same work, without the runtime."""
    import operator
    from typing import Annotated, TypedDict

    from langgraph.graph import START, StateGraph
    from langgraph.types import Send

    async def call(state: dict, i: int, node: str) -> None:
        await gw.complete("default", state["msgs"], sample_index=i, max_tokens=256, tags={"node": node},
                          metadata=state["meta"])

    if shape == "chain":
        S = TypedDict("S", {"msgs": Any, "meta": Any, **{f"n{i}": Any for i in range(size)}})  # type: ignore[misc]
        g = StateGraph(S)
        for i in range(size):
            async def node(state: dict, i: int = i) -> dict:
                await call(state, i, f"n{i}")
                return {f"n{i}": i}
            g.add_node(f"n{i}", node)  # pyright: ignore[reportArgumentType]  # S is built at run time
            g.add_edge(START if i == 0 else f"n{i - 1}", f"n{i}")
    else:
        S = TypedDict("S", {"msgs": Any, "meta": Any, "s": Annotated[list, operator.add],  # type: ignore[misc]
                            "v": Any})
        g = StateGraph(S)

        async def s(br: tuple[int, dict]) -> dict:
            await call(br[1], br[0], "s")
            return {"s": [br[0]]}

        async def v(state: dict) -> dict:
            return {"v": len(state["s"])}
        g.add_node("s", s)  # pyright: ignore[reportArgumentType]  # S is built at run time
        g.add_node("v", v)  # pyright: ignore[reportArgumentType]  # S is built at run time
        g.add_conditional_edges(START, lambda st: [Send("s", (i, st)) for i in range(size)], ["s"])
        g.add_edge("s", "v")
    return g.compile()


async def langgraph_with_calls(gw: Gateway, shape: str, size: int, tasks: list[TaskInstance]) -> float:
    """:func:`langgraph_calling` on every task: what the via-graph run does without the runtime."""
    graph = langgraph_calling(gw, shape, size)
    t0 = clock()
    for t in tasks:
        await graph.ainvoke({"msgs": [{"role": "user", "content": AGENT["prompt"].replace("{question}", t.question)}],
                             "meta": {"sim": {"gold": t.answers, "skills": [], "mode": "answer"}}})
    return clock() - t0


async def runtime(gw: Gateway, lib: Library, design: DesignSpec | str, tasks: list[TaskInstance],
                  budget: Budget | None, params: dict | None = None, scheduler: str | None = None) -> tuple[float, int]:
    rows: list[Any] = []
    ctx = RunContext(gateway=gw, library=lib, budget=budget, tags={"run_id": "bench", "design": "d", "seed": 0},
                     node_sink=rows.append, scheduler=scheduler)
    compile_design(design if isinstance(design, DesignSpec) else lib.design(design), lib, params)  # warm the cache
    t0 = clock()
    for t in tasks:
        r = await run_design(design, t, ctx, params)
        assert r.status in ("ok", "degraded"), (r.status, r.error)
    return clock() - t0, len(rows)


async def via_graph(gw: Gateway, lib: Library, design: DesignSpec | str, tasks: list[TaskInstance],
                    budget: Budget | None) -> tuple[float, int]:
    """:func:`runtime` with every design scheduled by langgraph."""
    return await runtime(gw, lib, design, tasks, budget, scheduler="graph")


async def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--tasks", type=int, default=300, help="tasks per measurement")
    ap.add_argument("--repeats", type=int, default=3, help="take the median of this many measurements")
    ap.add_argument("--budget", action="store_true", help="also measure with a token budget (worst-case checks)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="time wall clock, or this process's CPU time (use cpu on a shared machine)")
    args = ap.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    gw = Gateway({"default": ModelSpec(id="sim/perfect", input_usd_per_mtok=0.1, output_usd_per_mtok=0.4)})
    lib = Library()
    tasks = [task(i) for i in range(args.tasks)]
    budgets: list[tuple[str, Budget | None]] = [("no budget", None)]
    if args.budget:
        budgets.append(("token+usd budget", Budget(per_task_tokens=10**7, per_task_usd=100.0)))
    shapes = [("chain", 1), ("chain", 4), ("chain", 8), ("fan", 5), ("fan", 16)]
    print(f"runtime overhead over bare gateway calls — sim/perfect, zero latency, {args.tasks} tasks, "
          f"median of {args.repeats}, {args.clock} clock")
    print(f"{'shape':<18}{'budget':<18}{'bare µs/call':>14}{'runtime µs/run':>16}{'overhead µs/node':>18}"
          f"{'bare langgraph µs/node':>24}{'via graph µs/node':>19}{'ours on graph µs/node':>23}"
          f"{'ours on lg+calls µs/node':>26}")
    # warm up imports, caches, litellm
    await bare(gw, "chain", 2, tasks[:20])
    await runtime(gw, lib, chain(2), tasks[:20], None)
    worst = worst_graph = worst_ours = worst_calls = 0.0
    for shape, size in shapes:
        d = chain(size) if shape == "chain" else fan(size)
        for label, budget in budgets:
            b_times, r_times, g_times, l_times, m_times, nodes = [], [], [], [], [], 0
            for _ in range(args.repeats):
                gc.collect()
                l_times.append(await langgraph_only(shape, size, len(tasks)))
                gc.collect()
                b_times.append(await bare(gw, shape, size, tasks))
                gc.collect()
                m_times.append(await langgraph_with_calls(gw, shape, size, tasks))
                gc.collect()
                rt, nrows = await runtime(gw, lib, d, tasks, budget)
                r_times.append(rt)
                nodes = nrows // len(tasks)
                gc.collect()
                g_times.append((await via_graph(gw, lib, d, tasks, budget))[0])
            b, r, lg = statistics.median(b_times), statistics.median(r_times), statistics.median(l_times)
            per_call = b / (len(tasks) * size) * 1e6
            per_run = r / len(tasks) * 1e6
            over = (r - b) / (len(tasks) * nodes) * 1e6
            graph_over = (statistics.median(g_times) - b) / (len(tasks) * nodes) * 1e6
            lg_node = lg / (len(tasks) * nodes) * 1e6
            calls_over = (statistics.median(g_times) - statistics.median(m_times)) / (len(tasks) * nodes) * 1e6
            print(f"{shape + str(size):<18}{label:<18}{per_call:>14.0f}{per_run:>16.0f}{over:>18.0f}"
                  f"{lg_node:>24.0f}{graph_over:>19.0f}{graph_over - lg_node:>23.0f}{calls_over:>26.0f}")
            worst = max(worst, over)
            worst_graph = max(worst_graph, graph_over)
            worst_ours = max(worst_ours, graph_over - lg_node)
            worst_calls = max(worst_calls, calls_over)
    print("\noverhead = (runtime − bare gateway) per node execution; bare langgraph = the same graph shape "
          "with trivial nodes in plain langgraph; via graph = the runtime's overhead with every design forced "
          "onto langgraph (what a design with parallel nodes pays); ours on graph = via graph − bare langgraph; "
          "ours on lg+calls = (via-graph run − bare langgraph whose nodes make the bare calls) per node. "
          "A one-node agent design runs its node directly, a straight-line one (one node or fan-out per depth) "
          "on the chain runner.")
    print(f"target ≤ 200 µs per node on top of the gateway: worst shape {worst:.0f} µs "
          f"({'meets' if worst <= 200 else 'MISSES'}); via langgraph {worst_graph:.0f} µs "
          f"({'meets' if worst_graph <= 200 else 'MISSES'}); on top of bare langgraph at most {worst_ours:.0f} µs "
          f"({'meets' if worst_ours <= 200 else 'MISSES'}), {worst_calls:.0f} µs on top of bare langgraph making the "
          f"calls ({'meets' if worst_calls <= 200 else 'MISSES'})")
    print("\nlibrary designs (runtime µs per task; sim/perfect):")
    for name in ("cot", "cot-sc", "debate", "planner-workers", "decompose-calculator-aggregate"):
        rt, nrows = await runtime(gw, lib, name, tasks, None)
        print(f"  {name:<40}{rt / len(tasks) * 1e6:>10.0f} µs/task  {nrows / len(tasks):.0f} node executions")


if __name__ == "__main__":
    asyncio.run(main())
