"""The embedded engine's thread count follows the cores the process may use (no model needed)."""

from __future__ import annotations

import os

import pytest

from masbench.llm.embedded import EmbeddedUnavailableError
from masbench.llm.embedded.engine import engine_threads


def test_threads_follow_the_affinity_mask_and_the_env_override(monkeypatch):
    monkeypatch.delenv("MASBENCH_EMBEDDED_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})  # e.g. `taskset -c 0` on a 2-core box
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert engine_threads() == 1
    monkeypatch.setenv("MASBENCH_EMBEDDED_THREADS", "3")
    assert engine_threads() == 3
    monkeypatch.setenv("MASBENCH_EMBEDDED_THREADS", "many")
    with pytest.raises(EmbeddedUnavailableError, match="MASBENCH_EMBEDDED_THREADS"):
        engine_threads()
