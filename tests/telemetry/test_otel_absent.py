"""Without the ``otel`` extra (simulated: a meta-path finder makes ``import opentelemetry.sdk`` and
the exporters fail in the subprocess) a run works and writes the same rows as with it, our
OpenTelemetry side is never imported while telemetry is off, and turning it on (the endpoint
variable, or ``--otel``) stops before the store is touched with the install command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from otelfix import otlp_receiver  # noqa: F401 - fixtures
from simsuite import write_suite

BLOCKER = """
import importlib.abc, sys
class NoOtelExtra(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NoOtelExtra())
"""

pytestmark = pytest.mark.slow  # runs in subprocesses without the extra

MAIN = """
import sys
sys.argv = ["masbench", *sys.argv[1:]]
from masbench.cli import app
try:
    app()
finally:
    print("SDK_LOADED=" + str("masbench.telemetry.sdk" in sys.modules), file=sys.stderr)
"""


def _run(args: list[str], env: dict[str, str], block: bool) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    full.update(env)
    code = (BLOCKER if block else "") + MAIN
    return subprocess.run([sys.executable, "-c", code, "run", *args], env=full, capture_output=True, text=True,
                          timeout=240)


def _sdk_loaded(proc: subprocess.CompletedProcess) -> str:
    return next(line for line in proc.stderr.splitlines() if line.startswith("SDK_LOADED=")).split("=", 1)[1]


def _rows(store: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return {
            "calls": con.execute("SELECT purpose, design, task_id, seed, node, sample_index, prompt_tokens, "
                                 "completion_tokens, status FROM calls ORDER BY ALL").fetchall(),
            "results": con.execute("SELECT design, task_id, seed, answer, correct, tokens, status FROM results "
                                   "ORDER BY ALL").fetchall(),
            "pool": con.execute("SELECT task_id, seed, sample_index, answer, tokens FROM pool ORDER BY ALL").fetchall(),
            "nodes": con.execute("SELECT design, task_id, seed, node, status, tokens FROM nodes ORDER BY ALL").fetchall(),
        }
    finally:
        con.close()


def test_without_the_extra_a_run_writes_the_same_rows_and_loads_no_telemetry(tmp_path, otlp_receiver):
    """The same suite three ways — extra blocked, extra present and off, extra present and exporting —
    writes identical rows."""
    stores = []
    for name, block, env in (("blocked", True, {}), ("off", False, {}),
                             ("exporting", False, {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp_receiver.url})):
        d = tmp_path / name
        d.mkdir()
        suite = write_suite(d, n=2, designs="[cot, debate]", k_max=2)
        proc = _run([str(suite), "--no-cache"], env, block)
        assert proc.returncode == 0, proc.stderr[-3000:]
        # off, our OpenTelemetry side is never imported (langgraph's langsmith may import the SDK on
        # its own when it is installed: a third party's choice, not a cost of ours)
        assert _sdk_loaded(proc) == str(name == "exporting")
        stores.append(d / "runs" / "simsuite.duckdb")
    blocked, off, exporting = (_rows(s) for s in stores)
    assert blocked["calls"] and blocked == off == exporting
    assert len([s for s in otlp_receiver.spans if s.name.startswith("chat ")]) == len(exporting["calls"])


def test_enabling_it_without_the_extra_names_the_install_command_and_touches_nothing(tmp_path):
    suite = write_suite(tmp_path, n=1, designs="[cot]", k_max=1)
    store = tmp_path / "runs" / "simsuite.duckdb"
    env_on = _run([str(suite)], {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, block=True)
    assert env_on.returncode == 2, env_on.stderr[-3000:]
    assert "pip install 'masbench-eval[otel]'" in env_on.stderr and "OTEL_EXPORTER_OTLP_ENDPOINT is set" in env_on.stderr
    assert not store.exists()
    flag_on = _run([str(suite), "--otel"], {}, block=True)
    assert flag_on.returncode == 2 and "pip install 'masbench-eval[otel]'" in flag_on.stderr
    assert "--otel was given" in flag_on.stderr and not store.exists()
