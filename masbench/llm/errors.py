"""Which model errors are worth retrying."""

from __future__ import annotations

import asyncio
import email.utils
import sys
import time

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


#: Messages that mean the model is misconfigured (credentials, model name, provider), whatever
#: status litellm gave them (it maps "Missing credentials" to a 500).
_SYSTEMIC_MESSAGES = _FATAL_MESSAGES + (
    "LLM Provider NOT provided", "model_not_found", "does not exist", "environment variable",
    "Invalid API Key", "invalid x-api-key", "No API key", "Unauthorized")
_SYSTEMIC_NAMES = ("AuthenticationError", "PermissionDeniedError", "NotFoundError", "PermissionError")


def systemic_reason(exc: BaseException) -> str | None:
    """Why this error is the model's configuration rather than one input's (auth, credentials,
    unknown model or provider), or None. A systemic error aborts a run at its first occurrence."""
    text = str(exc)
    status = getattr(exc, "status_code", None)
    names = {t.__name__ for t in type(exc).__mro__}
    if names & set(_SYSTEMIC_NAMES) or status in (401, 403, 404):
        return describe(exc)
    if any(m in text for m in _SYSTEMIC_MESSAGES):
        return describe(exc)
    return None


def retry_after_s(exc: BaseException, now: float | None = None) -> float | None:
    """The provider's ``Retry-After`` (delta-seconds or an HTTP date) on a 429/503, in seconds
    from now; None when absent or unparsable. Looks at the exception's HTTP response headers
    (openai/httpx style) and litellm's copy of them."""
    headers = None
    for obj in (getattr(exc, "response", None), exc):
        h = getattr(obj, "headers", None) if obj is not exc else getattr(exc, "litellm_response_headers", None)
        if h:
            headers = h
            break
    if not headers:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except Exception:  # noqa: BLE001 - a foreign headers object
        return None
    if value is None:
        return None
    value = str(value).strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def misconfig_hint(model_id: str, api_key_env: str | None, reason: str) -> str:
    """What to set or fix for a model that failed with a systemic error (one short clause)."""
    if api_key_env:
        return f"set the environment variable {api_key_env} (named by the model's api_key_env)"
    litellm = sys.modules.get("litellm")  # loaded by any call that reached a provider
    missing: list[str] = []
    if litellm is not None:
        try:
            missing = list(litellm.validate_environment(model=model_id).get("missing_keys") or [])
        except Exception:  # noqa: BLE001 - an id litellm cannot place: fall through to the generic hint
            missing = []
    if missing:
        return "set the environment variable " + " or ".join(missing)
    if "NotFound" in reason or "does not exist" in reason or "Provider NOT provided" in reason:
        return f"check the model id {model_id!r} (a litellm id like 'openai/gpt-4o-mini')"
    return "check the model's credentials and id"
