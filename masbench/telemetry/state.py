"""Whether telemetry is on, and its lifecycle: decided once from the environment (or set by
:func:`configure`), flushed at the end of a run, carried to worker processes.

Off is the default and costs one module-global check per span site: nothing imports OpenTelemetry
until telemetry is turned on. It is on when

- ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (the standard
  variables every collector documents), unless ``OTEL_SDK_DISABLED=true`` or
  ``OTEL_TRACES_EXPORTER=none``;
- or :func:`configure` is called (``masbench run --otel``: OTLP/HTTP to the variables' endpoint or
  the exporter's default, ``http://localhost:4318``; tests pass an in-memory exporter).

On without the ``otel`` extra is a :class:`TelemetryUnavailable` naming the install command.
Message content is exported only when opted in (:func:`capture_from_env`).
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - the SDK loads only when telemetry is on
    from opentelemetry.sdk.trace.export import SpanExporter

    from .sdk import Sdk

ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
"""Either one turns export on."""
CAPTURE_VAR = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The opt-in for message content (``true``; the GenAI util's ``SPAN_ONLY`` / ``SPAN_AND_EVENT`` too)."""
INSTALL = "pip install 'masbench-eval[otel]'"


class TelemetryUnavailable(RuntimeError):
    """Telemetry is on but the ``otel`` extra (the OpenTelemetry SDK and exporter) is not installed."""


@dataclass(slots=True)
class Live:
    """Telemetry while it is on: the SDK objects and how spans are filled."""

    sdk: Sdk
    """The tracer provider, tracer and OpenTelemetry modules (:class:`masbench.telemetry.sdk.Sdk`)."""
    capture: bool
    """Export message content (``gen_ai.input.messages`` / ``gen_ai.output.messages``)."""
    otlp: bool
    """Spans go to the OTLP exporter of the environment (so a worker process can do the same)."""


_live: Live | None = None
_decided = False


def env_reason() -> str | None:
    """The variable that turns export on (``NAME=value``), or None: off."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    for name in ENDPOINT_VARS:
        if os.environ.get(name, "").strip():
            return f"{name} is set"
    return None


def capture_from_env() -> bool:
    """Whether the user opted in to message content (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``)."""
    v = os.environ.get(CAPTURE_VAR, "").strip().lower()
    return v in ("true", "1", "yes", "span_only", "span_and_event")


def _load(exporter: SpanExporter | None, batch: bool, why: str) -> Sdk:
    try:
        # The optional extra: imported only now that telemetry is on (off costs no import).
        from .sdk import Sdk
    except ImportError as exc:
        raise TelemetryUnavailable(f"OpenTelemetry export is on ({why}) but the otel extra is not installed "
                                   f"({exc}): {INSTALL}, or turn it off (unset the OTEL_EXPORTER_OTLP_* "
                                   "variables)") from exc
    return Sdk(exporter, batch)


def configure(exporter: SpanExporter | None = None, *, capture_content: bool | None = None, batch: bool = True,
              why: str = "configure() was called") -> None:
    """Turn telemetry on (replacing any earlier configuration). ``exporter``: an OpenTelemetry
    ``SpanExporter`` (None: OTLP/HTTP from the ``OTEL_EXPORTER_OTLP_*`` variables);
    ``capture_content``: export message content (None: the opt-in variable decides); ``batch``:
    a background-thread ``BatchSpanProcessor`` (False: export at each span's end). Raises
    :class:`TelemetryUnavailable` without the ``otel`` extra."""
    global _live, _decided
    sdk = _load(exporter, batch, why)
    shutdown()
    _live = Live(sdk, capture_from_env() if capture_content is None else capture_content, exporter is None)
    _decided = True


def decide() -> Live | None:
    """Decide from the environment now (once; :func:`configure` and :func:`disable` decide too).
    A run calls it first, so a missing extra is reported before anything runs."""
    global _live, _decided
    if not _decided:
        why = env_reason()
        _live = None if why is None else Live(_load(None, True, why), capture_from_env(), True)
        _decided = True
    return _live


def current() -> Live | None:
    """Telemetry if on (decided from the environment on first use), else None."""
    return _live if _decided else decide()


def enabled() -> bool:
    """Whether spans are being exported."""
    return current() is not None


def flush(timeout_s: float = 30.0) -> bool:
    """Export every ended span now (blocking up to ``timeout_s``); True when off or all exported."""
    lv = _live
    return True if lv is None else lv.sdk.flush(timeout_s)


async def aflush(timeout_s: float = 30.0) -> bool:
    """:func:`flush` off the event loop (in a thread); returns at once when off."""
    if _live is None:
        return True
    return await asyncio.to_thread(flush, timeout_s)


def shutdown() -> None:
    """Flush and stop the current exporter (telemetry stays decided: off until configured again)."""
    global _live
    lv, _live = _live, None
    if lv is not None:
        lv.sdk.shutdown()


def disable() -> None:
    """Turn telemetry off (whatever the environment says) until :func:`configure` or :func:`reset`."""
    global _decided
    shutdown()
    _decided = True


def reset() -> None:
    """Forget the decision: the environment decides again on next use (tests)."""
    global _decided
    shutdown()
    _decided = False


def carrier() -> dict[str, Any] | None:
    """What a worker process needs to export like this one, parented under the current span:
    ``{"traceparent", "capture"}``, or None when off or exporting somewhere a child cannot reach
    (a test's in-memory exporter)."""
    lv = current()
    if lv is None or not lv.otlp:
        return None
    return {"traceparent": lv.sdk.traceparent(), "capture": lv.capture}


class _Joined:
    __slots__ = ("tp", "token")

    def __init__(self, tp: str):
        self.tp = tp
        self.token: object = None

    def __enter__(self) -> None:
        lv = _live
        if lv is not None:
            self.token = lv.sdk.attach(self.tp)

    def __exit__(self, *exc: object) -> None:
        lv = _live
        if lv is not None and self.token is not None:
            lv.sdk.detach(self.token)


def joined(c: dict[str, Any] | None) -> AbstractContextManager[None, None]:
    """In a worker process: turn telemetry on as the parent's :func:`carrier` says (if the
    environment has not already) and make the parent's span the current parent inside the block."""
    if c is None:
        return nullcontext()
    if current() is None:
        configure(capture_content=bool(c.get("capture")), why="the parent process exports spans")
    elif c.get("capture") and _live is not None:
        _live.capture = True
    tp = c.get("traceparent")
    return _Joined(tp) if tp else nullcontext()


__all__ = ["CAPTURE_VAR", "ENDPOINT_VARS", "INSTALL", "Live", "TelemetryUnavailable", "aflush", "capture_from_env",
           "carrier", "configure", "current", "decide", "disable", "enabled", "env_reason", "flush", "joined", "reset",
           "shutdown"]
