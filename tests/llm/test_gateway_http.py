"""The gateway through litellm over real HTTP against a local OpenAI-compatible server."""

from __future__ import annotations

import dataclasses

import asyncio
import importlib.resources
import json
import socket

import pytest

from masbench.llm import Gateway, ResponseCache, pricing
from masbench.llm.health import BreakerConfig
from masbench.spec import ModelSpec
from masbench.store import StoreWriter


def _model(srv, **kw) -> ModelSpec:
    return ModelSpec(id="openai/fake-model", api_base=srv.base_url, api_key_env="MASBENCH_TEST_KEY",
                     input_usd_per_mtok=2.0, output_usd_per_mtok=8.0, **kw)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("MASBENCH_TEST_KEY", "sk-test-not-a-secret")


async def test_tokens_and_cost_land_in_duckdb_exactly_as_reported(http_server, store):
    srv = http_server(prompt_tokens=37, completion_tokens=11, cached_tokens=5, reply="Answer: 7")
    writer = StoreWriter(store)
    gw = Gateway({"m": _model(srv)}, sink=lambda r: writer.put(dataclasses.replace(r, run_id="r1", purpose="smoke")))
    results = await asyncio.gather(*[
        gw.complete("m", [{"role": "user", "content": f"q{i}"}], sample_index=i, max_tokens=16,
                    tags={"design": "d", "task_id": f"t{i}", "node": "n", "agent": "a", "seed": 0})
        for i in range(6)])
    writer.flush()
    assert all(r.ok and r.text == "Answer: 7" for r in results)
    rows = store.sql("SELECT prompt_tokens, completion_tokens, cached_tokens, cost_usd, attempts, cache_hit, simulated "
                     "FROM calls WHERE run_id = 'r1'")
    assert len(rows) == 6
    for pt, ct, cached, cost, attempts, hit, sim in rows:
        assert (pt, ct, cached) == (37, 11, 5)
        assert cost == pytest.approx(37 * 2.0 / 1e6 + 11 * 8.0 / 1e6)
        assert attempts == 1 and hit is False and sim is False
    assert srv.stats.requests == 6
    # the key went to the server in the Authorization header
    assert all(h == "Bearer sk-test-not-a-secret" for h in srv.stats.auth_headers)


@pytest.mark.slow
@pytest.mark.waits
async def test_thirty_percent_failures_all_calls_succeed_and_attempts_recorded(http_server, store):
    srv = http_server(fail_rate=0.3, fail_kinds=("429", "500", "timeout"), timeout_sleep_s=3.0, seed=7,
                      prompt_tokens=10, completion_tokens=5)
    writer = StoreWriter(store)
    # The breaker (5 consecutive failures open it for 5 s, doubling) is tested on its own; here its
    # pauses are shortened so the test measures retries, not 2 minutes of cool-downs. The client
    # timeout (1 s) is a third of the injected hang (3 s), with room for a loaded machine: at 0.5 s
    # and 4 GIL hogs beside it, 5 calls of 300 ran out of their 10 attempts on timeouts alone.
    gw = Gateway({"m": _model(srv, timeout_s=1.0, max_attempts=10, concurrency=32)},
                 sink=lambda r: writer.put(dataclasses.replace(r, run_id="r2")), retry_base_s=0.01, retry_max_s=0.05,
                 breaker=BreakerConfig(cooldown_s=0.05, max_cooldown_s=0.2))
    n = 60
    results = await asyncio.gather(*[
        gw.complete("m", [{"role": "user", "content": f"question {i}"}], sample_index=i, max_tokens=8)
        for i in range(n)])
    writer.flush()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    total_attempts, retried, logged = store.sql(
        "SELECT sum(attempts), count(*) FILTER (WHERE attempts > 1), "
        "sum(CASE WHEN attempt_errors IS NULL THEN 0 ELSE json_array_length(attempt_errors) END) "
        "FROM calls WHERE run_id = 'r2'")[0]
    assert retried > 0
    assert logged == total_attempts - n  # every failed attempt has its error recorded
    errors = [e.split(":")[0] for (errs,) in store.sql("SELECT attempt_errors FROM calls WHERE attempt_errors IS NOT NULL")
              for e in json.loads(errs)]
    rate_limited = sum("RateLimit" in e for e in errors)
    timeouts = sum("Timeout" in e for e in errors)
    faults = srv.stats.faults
    # every attempt is one answer the client got (ok, 429, 500) or a client timeout, and every request
    # the server read is one attempt. On an idle machine all of them meet one to one (total ==
    # requests, 429s == faults). On a loaded one the client's timeout can fire before the server
    # reads a request, or before its answer (even a 429) arrives: that attempt is a recorded timeout
    # beyond the injected ones — and nothing else is allowed to differ.
    assert 0 < rate_limited <= faults.get("429", 0)
    assert len(errors) - rate_limited - timeouts <= faults.get("500", 0)
    assert total_attempts >= srv.stats.requests
    assert timeouts >= faults.get("timeout", 0) > 0
    assert total_attempts - srv.stats.requests <= timeouts - faults.get("timeout", 0)


