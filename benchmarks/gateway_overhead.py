"""The anchors side by side, in one run: bare litellm, bare ``openai.AsyncOpenAI``, and the masbench
gateway on each client (``client: litellm`` and ``client: openai``; the latter on the SDK's aiohttp
transport, so bare ``AsyncOpenAI`` on that transport is printed too), against our local
OpenAI-compatible server; then ``masbench run`` end to end on each client. ``client: litellm`` sends
the calls litellm would send unchanged through the SDK (``masbench/llm/litellm_sdk.py``); the rows
marked ``sdk_wire off`` are that client with every call through ``litellm.acompletion`` (what a
provider litellm alone speaks — Gemini, Bedrock — costs). The ``anthropic:`` rows do the same on
Anthropic's Messages wire (an ``anthropic/…`` model against the same server's ``/v1/messages``):
bare ``litellm.acompletion``, bare ``AsyncAnthropic`` (aiohttp transport), and the gateway on
``client: litellm`` with its Anthropic SDK path (``masbench/llm/anthropic_sdk.py``) and with
``sdk_wire`` off; their "vs litellm" is against bare litellm on that wire, as is the ``masbench run``
of the ``anthropic`` rows.

The server runs in a separate process (it does not steal the client's CPU). For each server latency
(0 ms and 50 ms) and each client: N calls at 64-way concurrency; prints calls/s, client CPU ms per
call and the ratios to bare litellm and to bare AsyncOpenAI. The gateway runs with everything on:
durable response cache (all misses: every prompt is distinct), retries, health, per-model
concurrency limit, cost accounting and call rows batched into DuckDB. The clients are measured
round-robin in ``--rounds`` rounds of N/rounds calls each (the median round counts), so a burst of
load from another process on this shared machine hits all of them alike.

``masbench run``: a CoT-only suite (``designs: [cot]``, no CoT-SC pool, 64 cells in flight, default
transcripts and cache, a fresh store) on each client, timed in-process from the run's start to its
end (interpreter start and imports, langgraph's included, excluded), calls/s = the run's ``calls`` rows / wall, compared
with bare litellm's calls/s at the same latency.

Goals: gateway on the openai client ≥ 2.0× bare litellm and ≥ 0.9× bare AsyncOpenAI at 0 and 50 ms;
``masbench run`` on the openai client ≥ 1.8× bare litellm, on the litellm client ≥ 1.0× (on either
wire). The figures and the load average go to ``--json`` (default benchmarks/results/gateway_overhead.json).

    .venv/bin/python benchmarks/gateway_overhead.py [--n 2000] [--concurrency 64] [--tasks 2000] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Literal

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

Call = Callable[[int], Awaitable[Any]]
GATEWAY_LITELLM, GATEWAY_OPENAI = "gateway, client: litellm", "gateway, client: openai"
GATEWAY_LITELLM_ONLY = "gateway, litellm, sdk_wire off"  # every call through litellm.acompletion
BARE_LITELLM, BARE_OPENAI = "bare litellm.acompletion", "bare openai.AsyncOpenAI"
BARE_OPENAI_AIO = "bare AsyncOpenAI, aiohttp"  # the transport the gateway's openai client uses
# the Anthropic Messages wire (anthropic/… against the same server's /v1/messages)
BARE_LITELLM_ANTH, BARE_ANTH_AIO = "anthropic: bare litellm", "anthropic: bare AsyncAnthropic"
GATEWAY_ANTH, GATEWAY_ANTH_ONLY = "anthropic: gateway, litellm", "anthropic: gw, sdk_wire off"
ANTHROPIC_ROWS = (BARE_LITELLM_ANTH, BARE_ANTH_AIO, GATEWAY_ANTH, GATEWAY_ANTH_ONLY)
"""Gateway-table rows of the Anthropic wire: their "vs litellm" is against bare litellm on that wire."""
ANTHROPIC_MODEL = "anthropic/claude-haiku-4-5"
KEY_ENV = "MASBENCH_BENCH_KEY"  # the local server's placeholder key (it checks none)
os.environ.setdefault(KEY_ENV, "sk-bench-local")
E2E_CLIENTS = {"litellm": ("openai/bench-model", "litellm"), "openai": ("openai/bench-model", "openai"),
               "litellm, sdk_wire off": ("openai/bench-model", "litellm, sdk_wire: false"),
               "anthropic, litellm": (ANTHROPIC_MODEL, "litellm"),
               "anthropic, litellm, sdk_wire off": (ANTHROPIC_MODEL, "litellm, sdk_wire: false")}
"""``masbench run`` rows: label → the model id and its YAML ``client`` (and ``sdk_wire``)."""

SUITE = """name: gateway-e2e
description: CoT-only suite against the local server (benchmark)
models:
  default: {{id: {model}, api_base: "{base}", client: {client}, price: 0, concurrency: {conc}, api_key_env: {key}}}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: {half}, seed: 0}}
