"""Which model errors are retried, which stop a run, what Retry-After says, and the hints — each
rule checked on hand-built exceptions against a hand-written table (issue 29). The gateway-level
consequence (a bad request is sent once, and the same one on N cells kills the model) is in
``test_a_bad_request_is_sent_once_and_the_same_one_on_n_cells_kills_the_model``."""

from __future__ import annotations

import asyncio
import email.utils
import sys
import time
import types

import httpx
import openai
import pytest

from masbench.llm import Gateway, errors
from masbench.llm._litellm import litellm
from masbench.llm.backends import Attempt, Reply
from masbench.llm.errors import SimFault, describe, is_retryable, misconfig_hint, retry_after_s, systemic_reason
from masbench.llm.health import BreakerConfig
from masbench.spec import ModelSpec


class E(Exception):
    """An error with an HTTP status, like a provider's."""

    def __init__(self, msg: str = "", status=None):
        super().__init__(msg)
        self.status_code = status


@pytest.fixture
def no_litellm(monkeypatch):
    """The state before the gateway ever imported litellm or the ``openai`` SDK (``_types`` is a
    per-process cache)."""
    monkeypatch.setattr(errors, "_types", None)
    monkeypatch.delitem(sys.modules, "litellm", raising=False)
    monkeypatch.delitem(sys.modules, "openai", raising=False)


def _fake_litellm(**classes) -> types.ModuleType:
    mod = types.ModuleType("litellm")
    for name, cls in classes.items():
        setattr(mod, name, cls)
    return mod


# ----- is_retryable --------------------------------------------------------------------------------

# written out by hand: 408 request timeout, 409 conflict, 425 too early, 429 too many requests,
# and every 5xx (the Cloudflare 520/522/524 and Anthropic's 529 are 5xx too); no other status
HAND_RETRYABLE = {408, 409, 425, 429} | set(range(500, 600))


def test_by_status_only_408_409_425_429_and_every_5xx_are_retried(no_litellm) -> None:
    for status in range(100, 700):
        assert is_retryable(E("x", status)) == (status in HAND_RETRYABLE), status
    assert not is_retryable(SimFault(400, "simulated bad_request fault"))
    assert is_retryable(SimFault(503, "simulated server_error fault"))


def test_without_a_status_the_type_decides(no_litellm) -> None:
    assert is_retryable(TimeoutError()) and is_retryable(asyncio.TimeoutError())
    assert is_retryable(ConnectionError()) and is_retryable(ConnectionResetError())
    assert not is_retryable(ValueError("x")) and not is_retryable(RuntimeError("backend down"))
    assert not is_retryable(E("x", None))
    assert not is_retryable(E("x", "503"))  # a status that is not an int is no status: the type decides
    err = ConnectionError("x")
    err.status_code = "503"  # type: ignore[attr-defined]
    assert is_retryable(err)
    err.status_code = 400  # type: ignore[attr-defined]  # an int status wins over the type
    assert not is_retryable(err)


@pytest.mark.parametrize("msg", ["Missing credentials", "Incorrect API key", "invalid_api_key",
                                 "api_key client option must be set"])
def test_auth_messages_are_never_retried_whatever_the_status(no_litellm, msg) -> None:
    assert not is_retryable(E(f"OpenAIException - {msg}. Please pass it", 500))
    assert not is_retryable(TimeoutError(f"oops: {msg}"))
    assert is_retryable(E(f"OpenAIException - {msg[:-1]}", 500))  # one letter short: not the message


def test_litellm_types_fatal_first_then_status_then_retryable(no_litellm, monkeypatch) -> None:
    made = {n: type(n, (Exception,), {}) for n in (
        "RateLimitError", "InternalServerError", "ServiceUnavailableError", "APIConnectionError", "Timeout",
        "AuthenticationError", "PermissionDeniedError", "BadRequestError", "NotFoundError",
        "ContextWindowExceededError", "ContentPolicyViolationError")}
    monkeypatch.setitem(sys.modules, "litellm", _fake_litellm(**made))
    for n in ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "APIConnectionError", "Timeout"):
        assert is_retryable(made[n]("x")), n  # no status: retried by type
    for n in ("AuthenticationError", "PermissionDeniedError", "BadRequestError", "NotFoundError",
              "ContextWindowExceededError", "ContentPolicyViolationError"):
        fatal = made[n]("x")
        fatal.status_code = 503  # fatal by type even with a retryable status
        assert not is_retryable(fatal), n
    assert is_retryable(TimeoutError()) and is_retryable(ConnectionError())  # the base types stay
    assert not is_retryable(ValueError("x"))
    retry, fatal_types = errors._types
    assert len(retry) == 5 + 3 and len(fatal_types) == 6

    # read once per process: a later litellm module is not looked at again
    monkeypatch.setitem(sys.modules, "litellm", _fake_litellm())
    assert not is_retryable(made["BadRequestError"]("x"))
    assert is_retryable(made["RateLimitError"]("x"))


