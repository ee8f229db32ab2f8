"""Which model errors are worth retrying."""

from __future__ import annotations

import asyncio
import email.utils
import re
import sys
import time

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_BASE_RETRYABLE: tuple[type[BaseException], ...] = (asyncio.TimeoutError, TimeoutError, ConnectionError)
_types: tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]] | None = None


def _client_types() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(retryable, fatal) exception types of the clients loaded so far: litellm's and the
    ``openai`` SDK's (litellm's are subclasses of the SDK's). Both are imported lazily (litellm's
    import costs ~2 s); a client never imported has raised nothing yet. Cached once litellm is in
    (it imports the SDK); before that they are looked up on each call (only failed attempts ask)."""
    global _types
    if _types is not None:
        return _types
    retry: list[type[BaseException]] = []
    fatal: list[type[BaseException]] = []
    mods = [sys.modules.get("litellm"), sys.modules.get("openai")]
    for mod in mods:
        if mod is None:
            continue
        retry += [t for t in (getattr(mod, n, None) for n in (
            "RateLimitError", "InternalServerError", "ServiceUnavailableError", "APIConnectionError", "Timeout",
            "APITimeoutError")) if isinstance(t, type)]
        fatal += [t for t in (getattr(mod, n, None) for n in (
            "AuthenticationError", "PermissionDeniedError", "BadRequestError", "NotFoundError",
            "ContextWindowExceededError", "ContentPolicyViolationError")) if isinstance(t, type)]
    found = (tuple(retry) + _BASE_RETRYABLE, tuple(fatal))
    if mods[0] is not None:
        _types = found
    return found


_FATAL_MESSAGES = ("Missing credentials", "Incorrect API key", "invalid_api_key", "api_key client option must be set")


class SimFault(Exception):
    """A fault injected by the simulator, shaped like a provider error."""

    def __init__(self, status_code: int, message: str):
        super().__init__(message)
        self.status_code = status_code


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors are retried; auth and bad requests are not."""
    retryable_types, fatal_types = _client_types()
    if fatal_types and isinstance(exc, fatal_types):
        return False
    text = str(exc)
    if any(m in text for m in _FATAL_MESSAGES):  # litellm maps some auth problems to 500
        return False
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in RETRYABLE_STATUS or 500 <= status < 600
    return isinstance(exc, retryable_types)


_SDK_STATUS_NAMES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                     404: "NotFoundError", 409: "ConflictError", 422: "UnprocessableEntityError", 429: "RateLimitError"}
"""The ``openai`` SDK's exception per HTTP status (5xx: ``InternalServerError``; others: ``APIStatusError``)."""
_SDK_DEFAULT_MESSAGES = {"APITimeoutError": "Request timed out.", "APIConnectionError": "Connection error."}
_CLIENT_PREFIX = re.compile(r"^(?:litellm\.\w+: (?:\w+: )?(?:\w+ - )?|Error code: \d+ - )")
"""What a client puts before the provider's message: litellm's ``litellm.RateLimitError: RateLimitError:
OpenAIException - ``, the SDK's ``Error code: 429 - ``."""


def _sdk_class(exc: BaseException) -> str | None:
    """The ``openai`` SDK exception class an error is (litellm's are subclasses of the SDK's), or None."""
    return next((t.__name__ for t in type(exc).__mro__ if t.__module__.split(".", 1)[0] == "openai"), None)


def describe(exc: BaseException) -> str:
    """A short, secret-free description of an error for the call log: ``Name[status]: message``.
    An error of either HTTP client (litellm's or the ``openai`` SDK's) is described the same way
    whichever client raised it, so a call's row does not depend on its client: the SDK's class for
    the HTTP status, and the provider's own message (the error body's ``message``, else the text
    without the client's prefix); a timeout or connection error (no HTTP answer) has no status."""
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    msg = str(exc)
    sdk = _sdk_class(exc)
    if sdk in _SDK_DEFAULT_MESSAGES:  # no answer came back (litellm says 408 for its timeout)
        name, status, msg = sdk, None, _SDK_DEFAULT_MESSAGES[sdk]
    elif sdk is not None and isinstance(status, int):
        name = _SDK_STATUS_NAMES.get(status) or ("InternalServerError" if status >= 500 else "APIStatusError")
        body = getattr(exc, "body", None)
        told = body.get("message") if isinstance(body, dict) else None
        msg = told if isinstance(told, str) and told else _CLIENT_PREFIX.sub("", msg)
    msg = msg.splitlines()[0][:300] if msg else ""
    return name + (f"[{status}]" if status else "") + (f": {msg}" if msg else "")


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
