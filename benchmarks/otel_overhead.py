"""What OpenTelemetry export costs on the call path (sim model, zero latency, no cache).

Prints µs per call of ``Gateway.complete`` with telemetry off (the default: one global check),
on with the SDK's in-memory exporter behind the ``BatchSpanProcessor`` a run uses (one ``chat``
span per call), and on with message content captured; and µs per task of a one-node design run
(``cot``: ``invoke_workflow`` → ``invoke_agent`` → ``chat``, three spans). Modes are interleaved
over several repetitions and the median is printed, as the machine may be shared. Run::

    python benchmarks/otel_overhead.py [--n 5000] [--reps 5]

Needs the ``otel`` extra. Goal: off within noise of no telemetry at all; on, a few tens of µs per
span (small beside any real model call's milliseconds).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from masbench import telemetry  # noqa: E402
from masbench.bench.types import TaskInstance  # noqa: E402
from masbench.library import Library  # noqa: E402
from masbench.llm import Gateway  # noqa: E402
from masbench.runtime import RunContext, compile_design  # noqa: E402
from masbench.spec.model import ModelSpec  # noqa: E402

MSGS = [{"role": "system", "content": "You are careful."},
        {"role": "user", "content": "What is 17 + 25? Think step by step. End with \"Answer: <x>\"."}]
TAGS = {"run_id": "bench", "design": "cot", "task_id": "t", "seed": 0, "purpose": "design", "node": "solve",
        "agent": "cot-solver"}
MODES = ("off", "on", "on+content")


def set_mode(mode: str, exp: InMemorySpanExporter | None) -> InMemorySpanExporter | None:
    if mode == "off":
        telemetry.disable()
        return None
    exp = InMemorySpanExporter()
    telemetry.configure(exp, capture_content=mode == "on+content")  # batch: what a run uses
    return exp


async def calls(gw: Gateway, n: int) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        await gw.complete("m", MSGS, max_tokens=64, sample_index=i, tags=TAGS, metadata={"sim": {"gold": ["42"]}})
    return (time.perf_counter() - t0) / n * 1e6


async def designs(gw: Gateway, n: int) -> float:
    lib = Library()
    cd = compile_design("cot", lib)
    tasks = [TaskInstance(id=f"t{i}", source="bench", question="What is 17 + 25?", answers=["42"]) for i in range(n)]
    t0 = time.perf_counter()
    for i, t in enumerate(tasks):
        await cd.run(t, RunContext(gateway=gw, library=lib, tags={**TAGS, "task_id": t.id}, seed=i))
    return (time.perf_counter() - t0) / n * 1e6


async def main(n: int, reps: int) -> None:
    rows: list[str] = []
    gw = Gateway({"m": ModelSpec(id="sim/p60"), "default": ModelSpec(id="sim/p60")}, sink=lambda r: None)
    await calls(gw, 200)  # warm-up
    for label, fn, per in (("gateway.complete", calls, "call"), ("cot design run (3 spans)", designs, "task")):
        got: dict[str, list[float]] = {m: [] for m in MODES}
        for _ in range(reps):
            for mode in MODES:
                exp = set_mode(mode, None)
                gc.collect()
                got[mode].append(await fn(gw, n))
                telemetry.flush()
                if exp is not None:
                    assert len(exp.get_finished_spans()) >= n  # the spans were really made
        med = {m: statistics.median(v) for m, v in got.items()}
        rows.append(f"{label:<26} {med['off']:>9.1f} {med['on']:>9.1f} {med['on+content']:>11.1f}   "
                    f"+{med['on'] - med['off']:.1f} / +{med['on+content'] - med['off']:.1f} µs per {per}")
    telemetry.disable()
    print(f"OpenTelemetry overhead, sim model, {n} sequential calls × {reps} interleaved reps (median), "
          f"in-memory exporter behind a BatchSpanProcessor")
    print(f"{'path':<26} {'off µs':>9} {'on µs':>9} {'content µs':>11}   on − off")
    for r in rows:
        print(r)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    asyncio.run(main(a.n, a.reps))
