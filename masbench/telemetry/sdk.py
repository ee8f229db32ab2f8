"""The OpenTelemetry SDK side: a tracer provider with one span processor and exporter, and the
W3C trace-context carrier a worker process parents its spans with. Imported only when telemetry
is on (:mod:`.state`), so ``import masbench.telemetry`` never loads OpenTelemetry.

The exporter is OTLP over HTTP/protobuf unless one is given (tests give the SDK's
``InMemorySpanExporter``). It reads the standard variables itself: ``OTEL_EXPORTER_OTLP_ENDPOINT``
(``/v1/traces`` appended) or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (as is), ``…_HEADERS``,
``…_TIMEOUT``, ``…_COMPRESSION``; the resource reads ``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES``. Spans go through a ``BatchSpanProcessor`` (a span's end only
enqueues it; a background thread exports), flushed at the end of a run.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import PackageNotFoundError, version

from opentelemetry import context, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..version import DISTRIBUTION, __version__
from .genai import SCHEMA_URL

_PROPAGATOR = TraceContextTextMapPropagator()


def _version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # a source tree without installed metadata
        return __version__


def otlp_exporter() -> SpanExporter:
    """The OTLP/HTTP span exporter, configured by the standard ``OTEL_EXPORTER_OTLP_*`` variables.
    A ``grpc`` protocol asks for the gRPC exporter (not in the ``otel`` extra)."""
    proto = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if proto == "grpc":
        try:  # by name: the gRPC exporter is not in the otel extra (nor in the type checker's view)
            grpc = importlib.import_module("opentelemetry.exporter.otlp.proto.grpc.trace_exporter")
        except ImportError as exc:
            raise ImportError("OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the gRPC exporter: "
                              "pip install opentelemetry-exporter-otlp-proto-grpc (or use http/protobuf, "
                              "the default)") from exc
        return grpc.OTLPSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


class Sdk:
    """One tracer provider and its tracer (what :mod:`.state` holds while telemetry is on)."""

    def __init__(self, exporter: SpanExporter | None = None, batch: bool = True):
        """``exporter``: where spans go (None: OTLP/HTTP from the environment); ``batch``: export
        from a background thread (False: synchronously at each span's end, for tests)."""
        # the resource: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME are read by Resource.create (a
        # project for Phoenix: openinference.project.name=...); the attributes given here win over them,
        # so service.name is given only when neither variable names it
        attrs = {"service.version": _version()}
        named = {kv.partition("=")[0].strip() for kv in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "").split(",")}
        if not os.environ.get("OTEL_SERVICE_NAME") and "service.name" not in named:
            attrs["service.name"] = "masbench"
        self.provider = TracerProvider(resource=Resource.create(attrs))
        exp = exporter if exporter is not None else otlp_exporter()
        self.provider.add_span_processor(BatchSpanProcessor(exp) if batch else SimpleSpanProcessor(exp))
        self.tracer = self.provider.get_tracer("masbench", _version(), schema_url=SCHEMA_URL)
        self.trace = trace
        self.context = context
        self.error = trace.StatusCode.ERROR
        self.client = trace.SpanKind.CLIENT
        self.internal = trace.SpanKind.INTERNAL

    def flush(self, timeout_s: float) -> bool:
        """Export every ended span now (blocks up to ``timeout_s``)."""
        return self.provider.force_flush(int(timeout_s * 1000))

    def shutdown(self) -> None:
        """Flush and stop the processor (the provider is unusable afterwards)."""
        self.provider.shutdown()

    def traceparent(self) -> str | None:
        """The W3C ``traceparent`` of the current span (None outside any span)."""
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier)
        return carrier.get("traceparent")

    def attach(self, traceparent: str) -> object:
        """Make a remote parent (a ``traceparent``) current; returns the token to :meth:`detach`."""
        return context.attach(_PROPAGATOR.extract({"traceparent": traceparent}))

    def detach(self, token: object) -> None:
        context.detach(token)  # pyright: ignore[reportArgumentType]  # the token attach returned


__all__ = ["Sdk", "otlp_exporter"]
