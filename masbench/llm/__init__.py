"""The one gateway to models: litellm for every provider, ``embedded/…`` (in-process llama.cpp)
and ``sim/…`` (seeded simulator, always labelled simulated)."""

from __future__ import annotations

from .backends import Attempt, Backend, Reply
from .cache import ResponseCache, cache_key
from .errors import SimFault, is_retryable
from .gateway import CallResult, Gateway, models_from, prompt_token_bound
from .metered import metered_call
from .pricing import Prices, require_prices, resolve_prices
from .scripted import ScriptBackend, ScriptedGateway
from .sim import BUILTIN_PROFILES, Simulator, profile_for, skill_accuracy, wrong_answer

__all__ = [
    "Attempt", "Backend", "BUILTIN_PROFILES", "Reply", "CallResult", "Gateway", "Prices", "ResponseCache", "ScriptBackend", "ScriptedGateway", "SimFault", "Simulator", "cache_key",
    "is_retryable", "metered_call", "models_from", "prompt_token_bound", "profile_for", "require_prices", "resolve_prices", "skill_accuracy", "wrong_answer",
]
