"""Which model errors are worth retrying."""

from __future__ import annotations

import asyncio
import sys

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_BASE_RETRYABLE: tuple[type[BaseException], ...] = (asyncio.TimeoutError, TimeoutError, ConnectionError)
_types: tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]] | None = None


def _litellm_types() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(retryable, fatal) exception types. litellm is imported lazily by the gateway (its import
    costs ~2 s); if it was never imported, no litellm exception can exist yet."""
    global _types
    if _types is not None:
        return _types
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return _BASE_RETRYABLE, ()
    retry = tuple(t for t in (getattr(litellm, n, None) for n in (
        "RateLimitError", "InternalServerError", "ServiceUnavailableError", "APIConnectionError", "Timeout"))
        if isinstance(t, type)) + _BASE_RETRYABLE
    fatal = tuple(t for t in (getattr(litellm, n, None) for n in (
        "AuthenticationError", "PermissionDeniedError", "BadRequestError", "NotFoundError",
        "ContextWindowExceededError", "ContentPolicyViolationError")) if isinstance(t, type))
    _types = (retry, fatal)
    return _types


_FATAL_MESSAGES = ("Missing credentials", "Incorrect API key", "invalid_api_key", "api_key client option must be set")


class SimFault(Exception):
    """A fault injected by the simulator, shaped like a provider error."""

    def __init__(self, status_code: int, message: str):
        super().__init__(message)
        self.status_code = status_code


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors are retried; auth and bad requests are not."""
    retryable_types, fatal_types = _litellm_types()
    if fatal_types and isinstance(exc, fatal_types):
        return False
    text = str(exc)
    if any(m in text for m in _FATAL_MESSAGES):  # litellm maps some auth problems to 500
        return False
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in RETRYABLE_STATUS or 500 <= status < 600
    return isinstance(exc, retryable_types)


def describe(exc: BaseException) -> str:
    """A short, secret-free description of an error for the call log."""
    status = getattr(exc, "status_code", None)
    msg = str(exc).splitlines()[0] if str(exc) else ""
    msg = msg[:300]
    return f"{type(exc).__name__}" + (f"[{status}]" if status else "") + (f": {msg}" if msg else "")
