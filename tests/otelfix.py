"""Telemetry fixtures for tests/telemetry/ (imported by its test modules, like simsuite.py: a
conftest.py there would shadow tests/conftest.py as the module ``conftest``): the SDK's in-memory
exporter configured for one test, and an OTLP/HTTP receiver on 127.0.0.1 that decodes what an
exporter POSTs to /v1/traces."""

from __future__ import annotations

import gzip
import threading
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                      ExportTraceServiceResponse)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from masbench import telemetry

OTEL_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED",
             "OTEL_TRACES_EXPORTER", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "OTEL_SERVICE_NAME")


@pytest.fixture
def clean_otel_env(monkeypatch):
    """No OTEL_* variable of the developer's shell leaks into the test; telemetry decided afresh after."""
    for v in OTEL_VARS:
        monkeypatch.delenv(v, raising=False)
    telemetry.reset()
    yield monkeypatch
    telemetry.reset()


@pytest.fixture
def memory(clean_otel_env):
    """Telemetry on for this test, exporting synchronously to an ``InMemorySpanExporter``."""
    exp = InMemorySpanExporter()
    telemetry.configure(exp, batch=False, capture_content=False)
    yield exp


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(x) for x in v.array_value.values)
    return getattr(v, kind) if kind else None


@dataclass
class ReceivedSpan:
    """One span as the receiver decoded it."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    status_code: int


@dataclass
class Receiver:
    """An OTLP/HTTP trace receiver (``POST /v1/traces``, protobuf)."""

    url: str
    spans: list[ReceivedSpan] = field(default_factory=list)
    posts: int = 0
    paths: list[str] = field(default_factory=list)


@pytest.fixture
def otlp_receiver():
    """Start a receiver on 127.0.0.1 (a free port); yields a :class:`Receiver`."""
    lock = threading.Lock()
    rec = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            enc = self.headers.get("Content-Encoding", "")
            if enc == "gzip":
                body = gzip.decompress(body)
            elif enc == "deflate":
                body = zlib.decompress(body)
            req = ExportTraceServiceRequest()
            req.ParseFromString(body)
            got = []
            for rs in req.resource_spans:
                res = {a.key: _value(a.value) for a in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for sp in ss.spans:
                        got.append(ReceivedSpan(sp.name, sp.trace_id.hex(), sp.span_id.hex(), sp.parent_span_id.hex(),
                                                {a.key: _value(a.value) for a in sp.attributes}, res,
                                                sp.status.code))
            with lock:
                rec.posts += 1
                rec.paths.append(self.path)
                rec.spans.extend(got)
            out = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):  # quiet
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    rec.url = f"http://127.0.0.1:{srv.server_address[1]}"
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield rec
    srv.shutdown()
    srv.server_close()