def test_a_litellm_name_that_is_not_a_type_is_left_out(no_litellm, monkeypatch) -> None:
    Rate = type("RateLimitError", (Exception,), {})
    monkeypatch.setitem(sys.modules, "litellm", _fake_litellm(RateLimitError=Rate, Timeout="not a type",
                                                              BadRequestError=None))
    assert is_retryable(Rate("x")) and not is_retryable(ValueError("x"))
    assert errors._types == ((Rate, asyncio.TimeoutError, TimeoutError, ConnectionError), ())


def test_before_litellm_is_imported_nothing_is_cached(no_litellm, monkeypatch) -> None:
    assert not is_retryable(ValueError("x"))
    assert errors._types is None  # litellm absent: not cached, so its types are found once it is loaded
    Rate = type("RateLimitError", (Exception,), {})
    monkeypatch.setitem(sys.modules, "litellm", _fake_litellm(RateLimitError=Rate))
    assert is_retryable(Rate("x"))


def test_real_litellm_errors(monkeypatch) -> None:
    litellm = pytest.importorskip("litellm")
    monkeypatch.setattr(errors, "_types", None)
    assert is_retryable(litellm.RateLimitError("slow down", "openai", "m"))
    assert is_retryable(litellm.InternalServerError("oops", "openai", "m"))
    assert not is_retryable(litellm.BadRequestError("unknown parameter", "m", "openai"))
    assert not is_retryable(litellm.NotFoundError("no such model", "m", "openai"))
    assert not is_retryable(litellm.InternalServerError("Missing credentials. Please pass an api_key", "openai", "m"))


# ----- describe --------------------------------------------------------------------------------------

def test_describe_is_type_status_and_the_first_line_cut_at_300() -> None:
    assert describe(SimFault(429, "slow down\nsecond line")) == "SimFault[429]: slow down"
    assert describe(ValueError()) == "ValueError"
    assert describe(E("boom", 0)) == "E: boom"  # status 0: no brackets
    assert describe(E("boom", None)) == "E: boom"
    assert describe(E("\nsecond", 500)) == "E[500]"  # an empty first line: no message
    assert describe(ValueError("x" * 301 + "\n")) == "ValueError: " + "x" * 300


# ----- the two HTTP clients' errors: one description whichever client raised it ---------------------

_REQ = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def _sdk(cls: type[openai.APIStatusError], status: int, text: str, body: object = None) -> openai.APIStatusError:
    return cls(text, response=httpx.Response(status, request=_REQ), body=body)


# the openai SDK's class per HTTP status, written out from its documentation (its README's error
# table): 400 BadRequestError, 401 AuthenticationError, 403 PermissionDeniedError, 404
# NotFoundError, 409 ConflictError, 422 UnprocessableEntityError, 429 RateLimitError, >= 500
# InternalServerError, any other status APIStatusError
SDK_NAME_BY_STATUS = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                      404: "NotFoundError", 409: "ConflictError", 422: "UnprocessableEntityError",
                      429: "RateLimitError", 500: "InternalServerError", 502: "InternalServerError",
                      499: "APIStatusError", 418: "APIStatusError", 408: "APIStatusError"}


@pytest.mark.parametrize("status", sorted(SDK_NAME_BY_STATUS))
def test_an_sdk_error_is_named_by_its_status_whatever_class_carried_it(status) -> None:
    # the generic APIStatusError class: the name comes from the status, as the SDK itself would pick it
    e = _sdk(openai.APIStatusError, status, f"Error code: {status} - the provider's words")
    assert describe(e) == f"{SDK_NAME_BY_STATUS[status]}[{status}]: the provider's words"


