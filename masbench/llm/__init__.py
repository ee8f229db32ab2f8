"""The one gateway to models: litellm for every provider, ``embedded/…`` (in-process llama.cpp)
and ``sim/…`` (seeded simulator, always labelled simulated) — one backend per provider in
:data:`BACKENDS`, which code outside masbench may extend.

Each name is imported on first use (its module only): code that needs a call's result type does
not import the gateway, the simulator or a client SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .attempts import ModelUnavailable
    from .backends import BACKENDS, Attempt, Backend, ModelBackend, Reply, backend_class, is_simulated, provider_of
    from .cache import ResponseCache, cache_key
    from .errors import SimFault, is_retryable
    from .gateway import Gateway, ModelOverride, models_from, overrides_json
    from .metered import metered_call
    from .pricing import FREE, Prices, require_prices, resolve_prices
    from .record import Sink
    from .result import CallResult
    from .scripted import ScriptBackend, ScriptedGateway
    from .transcripts import MESSAGE_EXTRA, RecordSink, TranscriptRecorder
    from .sim import BUILTIN_PROFILES, Simulator, profile_for, skill_accuracy, wrong_answer
    from .usage import Usage

_EXPORTS = {
    "ModelUnavailable": "attempts", "BACKENDS": "backends", "Attempt": "backends", "Backend": "backends",
    "ModelBackend": "backends", "Reply": "backends", "backend_class": "backends", "is_simulated": "backends",
    "provider_of": "backends", "ResponseCache": "cache", "cache_key": "cache", "SimFault": "errors",
    "is_retryable": "errors", "Gateway": "gateway", "ModelOverride": "gateway", "models_from": "gateway",
    "overrides_json": "gateway", "metered_call": "metered", "FREE": "pricing", "Prices": "pricing",
    "require_prices": "pricing", "resolve_prices": "pricing", "Sink": "record", "CallResult": "result",
    "ScriptBackend": "scripted", "ScriptedGateway": "scripted", "MESSAGE_EXTRA": "transcripts",
    "RecordSink": "transcripts", "TranscriptRecorder": "transcripts", "BUILTIN_PROFILES": "sim", "Simulator": "sim",
    "profile_for": "sim", "skill_accuracy": "sim", "wrong_answer": "sim", "Usage": "usage",
}
"""Each public name → the module (of this package) that defines it."""


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = [
    "Attempt", "BACKENDS", "Backend", "BUILTIN_PROFILES", "CallResult", "FREE", "Gateway", "MESSAGE_EXTRA",
    "ModelBackend", "ModelUnavailable", "Prices", "RecordSink", "Reply", "ResponseCache", "ScriptBackend",
    "ScriptedGateway", "SimFault", "Simulator", "Sink", "TranscriptRecorder", "Usage", "backend_class", "cache_key",
    "is_retryable", "is_simulated", "metered_call", "ModelOverride", "models_from", "overrides_json", "profile_for", "provider_of", "require_prices",
    "resolve_prices", "skill_accuracy", "wrong_answer",
]