@pytest.mark.slow
@pytest.mark.waits
async def test_an_attempt_the_server_never_read_is_counted_as_sent_and_recorded_as_a_timeout(store):
    # What a loaded machine does to the test above, made certain: a server whose kernel accepts the
    # connection and takes the request bytes, but whose application never reads them (a listening
    # socket nobody accepts on). Each attempt is sent — a real provider might have received and
    # billed it — so the gateway counts it, records its client timeout, and retries; the call is
    # recorded as failed, not dropped. The listener's queue shows one connection carrying one
    # request per counted attempt, none of them ever read while the call ran.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        base = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        writer = StoreWriter(store)
        spec = ModelSpec(id="openai/fake-model", api_base=base, api_key_env="MASBENCH_TEST_KEY", price=0,
                         timeout_s=0.3, max_attempts=3)
        gw = Gateway({"m": spec}, sink=lambda r: writer.put(dataclasses.replace(r, run_id="r9")),
                     retry_base_s=0.01, retry_max_s=0.02)
        r = await gw.complete("m", [{"role": "user", "content": "never read"}], max_tokens=4)
        writer.flush()
        assert not r.ok and r.attempts == 3 and "Timeout" in (r.error or "")
        attempts, errs = store.sql("SELECT attempts, attempt_errors FROM calls WHERE run_id = 'r9'")[0]
        assert attempts == 3 and [e.split(":")[0] for e in json.loads(errs)] == ["APITimeoutError"] * 3
        listener.setblocking(False)
        requests = []
        while True:
            try:
                conn, _ = listener.accept()
            except BlockingIOError:
                break
            with conn:
                conn.settimeout(2)
                requests.append(conn.recv(65536))
    finally:
        listener.close()
    assert len(requests) == 3 and all(b.startswith(b"POST /v1/chat/completions") for b in requests)


async def test_auth_and_bad_request_errors_are_not_retried_but_recorded(http_server, store, monkeypatch):
    for kind, run in (("401", "r3"), ("400", "r4")):
        srv = http_server(fail_rate=1.0, fail_kinds=(kind,))
        writer = StoreWriter(store)
        gw = Gateway({"m": _model(srv, max_attempts=5)}, sink=lambda r: writer.put(dataclasses.replace(r, run_id=run)),
                     retry_base_s=0.01)
        r = await gw.complete("m", [{"role": "user", "content": "x"}])
        writer.flush()
        assert not r.ok and r.attempts == 1 and srv.stats.requests == 1, (kind, r)
        assert store.sql("SELECT count(*), max(error) FROM calls WHERE run_id = ?", [run])[0][0] == 1


async def test_missing_key_env_is_a_recorded_error_not_a_crash(http_server, monkeypatch):
    srv = http_server()
    monkeypatch.delenv("MASBENCH_TEST_KEY")
    rows = []
    gw = Gateway({"m": _model(srv)}, sink=lambda r: rows.append(r.as_dict()))
    r = await gw.complete("m", [{"role": "user", "content": "x"}])
    assert not r.ok and "MASBENCH_TEST_KEY" in r.error and r.attempts == 1
    assert srv.stats.requests == 0 and len(rows) == 1


