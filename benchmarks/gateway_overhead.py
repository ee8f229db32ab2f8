"""Gateway overhead vs bare litellm vs bare openai, against a local OpenAI-compatible server.

The server runs in a separate process (so it does not steal client CPU). For each server latency
(0 ms and 50 ms) and each client, N calls at 64-way concurrency; prints calls/s and client CPU ms
per call. The gateway runs with everything on: durable response cache (all misses: every prompt
is distinct), retries, per-model concurrency limit, cost accounting and call rows batched into
DuckDB. Target: gateway ≥ 0.9× bare litellm calls/s.

    .venv/bin/python benchmarks/gateway_overhead.py [--n 2000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def start_server(latency_ms: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "masbench.testing.openai_server", "--port", "0",
                             "--latency-ms", str(latency_ms)], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    assert line.startswith("READY "), line
    return proc, line.split()[1]


async def bench(label: str, make_call, n: int, conc: int) -> tuple[float, float]:
    sem = asyncio.Semaphore(conc)

    async def one(i: int) -> None:
        async with sem:
            await make_call(i)

    await asyncio.gather(*[one(10**6 + i) for i in range(min(50, n))])  # warm-up; distinct prompts (no cache hits later)
    c0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*[one(i) for i in range(n)])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return n / wall, cpu * 1000 / n


async def main(n: int, conc: int) -> None:
    import openai

    from masbench.llm import Gateway, ResponseCache
    from masbench.llm._litellm import litellm
    from masbench.spec import ModelSpec
    from masbench.store import Store, StoreWriter

    print(f"gateway overhead: {n} calls per client, {conc}-way concurrency, server in its own process")
    print(f"{'latency':>8} {'client':<22} {'calls/s':>9} {'CPU ms/call':>12} {'vs litellm':>11}")
    summary = []
    for latency in (0.0, 50.0):
        proc, base = start_server(latency)
        try:
            tmp = Path(tempfile.mkdtemp())
            spec = ModelSpec(id="openai/bench-model", api_base=base, input_usd_per_mtok=1.0, output_usd_per_mtok=2.0,
                             concurrency=conc)
            store = Store(tmp / "bench.duckdb")
            writer = StoreWriter(store, flush_rows=50_000)
            gw = Gateway({"m": spec}, cache=ResponseCache(tmp / "cache.sqlite", flush_every=512),
                         sink=writer.sink("calls", {"run_id": "bench", "purpose": "bench"}))
            litellm.register_model({"openai/bench-model": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                                           "litellm_provider": "openai", "mode": "chat"}})
            client = openai.AsyncOpenAI(base_url=base, api_key="sk-no-key", max_retries=0)
            run = latency  # make each run's prompts distinct from the other latency's

            async def via_gateway(i: int) -> None:
                r = await gw.complete("m", [{"role": "user", "content": f"gw {run} {i}"}], max_tokens=16, tags={
                    "design": "bench", "task_id": str(i), "seed": 0, "node": "n", "agent": "a"})
                assert r.ok, r.error

            async def via_litellm(i: int) -> None:
                await litellm.acompletion(model="openai/bench-model", api_base=base, api_key="sk-no-key",
                                          messages=[{"role": "user", "content": f"ll {run} {i}"}], max_tokens=16)

            async def via_openai(i: int) -> None:
                await client.chat.completions.create(model="bench-model", max_tokens=16,
                                                     messages=[{"role": "user", "content": f"oa {run} {i}"}])

            rows = {}
            for label, fn in (("bare litellm", via_litellm), ("masbench gateway", via_gateway),
                              ("bare openai.AsyncOpenAI", via_openai)):
                rows[label] = await bench(label, fn, n, conc)
            writer.flush()
            logged = store.sql("SELECT count(*) FROM calls")[0][0]
            ref = rows["bare litellm"][0]
            for label, (rate, cpu) in rows.items():
                print(f"{latency:>6.0f}ms {label:<22} {rate:>9.0f} {cpu:>12.2f} {rate / ref:>10.2f}x")
            summary.append((latency, rows["masbench gateway"][0] / ref))
            print(f"{'':>8} (gateway logged {logged} call rows to DuckDB, cache entries {len(gw.cache)})")
            await client.close()
            store.close()
        finally:
            proc.terminate()
            proc.wait()
    for latency, ratio in summary:
        verdict = "meets" if ratio >= 0.9 else "MISSES"
        print(f"target gateway >= 0.9x bare litellm at {latency:.0f} ms: {ratio:.2f}x ({verdict})")
    print("(2-core machine, noisy ±20%: compare ratios, not absolutes)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    a = ap.parse_args()
    asyncio.run(main(a.n, a.concurrency))
