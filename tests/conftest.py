"""Shared fixtures: a real OpenAI-compatible HTTP server on 127.0.0.1, fresh stores."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from masbench.store import Store


@pytest.fixture
def http_server():
    """Factory: start a fake OpenAI-compatible server in a thread with the given config."""
    from masbench.testing import FakeOpenAIServer

    started = []

    def make(**config):
        srv = FakeOpenAIServer(**config)
        srv.start_in_thread()
        started.append(srv)
        return srv

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def store(tmp_path):
    st = Store(tmp_path / "store.duckdb")
    yield st
    st.close()
