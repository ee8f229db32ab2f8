"""The local OpenAI-compatible server: real HTTP through the official openai client."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import aiohttp
import openai
import pytest

from masbench.testing import FakeOpenAIServer, ServerConfig
from masbench.testing.openai_server import FAIL_KINDS

ROOT = Path(__file__).resolve().parents[2]
MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 6 times 7?"}]


def _client(base_url: str, key: str = "sk-test-123") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=10)


async def test_answers_with_configured_usage() -> None:
    cfg = ServerConfig(prompt_tokens=11, completion_tokens=7, cached_tokens=3, reply="Answer: {n}")
    async with FakeOpenAIServer(cfg) as server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        client = _client(server.base_url)
        resp = await client.chat.completions.create(model="gpt-fake", messages=MSGS)
        await client.close()
    assert resp.choices[0].message.content == "Answer: 1"
    assert resp.choices[0].finish_reason == "stop"
    assert resp.model == "gpt-fake"  # echoed
    u = resp.usage
    assert (u.prompt_tokens, u.completion_tokens, u.total_tokens) == (11, 7, 18)
    assert u.prompt_tokens_details.cached_tokens == 3


async def test_default_usage_is_derived_from_text() -> None:
    async with FakeOpenAIServer() as server:
        client = _client(server.base_url)
        resp = await client.chat.completions.create(model="m", messages=MSGS, n=2)
        await client.close()
    chars = sum(len(m["content"]) for m in MSGS)
    reply = ServerConfig().reply
    assert [c.message.content for c in resp.choices] == [reply, reply]
    assert resp.usage.prompt_tokens == math.ceil(chars / 4)
    assert resp.usage.completion_tokens == 2 * math.ceil(len(reply) / 4)
    assert resp.usage.prompt_tokens_details.cached_tokens == 0


async def test_fail_rate_one_429() -> None:
    async with FakeOpenAIServer(fail_rate=1.0, fail_kinds=("429",)) as server:
        client = _client(server.base_url)
        with pytest.raises(openai.RateLimitError) as info:
            await client.chat.completions.create(model="m", messages=MSGS)
        await client.close()
        assert info.value.status_code == 429
        assert server.stats.requests == 1
        assert server.stats.by_status == {429: 1}
        assert server.stats.faults == {"429": 1}


@pytest.mark.parametrize(
    ("kind", "exc"),
    [
        ("500", openai.InternalServerError),
        ("503", openai.InternalServerError),
        ("timeout", openai.InternalServerError),  # 504 after timeout_sleep_s
        ("disconnect", openai.APIConnectionError),
    ],
)
async def test_other_fault_kinds(kind: str, exc: type[Exception]) -> None:
    async with FakeOpenAIServer(fail_rate=1.0, fail_kinds=(kind,), timeout_sleep_s=0.05) as server:
        client = _client(server.base_url)
        with pytest.raises(exc):
            await client.chat.completions.create(model="m", messages=MSGS)
        await client.close()
        assert server.stats.faults == {kind: 1}


@pytest.mark.slow
async def test_timeout_fault_hangs_past_client_timeout() -> None:
    async with FakeOpenAIServer(fail_rate=1.0, fail_kinds=("timeout",), timeout_sleep_s=5) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0, timeout=0.2)
        with pytest.raises(openai.APITimeoutError):
            await client.chat.completions.create(model="m", messages=MSGS)
        await client.close()


async def test_faults_are_seeded() -> None:
    async def statuses(seed: int) -> list[int]:
        out = []
        async with FakeOpenAIServer(fail_rate=0.5, fail_kinds=("429", "500"), seed=seed) as server:
            client = _client(server.base_url)
            for _ in range(20):
                try:
                    await client.chat.completions.create(model="m", messages=MSGS)
                    out.append(200)
                except openai.APIStatusError as e:
                    out.append(e.status_code)
            await client.close()
        return out

    a, b = await statuses(5), await statuses(5)
    assert a == b
    assert {200, 429, 500} <= set(a)


async def test_stats_and_keys_only_in_headers() -> None:
    async with FakeOpenAIServer(latency_ms=1) as server:
        client = _client(server.base_url, key="sk-secret-xyz")
        for _ in range(3):
            await client.chat.completions.create(model="m", messages=MSGS)
        models = await client.models.list()
        await client.close()
        st = server.stats
        assert st.requests == 3 and st.by_status == {200: 3}
        assert st.auth_headers == ["Bearer sk-secret-xyz"] * 3
        assert [m.id for m in models.data] == ["fake-model"]
        root = server.base_url.removesuffix("/v1")
        async with aiohttp.ClientSession() as http:  # the server shares this loop: no blocking I/O
            async with http.get(root + "/stats") as r:
                served = json.loads(await r.read())
            assert served["requests"] == 3 and served["by_status"] == {"200": 3}
            async with http.post(root + "/stats/reset") as r:
                assert r.status == 200
        assert server.stats.requests == 0 and st.requests == 0  # reset in place


async def test_streaming_with_usage() -> None:
    async with FakeOpenAIServer(prompt_tokens=5, completion_tokens=2) as server:
        client = _client(server.base_url)
        stream = await client.chat.completions.create(
            model="m", messages=MSGS, stream=True, stream_options={"include_usage": True}
        )
        text, usage = "", None
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                text += chunk.choices[0].delta.content
            if chunk.usage is not None:
                usage = chunk.usage
        await client.close()
    assert text == ServerConfig().reply
    assert usage is not None and usage.total_tokens == 7


async def test_bad_request_is_400() -> None:
    async with FakeOpenAIServer() as server:
        client = _client(server.base_url)
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(model="m", messages="not a list")  # type: ignore[arg-type]
        await client.close()


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        ServerConfig(fail_kinds=("418",))
    with pytest.raises(ValueError):
        ServerConfig(fail_rate=1.5)
    assert ServerConfig(fail_kinds="429, timeout").fail_kinds == ("429", "timeout")
    assert set(FAIL_KINDS) == {"429", "500", "503", "timeout", "disconnect", "400", "401", "404"}


def test_thread_mode() -> None:
    with FakeOpenAIServer(reply="hello", model="served-name") as server:
        assert server._thread is not None and server._thread.daemon
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0, timeout=10)
        resp = client.chat.completions.create(model="m", messages=MSGS)
        assert resp.choices[0].message.content == "hello"
        assert resp.model == "served-name"
        assert server.stats.requests == 1
        base_url = server.base_url
    assert server._thread is None
    client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0, timeout=2)
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="m", messages=MSGS)

    # explicit start/stop; stop() is synchronous in thread mode
    server = FakeOpenAIServer()
    url = server.start_in_thread()
    assert url == server.base_url
    server.stop()
    assert server._thread is None


@pytest.mark.slow
def test_cli_subprocess() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "masbench.testing.openai_server", "--port", "0", "--latency-ms", "5",
         "--fail-rate", "0", "--prompt-tokens", "9"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(30)
        assert line and line[0].startswith("READY http://127.0.0.1:"), (line, proc.poll())
        base_url = line[0].split()[1]
        assert base_url.endswith("/v1")
        client = openai.OpenAI(base_url=base_url, api_key="sk-cli", max_retries=0, timeout=10)
        resp = client.chat.completions.create(model="m", messages=MSGS)
        assert resp.usage.prompt_tokens == 9
        assert resp.choices[0].message.content == ServerConfig().reply
        assert proc.poll() is None  # it keeps serving until told to stop
        # SIGTERM is a clean shutdown: exit status 0 (not -SIGTERM), and the port is closed
        proc.terminate()
        assert proc.wait(20) == 0, proc.stderr.read()
        host, port = base_url.removeprefix("http://").removesuffix("/v1").split(":")
        with pytest.raises(OSError):
            socket.create_connection((host, int(port)), timeout=2).close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
