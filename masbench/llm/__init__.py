"""The one gateway to models: litellm for every provider, ``embedded/…`` (in-process llama.cpp)
and ``sim/…`` (seeded simulator, always labelled simulated) — one backend per provider in
:data:`BACKENDS`, which code outside masbench may extend."""

from __future__ import annotations

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

__all__ = [
    "Attempt", "BACKENDS", "Backend", "BUILTIN_PROFILES", "CallResult", "FREE", "Gateway", "MESSAGE_EXTRA",
    "ModelBackend", "ModelUnavailable", "Prices", "RecordSink", "Reply", "ResponseCache", "ScriptBackend",
    "ScriptedGateway", "SimFault", "Simulator", "Sink", "TranscriptRecorder", "Usage", "backend_class", "cache_key",
    "is_retryable", "is_simulated", "metered_call", "ModelOverride", "models_from", "overrides_json", "profile_for", "provider_of", "require_prices",
    "resolve_prices", "skill_accuracy", "wrong_answer",
]