@pytest.mark.parametrize("exc, want", [
    # the error body's message wins over the text
    (lambda: _sdk(openai.RateLimitError, 429, "Error code: 429 - {'error': {'message': 'slow down'}}",
                  {"message": "slow down"}), "RateLimitError[429]: slow down"),
    # no body, an empty message, a message that is not text: the text without the client's prefix
    (lambda: _sdk(openai.RateLimitError, 429, "Error code: 429 - rate limited\nsecond line"),
     "RateLimitError[429]: rate limited"),
    (lambda: _sdk(openai.InternalServerError, 503, "Error code: 503 - busy", {"message": ""}),
     "InternalServerError[503]: busy"),
    (lambda: _sdk(openai.APIStatusError, 418, "Error code: 418 - teapot", {"message": 5}), "APIStatusError[418]: teapot"),
    # litellm's prefixes, both forms
    (lambda: _sdk(openai.RateLimitError, 429, "litellm.RateLimitError: RateLimitError: OpenAIException - slow down"),
     "RateLimitError[429]: slow down"),
    (lambda: litellm.RateLimitError("slow down", "openai", "m"), "RateLimitError[429]: slow down"),
    (lambda: litellm.ServiceUnavailableError("svc", "openai", "m"), "InternalServerError[503]: svc"),
    (lambda: litellm.BadRequestError("bad param", "m", "openai"), "BadRequestError[400]: bad param"),
    # no HTTP answer: no status, the SDK's own words (litellm says 408 for its timeout)
    (lambda: openai.APITimeoutError(request=_REQ), "APITimeoutError: Request timed out."),
    (lambda: openai.APIConnectionError(request=_REQ), "APIConnectionError: Connection error."),
    (lambda: litellm.Timeout("t", "m", "openai"), "APITimeoutError: Request timed out."),
    # the provider's message is cut like any other
    (lambda: _sdk(openai.NotFoundError, 404, "Error code: 404 - " + "y" * 400), "NotFoundError[404]: " + "y" * 300),
], ids=["body", "no-body", "empty-message", "non-text-message", "litellm-prefix", "litellm-429", "litellm-503",
        "litellm-400", "sdk-timeout", "sdk-connection", "litellm-timeout", "cut"])
def test_describe_an_http_clients_error(exc, want) -> None:
    assert describe(exc()) == want


def test_only_the_sdks_own_module_makes_an_sdk_error() -> None:
    # a class of another package whose name starts with "openai" keeps its own name, status and text
    look = type("Lookalike", (Exception,), {"__module__": "openai_compat.errors", "status_code": 429})
    assert describe(look("Error code: 429 - x")) == "Lookalike[429]: Error code: 429 - x"
    # a subclass of an SDK error defined anywhere is an SDK error (its MRO reaches the SDK's class)
    sub = type("MyRateLimit", (openai.RateLimitError,), {"__module__": "mypkg"})
    assert describe(_sdk(sub, 429, "Error code: 429 - slow")) == "RateLimitError[429]: slow"
    # a class of a submodule of the SDK is the SDK's (the first dotted segment decides), even one
    # without the SDK's error body
    inner = type("APIStatusError", (Exception,), {"__module__": "openai.lib.azure", "status_code": 429})
    assert describe(inner("Error code: 429 - rate limited")) == "RateLimitError[429]: rate limited"


