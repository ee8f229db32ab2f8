"""Shared fixtures: a real OpenAI-compatible HTTP server on 127.0.0.1, fresh stores."""

from __future__ import annotations

import os

# Forced, not defaulted: an environment with LITELLM_LOCAL_MODEL_COST_MAP=False would otherwise
# make litellm fetch its price map from GitHub at import (tests never reach the network).
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

# Under pytest-xdist (`make test`: a worker per core), several workers may decode with the embedded
# model at once. llama.cpp's threads spin while they wait for each other, so a worker's model gets
# the cores divided among the workers (at least 1), not all of them. A value set by the caller wins.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    os.environ.setdefault("MASBENCH_EMBEDDED_THREADS",
                          str(max(1, _cores // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))

import pytest

from masbench import text
from masbench.harness.stats import majk
from masbench.store import Store
from offline_support import litellm_price_map_source
from worker_order import longest_first


def pytest_collection_modifyitems(config, items):
    """A test of the real embedded model is slow (``make test-fast`` leaves it out). The modules
    holding such tests run first (each module kept whole, in its own order; the rest as collected):
    they are the suite's longest in CPU (the doc snippets' runs alone ~60 s), and collected last
    (tests/test_doc_snippets.py) one of them was the run's tail on a worker while the other sat idle."""
    for item in items:
        if item.get_closest_marker("embedded") is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
    items[:] = longest_first(items)


@pytest.fixture(autouse=True)
def _pure_caches_start_empty():
    """Every test starts with the memoized pure functions of ``masbench.text`` and
    ``harness.stats.majk`` empty. A result cached earlier in
    the process would hide a change to the code under it: under mutmut every mutant runs in a fork of
    a process that already ran the tests, so with warm caches 58 mutants of text.py's helpers
    survived every test (2026-12-05)."""
    for f in (text.parse_number, text.numeric_value, text.normalize_answer, majk._binom_row, majk._one_plus_x,
              majk._gauss, majk._split, majk._priority):
        f.cache_clear()


@pytest.fixture(scope="session", autouse=True)
def _litellm_never_fetched_its_price_map():
    """Fail the session if litellm loaded its price map from anywhere but its bundled copy."""
    yield
    info = litellm_price_map_source()
    assert info is None or (info["source"] == "local" and info["url"] is None), info


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
