"""Which model errors are worth retrying."""

from __future__ import annotations

import asyncio

from ._litellm import litellm

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_RETRYABLE_TYPES: tuple[type[BaseException], ...] = tuple(
    t for t in (
        getattr(litellm, "RateLimitError", None),
        getattr(litellm, "InternalServerError", None),
        getattr(litellm, "ServiceUnavailableError", None),
        getattr(litellm, "APIConnectionError", None),
        getattr(litellm, "Timeout", None),
        asyncio.TimeoutError,
        TimeoutError,
        ConnectionError,
    ) if isinstance(t, type)
)
_FATAL_TYPES: tuple[type[BaseException], ...] = tuple(
    t for t in (
        getattr(litellm, "AuthenticationError", None),
        getattr(litellm, "PermissionDeniedError", None),
        getattr(litellm, "BadRequestError", None),
        getattr(litellm, "NotFoundError", None),
        getattr(litellm, "ContextWindowExceededError", None),
        getattr(litellm, "ContentPolicyViolationError", None),
    ) if isinstance(t, type)
)


_FATAL_MESSAGES = ("Missing credentials", "Incorrect API key", "invalid_api_key", "api_key client option must be set")


class SimFault(Exception):
    """A fault injected by the simulator, shaped like a provider error."""

    def __init__(self, status_code: int, message: str):
        super().__init__(message)
        self.status_code = status_code


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors are retried; auth and bad requests are not."""
    if _FATAL_TYPES and isinstance(exc, _FATAL_TYPES):
        return False
    text = str(exc)
    if any(m in text for m in _FATAL_MESSAGES):  # litellm maps some auth problems to 500
        return False
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in RETRYABLE_STATUS or 500 <= status < 600
    return isinstance(exc, _RETRYABLE_TYPES)


def describe(exc: BaseException) -> str:
    """A short, secret-free description of an error for the call log."""
    status = getattr(exc, "status_code", None)
    msg = str(exc).splitlines()[0] if str(exc) else ""
    msg = msg[:300]
    return f"{type(exc).__name__}" + (f"[{status}]" if status else "") + (f": {msg}" if msg else "")
