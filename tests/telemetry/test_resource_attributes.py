"""The exporter honours ``OTEL_RESOURCE_ATTRIBUTES``: a run sent to its own Phoenix project
(``openinference.project.name=…``) carries that attribute on the resource of every span it exports
over real OTLP/HTTP; a ``service.name`` given there (or in ``OTEL_SERVICE_NAME``) replaces the
default ``masbench``."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import masbench
from masbench import telemetry
from otelfix import clean_otel_env, otlp_receiver  # noqa: F401 - fixtures
from simsuite import write_suite


@pytest.mark.slow
def test_a_run_routed_to_its_own_project_carries_it_on_every_exported_span(tmp_path: Path, clean_otel_env,
                                                                            otlp_receiver) -> None:
    clean_otel_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver.url)
    clean_otel_env.setenv("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name=masbench-simsuite,"
                                                      "deployment.environment=test")
    s = masbench.run(write_suite(tmp_path, n=1, designs="[cot]", k_max=1), lib=[tmp_path])
    assert telemetry.flush(30)
    spans = otlp_receiver.spans
    assert s.failed == 0 and otlp_receiver.posts >= 1 and len(spans) > 5  # run, cells, workflows, nodes, chats
    assert {sp.resource.get("openinference.project.name") for sp in spans} == {"masbench-simsuite"}
    assert {sp.resource.get("deployment.environment") for sp in spans} == {"test"}
    assert {sp.resource.get("service.name") for sp in spans} == {"masbench"}
    assert {sp.resource.get("service.version") for sp in spans} == {masbench.__version__}


@pytest.mark.parametrize("env", [{"OTEL_RESOURCE_ATTRIBUTES": "service.name=bench-a,team=evals"},
                                 {"OTEL_SERVICE_NAME": "bench-a", "OTEL_RESOURCE_ATTRIBUTES": "team=evals"}])
def test_a_service_name_from_the_environment_replaces_the_default(clean_otel_env, env: dict[str, str]) -> None:
    clean_otel_env.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    for k, v in env.items():
        clean_otel_env.setenv(k, v)
    exp = InMemorySpanExporter()
    telemetry.configure(exp, batch=False, capture_content=False)
    with telemetry.run("r1", "suite", cells=0, simulated=True):
        pass
    (span,) = exp.get_finished_spans()
    assert span.resource.attributes["service.name"] == "bench-a" and span.resource.attributes["team"] == "evals"


def test_without_the_variables_the_service_is_masbench(clean_otel_env) -> None:
    clean_otel_env.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    exp = InMemorySpanExporter()
    telemetry.configure(exp, batch=False, capture_content=False)
    with telemetry.run("r1", "suite", cells=0, simulated=True):
        pass
    (span,) = exp.get_finished_spans()
    assert span.resource.attributes["service.name"] == "masbench"
    assert "openinference.project.name" not in span.resource.attributes