async def test_k_samples_are_k_cache_entries_and_rerun_hits_all(http_server, tmp_path):
    srv = http_server(reply="sample seed={seed} n={n}. Answer: 3", prompt_tokens=20, completion_tokens=9)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    gw = Gateway({"m": _model(srv)}, cache=cache)
    msgs = [{"role": "user", "content": "What is 1 + 2?"}]
    first = await asyncio.gather(*[gw.complete("m", msgs, sample_index=i, temperature=0.8) for i in range(8)])
    assert srv.stats.requests == 8
    assert len({r.text for r in first}) == 8  # eight distinct responses, not one collapsed
    cache.close()
    # a new process-equivalent: new cache object over the same file, new gateway
    cache2 = ResponseCache(tmp_path / "cache.sqlite")
    assert len(cache2) == 8
    rows = []
    gw2 = Gateway({"m": _model(srv)}, cache=cache2, sink=lambda r: rows.append(r.as_dict()))
    again = await asyncio.gather(*[gw2.complete("m", msgs, sample_index=i, temperature=0.8) for i in range(8)])
    assert srv.stats.requests == 8  # no model was called
    assert [r.text for r in again] == [r.text for r in first]
    assert all(r.cache_hit for r in again) and all(row["cache_hit"] for row in rows)
    assert [r.prompt_tokens for r in again] == [20] * 8  # tokens are still accounted on a hit
    # a different temperature is a different request
    await gw2.complete("m", msgs, sample_index=0, temperature=0.2)
    assert srv.stats.requests == 9


async def test_unknown_price_is_recorded_as_unpriced_with_a_warning(http_server, caplog, monkeypatch):
    # An ad-hoc gateway still answers, but the call row says its $0 is not a price (a run stops
    # before any call instead: see tests/harness/test_costs_run.py).
    # The warning is once per model id per process: start from an empty record of warned ids, or
    # the test passes only the first time it runs in a process (mutmut runs the tests twice in one).
    monkeypatch.setattr(pricing, "_warned", set())
    srv = http_server(prompt_tokens=5, completion_tokens=5)
    gw = Gateway({"m": ModelSpec(id="openai/totally-unknown-model-xyz", api_base=srv.base_url)})
    with caplog.at_level("WARNING"):
        gw2 = Gateway({"m": ModelSpec(id="openai/another-unknown-model-abc", api_base=srv.base_url)})
    assert any("no price known" in r.message for r in caplog.records)
    r = await gw2.complete("m", [{"role": "user", "content": "x"}])
    assert r.ok and r.cost_usd == 0.0 and r.cost_source == "unpriced"
    assert gw.prices("m").source == "unpriced"


def _bundled_price_map() -> dict:
    """litellm's bundled price map read straight from its JSON file (not through our pricing code)."""
    return json.loads(importlib.resources.files("litellm").joinpath(
        "model_prices_and_context_window_backup.json").read_text())


async def test_litellm_price_map_used_when_yaml_has_none(http_server):
    # Expected prices come from the map file itself; unequal token counts, so swapping the input
    # and output prices (or the cached-read price) changes the cost.
    entry = _bundled_price_map()["gpt-4o-mini"]
    p_in, p_out, p_read = (entry["input_cost_per_token"], entry["output_cost_per_token"],
                           entry["cache_read_input_token_cost"])
    assert p_in != p_out and p_read != p_in
    srv = http_server(prompt_tokens=1200, completion_tokens=300)
    gw = Gateway({"m": ModelSpec(id="openai/gpt-4o-mini", api_base=srv.base_url)})
    assert gw.prices("m").source == "litellm-map"
    r = await gw.complete("m", [{"role": "user", "content": "x"}])
    assert r.cost_usd == pytest.approx(1200 * p_in + 300 * p_out, rel=1e-12)
    srv = http_server(prompt_tokens=1200, completion_tokens=300, cached_tokens=400)
    gw = Gateway({"m": ModelSpec(id="openai/gpt-4o-mini", api_base=srv.base_url)})
    r = await gw.complete("m", [{"role": "user", "content": "y"}])
    assert r.cost_usd == pytest.approx(800 * p_in + 400 * p_read + 300 * p_out, rel=1e-12)


