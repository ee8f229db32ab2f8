"""The real OTLP/HTTP exporter end to end: ``masbench run`` in a subprocess with
``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at a receiver on 127.0.0.1 delivers every span (from the
parent and from ``--workers`` processes, one trace, the workers' cells parented under the run);
``OTEL_TRACES_EXPORTER=none`` keeps it off; ``--otel`` turns it on."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest

from otelfix import otlp_receiver  # noqa: F401 - fixtures
from simsuite import counts, write_suite

pytestmark = pytest.mark.slow  # worker processes and a subprocess receiver


def _run(args: list[str], env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "masbench.cli", "run", *args], env=full, capture_output=True,
                          text=True, timeout=timeout)


def test_a_worker_run_exports_one_trace_to_an_otlp_receiver(tmp_path, otlp_receiver):
    suite = write_suite(tmp_path, n=2, designs="[cot, debate]", k_max=2)
    proc = _run([str(suite), "--workers", "2"], {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp_receiver.url})
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_id = proc.stdout.strip().splitlines()[-1]
    got = otlp_receiver.spans
    assert otlp_receiver.posts >= 3 and set(otlp_receiver.paths) == {"/v1/traces"}  # the parent + 2 workers
    (root,) = [s for s in got if s.name == "run simsuite"]
    assert root.parent_id == "" and root.attributes["masbench.run_id"] == run_id
    assert {s.trace_id for s in got} == {root.trace_id}  # the workers joined the parent's trace
    assert {s.resource["service.name"] for s in got} == {"masbench"}
    cells = [s for s in got if s.name.startswith("cell ")]
    assert len(cells) == 4 * 3 and {s.parent_id for s in cells} == {root.span_id}  # 4 tasks × (pool, cot, debate)
    by = {s.span_id: s for s in got}
    chats = [s for s in got if s.attributes.get("gen_ai.operation.name") == "chat"]
    c = counts(tmp_path / "runs" / "simsuite.duckdb", run_id)
    assert len(chats) == c["calls"] > 0
    for s in chats:
        chain = []
        while s is not None:
            chain.append(s.attributes.get("gen_ai.operation.name") or s.name.split(" ", 1)[0])
            s = by.get(s.parent_id)
        assert chain == ["chat", "invoke_agent", "invoke_workflow", "cell", "run"]
    assert sum(s.attributes["gen_ai.usage.input_tokens"] for s in chats) > 0
    assert Counter(s.status_code for s in got)[2] == 0  # STATUS_CODE_ERROR: none in a clean run


def test_traces_exporter_none_keeps_it_off_and_the_otel_flag_turns_it_on(tmp_path, otlp_receiver):
    suite = write_suite(tmp_path, n=1, designs="[cot]", k_max=1)
    env = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": otlp_receiver.url + "/custom/traces", "OTEL_TRACES_EXPORTER": "none"}
    off = _run([str(suite)], env)
    assert off.returncode == 0, off.stderr[-3000:]
    assert otlp_receiver.posts == 0 and otlp_receiver.spans == []
    on = _run([str(suite), "--new", "--otel"], env)
    assert on.returncode == 0, on.stderr[-3000:]
    assert set(otlp_receiver.paths) == {"/custom/traces"}  # the traces variable is used as is
    names = Counter(s.name for s in otlp_receiver.spans)
    assert names["run simsuite"] == 1 and names["cell cot"] == 2 and names["chat p60"] == 4  # 2 cot + 2 pool calls