designs: [cot]
cot_sc: {{enabled: false}}
concurrency: {conc}
store: {store}
"""


def bare_litellm_of(label: str) -> str:
    """The bare-litellm row a row is compared with: the one on its own wire."""
    return BARE_LITELLM_ANTH if label in ANTHROPIC_ROWS or label.startswith("anthropic") else BARE_LITELLM


def start_server(latency_ms: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "masbench.testing.openai_server", "--port", "0",
                             "--latency-ms", str(latency_ms)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line.startswith("READY "), line
    return proc, line.split()[1]


async def bench(make_call: Call, lo: int, hi: int, conc: int) -> tuple[float, float]:
    """(wall s, CPU s) of calls ``lo`` … ``hi - 1`` at ``conc``-way concurrency."""
    sem = asyncio.Semaphore(conc)

    async def one(i: int) -> None:
        async with sem:
            await make_call(i)

    c0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*[one(i) for i in range(lo, hi)])
    return time.perf_counter() - t0, time.process_time() - c0


async def gateway_table(latency: float, n: int, conc: int, rounds: int) -> dict[str, tuple[float, float]]:
    """label → (calls/s, CPU ms per call) at one server latency."""
    import anthropic
    import openai

    from masbench.llm import Gateway, ResponseCache
    from masbench.llm._litellm import litellm
    from masbench.llm.anthropic_sdk import http_transport as anthropic_transport
    from masbench.llm.openai_backend import http_transport
    from masbench.spec import ModelSpec
    from masbench.store import Store, StoreWriter

    proc, base = start_server(latency)
    try:
        tmp = Path(tempfile.mkdtemp())
        store = Store(tmp / "bench.duckdb")
        writer = StoreWriter(store, flush_rows=50_000)
        gateways = {}
        kinds: tuple[tuple[str, Literal["litellm", "openai"], bool], ...] = (
            ("litellm", "litellm", True), ("openai", "openai", True), ("litellm-only", "litellm", False))
        root = base[: -len("/v1")]  # litellm and the anthropic SDK add /v1/messages
        for name, client, sdk_wire in kinds + (("anthropic", "litellm", True), ("anthropic-only", "litellm", False)):
            anth = name.startswith("anthropic")
            spec = ModelSpec(id=ANTHROPIC_MODEL if anth else "openai/bench-model", api_base=root if anth else base,
                             input_usd_per_mtok=1.0, output_usd_per_mtok=2.0, concurrency=conc, client=client,
                             sdk_wire=sdk_wire, api_key_env=KEY_ENV if anth else None)
            gateways[name] = Gateway({"m": spec}, cache=ResponseCache(tmp / f"cache-{name}.sqlite", flush_every=512),
                                     sink=writer.sink("calls", {"run_id": name, "purpose": "bench"}))
        litellm.register_model({"openai/bench-model": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                                       "litellm_provider": "openai", "mode": "chat"}})
        sdk = openai.AsyncOpenAI(base_url=base, api_key="sk-no-key", max_retries=0)
        sdk_aio = openai.AsyncOpenAI(base_url=base, api_key="sk-no-key", max_retries=0, http_client=http_transport())
        anth_aio = anthropic.AsyncAnthropic(base_url=root, api_key=os.environ[KEY_ENV], max_retries=0,
                                            http_client=anthropic_transport())
        tag = f"{latency:g}"  # prompts distinct across latencies and clients: no cache hits

        def via_gateway(client: str) -> Call:
            gw = gateways[client]

            async def call(i: int) -> None:
                r = await gw.complete("m", [{"role": "user", "content": f"gw {client} {tag} {i}"}], max_tokens=16,
                                      tags={"design": "bench", "task_id": str(i), "seed": 0, "node": "n", "agent": "a"})
                assert r.ok, r.error
            return call

        async def via_litellm(i: int) -> None:
            await litellm.acompletion(model="openai/bench-model", api_base=base, api_key="sk-no-key",
                                      messages=[{"role": "user", "content": f"ll {tag} {i}"}], max_tokens=16)

        async def via_litellm_anth(i: int) -> None:
            await litellm.acompletion(model=ANTHROPIC_MODEL, api_base=root, api_key=os.environ[KEY_ENV],
                                      messages=[{"role": "user", "content": f"lla {tag} {i}"}], max_tokens=16)

        async def via_anth_sdk(i: int) -> None:
            await anth_aio.messages.create(model=ANTHROPIC_MODEL.split("/", 1)[1], max_tokens=16,
                                           messages=[{"role": "user", "content": f"an {tag} {i}"}])

        def via_sdk(client: Any, name: str) -> Call:
            async def call(i: int) -> None:
                await client.chat.completions.create(model="bench-model", max_tokens=16,
                                                     messages=[{"role": "user", "content": f"{name} {tag} {i}"}])
            return call

        clients: dict[str, Call] = {BARE_LITELLM: via_litellm, BARE_OPENAI: via_sdk(sdk, "oa"),
                                    BARE_OPENAI_AIO: via_sdk(sdk_aio, "oa-aio"),
                                    GATEWAY_LITELLM: via_gateway("litellm"), GATEWAY_OPENAI: via_gateway("openai"),
                                    GATEWAY_LITELLM_ONLY: via_gateway("litellm-only"),
                                    BARE_LITELLM_ANTH: via_litellm_anth, BARE_ANTH_AIO: via_anth_sdk,
                                    GATEWAY_ANTH: via_gateway("anthropic"),
                                    GATEWAY_ANTH_ONLY: via_gateway("anthropic-only")}
        for fn in clients.values():  # warm-up: connections, imports, first-call set-up
            await bench(fn, 10**7, 10**7 + min(64, n), conc)
        per_round = max(n // rounds, 1)
        samples: dict[str, list[tuple[float, float]]] = {k: [] for k in clients}
        for r in range(rounds):
            for label, fn in clients.items():
                wall, cpu = await bench(fn, r * per_round, (r + 1) * per_round, conc)
                samples[label].append((per_round / wall, cpu * 1000 / per_round))
        writer.flush()
        logged = store.sql("SELECT run_id, count(*) FROM calls GROUP BY ALL ORDER BY 1")
        print(f"{'':>8} gateway call rows in DuckDB: {dict(logged)}")
        await sdk.close()
        await sdk_aio.close()
        await anth_aio.close()
        for gw in gateways.values():
            await gw.aclose()
        store.close()
        return {k: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v))
                for k, v in samples.items()}
    finally:
        proc.terminate()
        proc.wait()


def run_e2e(latency: float, client: str, tasks: int, conc: int) -> tuple[float, int]:
    """(calls/s, calls) of one ``masbench run`` of the CoT-only suite on one client."""
    import masbench.runtime.compiled  # noqa: F401  # langgraph's import (seconds): paid before the clock, once
    from masbench.harness import RunOptions, run_suite

    proc, base = start_server(latency)
    try:
        d = Path(tempfile.mkdtemp())
        store = d / "e2e.duckdb"
        suite = d / "e2e.yaml"
        model, yaml_client = E2E_CLIENTS[client]
        api_base = base[: -len("/v1")] if model.startswith("anthropic/") else base
        suite.write_text(SUITE.format(model=model, base=api_base, client=yaml_client, half=tasks // 2, conc=conc,
                                      store=store, key=KEY_ENV))
        t0 = time.perf_counter()
        summary = asyncio.run(run_suite(RunOptions(suite=str(suite))))
        wall = time.perf_counter() - t0
        import duckdb

        con = duckdb.connect(str(store), read_only=True)
        calls, bad = con.execute("SELECT count(*), count(*) FILTER (WHERE status <> 'ok') FROM calls").fetchall()[0]
        con.close()
        assert summary.failed == 0 and bad == 0, (summary.failed, bad)
        return calls / wall, calls
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="calls per client and latency")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=4, help="round-robin rounds (the median round counts)")
    ap.add_argument("--tasks", type=int, default=2000, help="tasks of the masbench run (0: skip it)")
    ap.add_argument("--json", default=str(Path(__file__).parent / "results" / "gateway_overhead.json"),
                    help="where the figures go ('' : nowhere)")
    a = ap.parse_args()
    load_before = os.getloadavg()
    print(f"gateway overhead: {a.n} calls per client and latency, {a.concurrency}-way concurrency, server in its own "
          f"process; load average before: {load_before[0]:.2f}")
    results: dict[float, dict[str, tuple[float, float]]] = {}
    head = f"{'latency':>8} {'client':<31} {'calls/s':>8} {'CPU ms/call':>12} {'vs litellm':>11} {'vs openai':>10}"
    for latency in (0.0, 50.0):
        rows = results[latency] = asyncio.run(gateway_table(latency, a.n, a.concurrency, a.rounds))
        print(head)
        oa = rows[BARE_OPENAI][0]
        for label, (rate, cpu) in rows.items():
            ll = rows[bare_litellm_of(label)][0]
            print(f"{latency:>6.0f}ms {label:<31} {rate:>8.0f} {cpu:>12.2f} {rate / ll:>10.2f}x {rate / oa:>9.2f}x")
    e2e: dict[tuple[float, str], float] = {}
    e2e_calls: dict[tuple[float, str], int] = {}
    if a.tasks:
        print(f"masbench run end to end: CoT-only suite, {a.tasks} tasks, {a.concurrency} cells in flight")
        for latency in (0.0, 50.0):
            for client in E2E_CLIENTS:
                rate, calls = run_e2e(latency, client, a.tasks, a.concurrency)
                e2e[(latency, client)], e2e_calls[(latency, client)] = rate, calls
                ll = results[latency][bare_litellm_of(client)][0]
                print(f"{latency:>6.0f}ms masbench run, client: {client:<32} {rate:>8.0f} calls/s ({calls} calls) "
                      f"{rate / ll:>6.2f}x bare litellm")
    targets: list[dict[str, Any]] = []
    print("targets:")
    for latency, rows in results.items():
        ll, oa, fast = rows[BARE_LITELLM][0], rows[BARE_OPENAI][0], rows[GATEWAY_OPENAI][0]
        goals = [(f"gateway (openai) vs bare litellm at {latency:g} ms", fast / ll, 2.0),
                 (f"gateway (openai) vs bare AsyncOpenAI at {latency:g} ms", fast / oa, 0.9)]
        for client, goal in (("openai", 1.8), ("litellm", 1.0), ("anthropic, litellm", 1.0)):
            if (latency, client) in e2e:
                goals.append((f"masbench run ({client}) vs bare litellm at {latency:g} ms",
                              e2e[(latency, client)] / rows[bare_litellm_of(client)][0], goal))
        for what, ratio, goal in goals:
            print(f"  {what}: {ratio:.2f}x (goal >= {goal}x: {'meets' if ratio >= goal else 'MISSES'})")
            targets.append({"what": what, "ratio": round(ratio, 3), "goal": goal, "met": ratio >= goal})
        print(f"  (gateway (openai) vs bare AsyncOpenAI on the same aiohttp transport at {latency:g} ms: "
              f"{fast / rows[BARE_OPENAI_AIO][0]:.2f}x)")
    load_after = os.getloadavg()
    print(f"load average after: {load_after[0]:.2f} (2-core machine, shared: compare ratios, not absolutes)")
    if a.json:
        out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in load_after],
               "cpus": os.cpu_count(), "n": a.n, "concurrency": a.concurrency, "rounds": a.rounds, "tasks": a.tasks,
               "gateway": [{"latency_ms": lat, "client": label, "calls_per_s": round(rate, 1),
                            "cpu_ms_per_call": round(cpu, 3),
                            "vs_bare_litellm": round(rate / rows[bare_litellm_of(label)][0], 3),
                            "vs_bare_openai": round(rate / rows[BARE_OPENAI][0], 3)}
                           for lat, rows in results.items() for label, (rate, cpu) in rows.items()],
               "masbench_run": [{"latency_ms": lat, "client": client, "calls_per_s": round(rate, 1),
                                 "calls": e2e_calls[(lat, client)],
                                 "vs_bare_litellm": round(rate / results[lat][bare_litellm_of(client)][0], 3)}
                                for (lat, client), rate in e2e.items()],
               "targets": targets}
        Path(a.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"figures written to {a.json}")


if __name__ == "__main__":
    main()
