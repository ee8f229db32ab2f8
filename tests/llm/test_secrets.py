"""A canary API key set in the environment never reaches the store, the cache or the logs."""

from __future__ import annotations

import dataclasses

import asyncio
import logging

from masbench.llm import Gateway, ResponseCache
from masbench.spec import ModelSpec
from masbench.store import StoreWriter, start_run

CANARY = "sk-canary-7f3a9c2e5b1d48e6a0c4"


async def test_canary_key_never_in_store_cache_or_logs(http_server, store, tmp_path, monkeypatch, caplog, capsys):
    monkeypatch.setenv("MASBENCH_CANARY_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    ok = http_server(reply="Answer: 1")
    bad = http_server(fail_rate=1.0, fail_kinds=("500",))
    models = {
        "ok": ModelSpec(id="openai/m", api_base=ok.base_url, api_key_env="MASBENCH_CANARY_KEY"),
        "bad": ModelSpec(id="openai/m2", api_base=bad.base_url, api_key_env="MASBENCH_CANARY_KEY", max_attempts=2),
        "env": ModelSpec(id="openai/m3", api_base=ok.base_url),  # litellm picks OPENAI_API_KEY itself
    }
    start_run(store, "r", "s", {"models": {k: v.model_dump() for k, v in models.items()}}, {}, simulated=False)
    w = StoreWriter(store)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with caplog.at_level(logging.DEBUG):
        gw = Gateway(models, cache=cache, sink=lambda r: w.put(dataclasses.replace(r, run_id="r")), retry_base_s=0.01)
        rs = await asyncio.gather(gw.complete("ok", [{"role": "user", "content": "a"}]),
                                  gw.complete("bad", [{"role": "user", "content": "b"}]),
                                  gw.complete("env", [{"role": "user", "content": "c"}]))
    assert rs[0].ok and not rs[1].ok and rs[2].ok
    assert f"Bearer {CANARY}" in ok.stats.auth_headers  # the key was really used
    w.flush()
    cache.close()
    store.sql("CHECKPOINT")
    blobs = {"store": open(store.path, "rb").read(), "cache": (tmp_path / "cache.sqlite").read_bytes()}
    for name, blob in blobs.items():
        assert CANARY.encode() not in blob, name
    out = capsys.readouterr()
    assert CANARY not in caplog.text and CANARY not in out.out and CANARY not in out.err
    assert store.sql("SELECT count(*) FROM calls WHERE error IS NOT NULL")[0][0] == 1