def test_the_sdks_types_count_before_litellm_is_imported(no_litellm, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", openai)
    retry, fatal = errors._client_types()
    assert retry == (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError, openai.Timeout,
                     openai.APITimeoutError, asyncio.TimeoutError, TimeoutError, ConnectionError)
    assert fatal == (openai.AuthenticationError, openai.PermissionDeniedError, openai.BadRequestError,
                     openai.NotFoundError)
    assert errors._types is None  # litellm not in yet: looked up again on the next failed attempt
    assert is_retryable(openai.APITimeoutError(request=_REQ))  # no status: the type decides
    assert not is_retryable(type("Denied", (openai.PermissionDeniedError,), {})(
        "no", response=httpx.Response(500, request=_REQ), body=None))  # a fatal type whatever its status
    # with litellm in too, its types come first, the SDK's after them, and the pair is cached
    Rate = type("RateLimitError", (Exception,), {})
    Auth = type("AuthenticationError", (Exception,), {})
    monkeypatch.setitem(sys.modules, "litellm", _fake_litellm(RateLimitError=Rate, AuthenticationError=Auth))
    retry, fatal = errors._client_types()
    assert retry[:2] == (Rate, openai.RateLimitError) and fatal[:2] == (Auth, openai.AuthenticationError)
    assert errors._types == (retry, fatal)


# ----- systemic_reason -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["AuthenticationError", "PermissionDeniedError", "NotFoundError", "PermissionError"])
def test_systemic_by_class_name_and_its_bases(name) -> None:
    cls = type(name, (Exception,), {})
    assert systemic_reason(cls("whatever")) == f"{name}: whatever"
    sub = type("Sub", (cls,), {})
    assert systemic_reason(sub("x")) == "Sub: x"


def test_systemic_by_status_only_401_403_404() -> None:
    for status in range(100, 700):
        want = f"E[{status}]: x" if status in (401, 403, 404) else None
        assert systemic_reason(E("x", status)) == want, status
    assert systemic_reason(E("x")) is None and systemic_reason(ValueError("x")) is None


@pytest.mark.parametrize("msg", ["Missing credentials", "Incorrect API key", "invalid_api_key",
                                 "api_key client option must be set", "LLM Provider NOT provided",
                                 "model_not_found", "does not exist", "environment variable",
                                 "Invalid API Key", "invalid x-api-key", "No API key", "Unauthorized"])
def test_systemic_by_message(msg) -> None:
    assert systemic_reason(E(f"... {msg} ...", 500)) == f"E[500]: ... {msg} ..."
    assert systemic_reason(RuntimeError(msg)) == f"RuntimeError: {msg}"
    assert systemic_reason(RuntimeError(msg[1:])) is None  # one letter short: not the message


# ----- retry_after_s ---------------------------------------------------------------------------------

class Resp:
    def __init__(self, headers):
        self.headers = headers


def _err(response=None, litellm_headers=None) -> Exception:
    e = E("x", 429)
    if response is not None:
        e.response = response  # type: ignore[attr-defined]
    if litellm_headers is not None:
        e.litellm_response_headers = litellm_headers  # type: ignore[attr-defined]
    return e


def test_retry_after_delta_seconds() -> None:
    assert retry_after_s(_err(Resp({"retry-after": "2"}))) == 2.0
    assert retry_after_s(_err(Resp({"Retry-After": " 3.5 "}))) == 3.5
    assert retry_after_s(_err(Resp({"retry-after": 5}))) == 5.0
    assert retry_after_s(_err(Resp({"retry-after": "-4"}))) == 0.0  # never negative
    assert retry_after_s(_err(Resp({"retry-after": "0"}))) == 0.0
    assert retry_after_s(_err(Resp({"retry-after": "1", "Retry-After": "9"}))) == 1.0


def test_retry_after_http_date() -> None:
    assert retry_after_s(_err(Resp({"retry-after": email.utils.formatdate(1_000_030.0, usegmt=True)})),
                         now=1_000_000.0) == pytest.approx(30.0)
    assert retry_after_s(_err(Resp({"retry-after": email.utils.formatdate(1_000_000.0, usegmt=True)})),
                         now=1_000_030.0) == 0.0  # in the past
    # without `now`: from the wall clock (a date an hour ahead is ~3600 s away, whatever the second)
    ahead = retry_after_s(_err(Resp({"retry-after": email.utils.formatdate(time.time() + 3600, usegmt=True)})))
    assert ahead is not None and 3500 < ahead <= 3600


def test_retry_after_where_the_headers_are() -> None:
    assert retry_after_s(_err(litellm_headers={"retry-after": "4"})) == 4.0  # litellm's copy
    assert retry_after_s(_err(Resp({}), litellm_headers={"retry-after": "4"})) == 4.0  # empty response headers
    assert retry_after_s(_err(Resp(None), litellm_headers={"retry-after": "4"})) == 4.0
    assert retry_after_s(_err(Resp({"retry-after": "1"}), litellm_headers={"retry-after": "4"})) == 1.0
    assert retry_after_s(_err(Resp({"x-other": "1"}), litellm_headers={"retry-after": "4"})) is None
    e = E("x", 429)
    e.headers = {"retry-after": "4"}  # type: ignore[attr-defined]  # the exception's own `headers` are not read
    assert retry_after_s(e) is None


def test_retry_after_absent_or_unreadable_is_none() -> None:
    assert retry_after_s(E("x", 429)) is None
    assert retry_after_s(_err(Resp({}))) is None
    assert retry_after_s(_err(Resp({"retry-after": None}))) is None
    assert retry_after_s(_err(Resp({"retry-after": "soon"}))) is None
    assert retry_after_s(_err(Resp({"retry-after": ""}))) is None

    class Bad:
        def __bool__(self):
            return True

        def get(self, key):
            raise KeyError(key)

    assert retry_after_s(_err(Resp(Bad()))) is None


# ----- misconfig_hint --------------------------------------------------------------------------------

def test_hint_names_the_key_env_first() -> None:
    assert misconfig_hint("openai/x", "MY_KEY", "AuthenticationError: no") == \
        "set the environment variable MY_KEY (named by the model's api_key_env)"


def test_hint_from_litellm_missing_keys(monkeypatch) -> None:
    seen = []

    def validate_environment(model):
        seen.append(model)
        return {"missing_keys": ["A_KEY", "B_KEY"]}

    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(validate_environment=validate_environment))
    assert misconfig_hint("openai/x", None, "NotFoundError: x") == "set the environment variable A_KEY or B_KEY"
    assert seen == ["openai/x"]


