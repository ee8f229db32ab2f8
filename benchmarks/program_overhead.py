"""CPU per call that the metering endpoint adds to a program design's calls, beside the gateway's own.

Two ways to make the same N calls (a ``sim/…`` model, no response cache, a per-task token budget so
every call reserves and settles, a call-row sink), 64 in flight, measured as CPU time of THIS
process (``time.process_time``):

- ``gateway``: what a YAML design's node does — :func:`masbench.llm.metered_call` on the gateway;
- ``endpoint``: what a program design's call costs here — the same call arriving as an HTTP request
  at the metering endpoint (aiohttp, 127.0.0.1), parsed, attributed, seeded and metered through the
  same :func:`metered_call`, answered as ``chat.completion`` JSON. The requests come from a load
  generator in another process (an aiohttp client, 64 in flight), so its CPU is not counted here.

Prints the CPU ms per call of each and their difference (what the endpoint adds: the goal is
≤ 0.5 ms), the calls/s, and the median over ``--rounds`` rounds (alternating, so load from other
processes on a shared machine hits both alike).

    .venv/bin/python benchmarks/program_overhead.py [--n 2000] [--concurrency 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from masbench.budget import BudgetMeter  # noqa: E402
from masbench.llm import Gateway, metered_call  # noqa: E402
from masbench.llm.endpoint import MeteringEndpoint  # noqa: E402
from masbench.llm.program_cell import ProgramCell  # noqa: E402
from masbench.spec import Budget, ModelSpec  # noqa: E402

LOADGEN = r"""
import asyncio, json, sys, aiohttp
url, token, n, conc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
async def main():
    todo = iter(range(n))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=conc)) as s:
        async def worker():
            for i in todo:
                body = {"model": "default", "max_tokens": 64,
                        "messages": [{"role": "user", "content": f"What is {i} plus {i % 7}?"}]}
                async with s.post(url, json=body, headers={"Authorization": "Bearer " + token}) as r:
                    assert r.status == 200, await r.text()
                    await r.read()
        await asyncio.gather(*(worker() for _ in range(conc)))
asyncio.run(main())
"""

BUDGET = Budget(per_task_tokens=10**12)


def _gateway(rows: list) -> Gateway:
    return Gateway({"default": ModelSpec(id="sim/p60")}, sink=rows.append)


async def gateway_round(n: int, conc: int) -> tuple[float, float]:
    """(CPU s, wall s) of n metered calls made directly, ``conc`` in flight."""
    rows: list = []
    gw = _gateway(rows)
    meter = BudgetMeter(BUDGET)
    todo = iter(range(n))

    async def worker() -> None:
        for i in todo:
            await metered_call(gw, meter, "default", [{"role": "user", "content": f"What is {i} plus {i % 7}?"}],
                               max_tokens=64, temperature=None, sample_index=i,
                               tags={"run_id": "r", "design": "d", "task_id": "t", "seed": 0, "purpose": "design",
                                     "node": "a", "agent": "a"})

    c0, w0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(conc)))
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    assert len(rows) == n
    await gw.aclose()
    return cpu, wall


async def endpoint_round(ep: MeteringEndpoint, n: int, conc: int) -> tuple[float, float]:
    """(CPU s of this process, wall s) of n calls arriving at the endpoint from another process."""
    rows: list = []
    gw = _gateway(rows)
    cell = ProgramCell(gw, BudgetMeter(BUDGET), tags={"run_id": "r", "design": "d", "task_id": "t", "seed": 0,
                                                     "purpose": "design"},
                       aliases=["default"], agents=[], default_agent="program", max_tokens=64, seed_base=0)
    cell.context = contextvars.copy_context()  # as a program run sets it (each call a task in the cell's context)
    token = ep.grant(cell)
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", LOADGEN, ep.base_url + "/chat/completions",
                                                token, str(n), str(conc))
    # the load generator's start-up (interpreter, aiohttp import) is not counted: wait for the first call
    while not rows:
        await asyncio.sleep(0.001)
        if proc.returncode is not None:
            raise RuntimeError("the load generator failed")
    c0, w0, k0 = time.process_time(), time.perf_counter(), len(rows)
    await proc.wait()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    assert proc.returncode == 0 and len(rows) == n, (proc.returncode, len(rows))
    ep.revoke(cell)
    await gw.aclose()
    done = n - k0
    return cpu * n / done, wall * n / done


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    ep = MeteringEndpoint()
    await ep.start()
    await gateway_round(200, a.concurrency)  # warm-up: imports, the simulator's tables
    await endpoint_round(ep, 200, a.concurrency)
    g, e = [], []
    for _ in range(a.rounds):
        g.append(await gateway_round(a.n, a.concurrency))
        e.append(await endpoint_round(ep, a.n, a.concurrency))
    await ep.aclose()
    gcpu = statistics.median(c for c, _ in g) / a.n * 1000
    ecpu = statistics.median(c for c, _ in e) / a.n * 1000
    gw_rate = a.n / statistics.median(w for _, w in g)
    ep_rate = a.n / statistics.median(w for _, w in e)
    load = os.getloadavg()
    print(f"{a.n} calls x {a.rounds} rounds, {a.concurrency} in flight, sim/p60, load {load[0]:.2f} "
          f"on {os.cpu_count()} cores (median round)")
    print(f"  gateway (a YAML design's call)   {gcpu:6.3f} ms CPU/call   {gw_rate:7.0f} calls/s")
    print(f"  metering endpoint (a program's)  {ecpu:6.3f} ms CPU/call   {ep_rate:7.0f} calls/s  (server side)")
    print(f"  added by the endpoint            {ecpu - gcpu:6.3f} ms CPU/call   goal <= 0.5 ms")
    print(json.dumps({"gateway_ms": round(gcpu, 4), "endpoint_ms": round(ecpu, 4),
                      "added_ms": round(ecpu - gcpu, 4), "load": load[0]}))


if __name__ == "__main__":
    asyncio.run(main())
