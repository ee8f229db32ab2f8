"""Provider back-pressure on our fault server over real HTTP: Retry-After is honoured, and a
per-model circuit breaker opens after N consecutive retryable failures and closes after a
successful probe (issue 13)."""

from __future__ import annotations

import asyncio
import email.utils

import pytest
from rich.console import Console

from masbench.harness.progress import RunDisplay
from masbench.llm import Gateway, SimFault
from masbench.llm.errors import retry_after_s, systemic_reason
from masbench.llm.health import BreakerConfig, ModelHealth
from masbench.spec import ModelSpec


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test-not-a-secret")


def _model(srv, **kw) -> ModelSpec:
    return ModelSpec(id="openai/fake-model", api_base=srv.base_url, api_key_env="MASBENCH_TEST_KEY", **kw)


def _msg(i: int) -> list[dict]:
    return [{"role": "user", "content": f"q{i}"}]


@pytest.mark.slow
@pytest.mark.waits
@pytest.mark.parametrize("kind", ["429", "503"])
async def test_retry_after_2_is_not_called_again_before_2_seconds(http_server, kind):
    srv = http_server(fail_first=1, fail_kinds=(kind,), retry_after="2")
    gw = Gateway({"m": _model(srv, max_attempts=3)}, retry_base_s=0.01, retry_max_s=0.02)
    res = await gw.complete("m", _msg(0), max_tokens=8)
    assert res.ok and res.attempts == 2
    t = srv.stats.request_times
    assert len(t) == 2 and t[1] - t[0] >= 2.0
    assert gw.health["m"].retry_after_waits == 1 and gw.stats["retry_after_waits"] == 1


def test_retry_after_as_an_http_date():
    class Resp:
        headers = {"retry-after": email.utils.formatdate(1_000_030.0, usegmt=True)}

    class Err(Exception):
        response = Resp()

    assert retry_after_s(Err(), now=1_000_000.0) == pytest.approx(30.0)
    Resp.headers = {"Retry-After": "7"}
    assert retry_after_s(Err()) == 7.0
    Resp.headers = {}
    assert retry_after_s(Err()) is None


@pytest.mark.slow
@pytest.mark.waits
async def test_breaker_opens_after_n_failures_pauses_and_closes_after_a_successful_probe(http_server):
    srv = http_server(fail_first=4, fail_kinds=("503",))
    gw = Gateway({"m": _model(srv, max_attempts=10, concurrency=8)}, retry_base_s=0.01, retry_max_s=0.02,
                 breaker=BreakerConfig(threshold=3, cooldown_s=0.5))
    health = gw.health["m"]
    seen: list[str] = []
    line: list[str] = []
    display = RunDisplay(Console(file=open("/dev/null", "w")))

    async def watch() -> None:
        while True:
            seen.append(health.state())
            if health.breaker_open and not line:
                display.attach(gw.stats)  # the gateway's totals as read now (the engine reads them each tick)
                line.append(display._usage())
            await asyncio.sleep(0.02)

    w = asyncio.ensure_future(watch())
    results = await asyncio.gather(*[gw.complete("m", _msg(i), max_tokens=8) for i in range(6)])
    w.cancel()
    assert all(r.ok for r in results)
    t = srv.stats.request_times
    assert srv.stats.requests == 4 + 6  # the 3 failures that opened it, one failed probe, then each call once
    assert t[3] - t[2] >= 0.5 and t[4] - t[3] >= 1.0  # open: nothing sent until the cooldown (doubled) passed
    assert health.opened == 1 and not health.breaker_open and health.state() == "ok"
    assert "open" in seen and "breaker OPEN for 1 model(s)" in line[0]
    assert gw.stats["breakers_open"] == 0


async def test_a_cancelled_probe_hands_the_probe_on_without_counting_a_failure():
    h = ModelHealth("m")
    dead, probe = await h.acquire()
    assert dead is None and probe
    waiter = asyncio.ensure_future(h.acquire())  # unproven model: a second caller waits for the probe
    await asyncio.sleep(0.02)
    assert not waiter.done()
    h.release_probe()
    dead, probe2 = await asyncio.wait_for(waiter, 10)
    assert probe2 and h.failures == 0 and not h.breaker_open


def test_systemic_errors_are_auth_credentials_and_unknown_models_not_one_inputs_bad_request():
    class E(Exception):
        def __init__(self, msg, status=None):
            super().__init__(msg)
            self.status_code = status

    assert systemic_reason(E("OpenAIException - Missing credentials. Please pass an `api_key`", 500))
    assert systemic_reason(E("Incorrect API key provided", 401))
    assert systemic_reason(E("The model `gpt-9` does not exist", 404))
    assert systemic_reason(PermissionError("environment variable X is not set"))
    assert systemic_reason(E("This model's maximum context length is 8192 tokens", 400)) is None
    assert systemic_reason(E("Rate limit reached", 429)) is None
    assert systemic_reason(SimFault(500, "simulated server_error fault")) is None