@pytest.mark.parametrize("validate", [lambda model: {"missing_keys": None}, lambda model: {},
                                      lambda model: {"missing_keys": []}, lambda model: 1 / 0])
def test_hint_falls_back_when_litellm_names_no_key(monkeypatch, validate) -> None:
    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(validate_environment=validate))
    assert misconfig_hint("openai/x", None, "E: boom") == "check the model's credentials and id"


@pytest.mark.parametrize("reason", ["NotFoundError[404]: no", "E: model gpt-9 does not exist",
                                    "E: LLM Provider NOT provided. Pass"])
def test_hint_for_an_unknown_model(monkeypatch, reason) -> None:
    monkeypatch.delitem(sys.modules, "litellm", raising=False)
    assert misconfig_hint("gpt-9", None, reason) == "check the model id 'gpt-9' (a litellm id like 'openai/gpt-4o-mini')"
    assert misconfig_hint("gpt-9", "", reason).startswith("check the model id")  # an empty env name is none


def test_hint_generic(monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "litellm", raising=False)
    assert misconfig_hint("m", None, "AuthenticationError: no") == "check the model's credentials and id"


def test_sim_fault_carries_its_status() -> None:
    f = SimFault(503, "simulated")
    assert f.status_code == 503 and str(f) == "simulated"


# ----- through the gateway ---------------------------------------------------------------------------

async def test_a_bad_request_is_sent_once_and_the_same_one_on_n_cells_kills_the_model(no_litellm) -> None:
    sent: list[tuple] = []

    async def backend(a: Attempt) -> Reply:
        sent.append((a.tags.get("task_id"), a.attempt))
        raise SimFault(400, "unknown parameter 'foo'")

    gw = Gateway({"m": ModelSpec(id="openai/x", price=0, max_attempts=4)}, backend=backend,
                 retry_base_s=0.001, retry_max_s=0.002, breaker=BreakerConfig(bad_request_streak=3))
    msgs = [{"role": "user", "content": "q"}]
    for i in range(3):
        r = await gw.complete("m", msgs, tags={"design": "cot", "task_id": f"t{i}", "seed": 0})
        assert not r.ok and r.attempts == 1  # not retried
    assert sent == [("t0", 1), ("t1", 1), ("t2", 1)]
    reason = "the same bad request on 3 distinct cells in a row: SimFault[400]: unknown parameter 'foo'"
    assert gw.fatal == ("m", "openai/x", reason)
    r = await gw.complete("m", msgs, tags={"design": "cot", "task_id": "t3", "seed": 0})
    assert r.attempts == 0 and reason in (r.error or "") and len(sent) == 3  # not sent: the model is dead


async def test_a_retryable_error_is_sent_max_attempts_times(no_litellm) -> None:
    sent: list[int] = []

    async def backend(a: Attempt) -> Reply:
        sent.append(a.attempt)
        raise SimFault(503, "overloaded")

    gw = Gateway({"m": ModelSpec(id="openai/x", price=0, max_attempts=3)}, backend=backend,
                 retry_base_s=0.001, retry_max_s=0.002, breaker=BreakerConfig(threshold=100))
    r = await gw.complete("m", [{"role": "user", "content": "q"}])
    assert not r.ok and r.attempts == 3 and sent == [1, 2, 3] and gw.fatal is None
