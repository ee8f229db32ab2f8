"""What the fake server is told (:class:`ServerConfig`) and what it counts (:class:`ServerStats`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: The fault kinds the server can inject.
FAIL_KINDS: tuple[str, ...] = ("429", "500", "503", "timeout", "disconnect", "400", "401", "404")

_ERROR_BODIES: dict[str, tuple[int, str, str]] = {
    "429": (429, "rate_limit_exceeded", "Rate limit reached (injected fault)."),
    "500": (500, "server_error", "The server had an error (injected fault)."),
    "503": (503, "service_unavailable", "The server is overloaded (injected fault)."),
    "timeout": (504, "timeout", "The request timed out (injected fault)."),
    "400": (400, "invalid_request_error", "Bad request (injected fault)."),
    "401": (401, "invalid_api_key", "Incorrect API key provided (injected fault)."),
    "404": (404, "model_not_found", "The model does not exist (injected fault)."),
}


@dataclass
class ServerConfig:
    """Behaviour of a :class:`FakeOpenAIServer`.

    Attributes:
        host: interface to bind; always loopback by default.
        port: TCP port; 0 picks a free ephemeral port.
        latency_ms: artificial delay added to every chat completion, in milliseconds.
        fail_rate: probability in [0, 1] that a chat completion is answered with a fault.
        fail_kinds: fault kinds drawn uniformly when a fault fires; from :data:`FAIL_KINDS`.
        timeout_sleep_s: how long a ``"timeout"`` fault hangs before answering 504.
        seed: seed of the random generator that draws faults.
        prompt_tokens: reported ``usage.prompt_tokens``; ``None`` computes
            ``ceil(total characters of the message contents / 4)``.
        completion_tokens: reported ``usage.completion_tokens`` per choice; ``None`` derives
            it from the reply length (``ceil(len(reply) / 4)``, at least 1).
        cached_tokens: reported ``usage.prompt_tokens_details.cached_tokens``.
        reply: reply text. It is a ``str.format`` template when it contains ``{``; the fields
            ``{model}``, ``{n}`` (1-based request number), ``{seed}`` (the request's seed or
            ``None``) and ``{index}`` (choice index) are available.
        model: model name reported in responses and ``/v1/models``; ``None`` echoes the
            request's ``model``.
        auth_log_limit: at most this many Authorization headers are kept in the stats.
        usage: a verbatim OpenAI ``usage`` object sent instead of the computed one (fixtures:
            a fully cached prompt, reasoning tokens, a vLLM-style object with ``null`` details).
        omit_usage: send no ``usage`` at all (not in the JSON body, no usage chunk in a stream).
        finish_reason: the ``finish_reason`` of every choice (e.g. ``"length"`` for a truncation).
        anthropic_usage: a verbatim Anthropic ``usage`` object for ``POST /v1/messages`` (default:
            ``input_tokens``/``output_tokens`` computed like the OpenAI counts).
        fail_first: the first N chat completions are faults (``fail_kinds`` in turn), whatever
            ``fail_rate`` says: a deterministic outage.
        retry_after: the ``Retry-After`` header sent with 429 and 503 faults (delta-seconds or
            an HTTP date); ``None`` sends none.
        tool_script: what a request offering ``tools`` is answered, per tool turn: a list whose
            entry *t* is one ``{"name", "arguments"}`` call or a list of them (parallel calls);
            ``None``: call the first tool offered with the last user message as ``query``, then
            answer ``Answer: <first line of the tool result>`` (see
            :mod:`~masbench.testing.openai_server.tool_wire`).
    """

    host: str = "127.0.0.1"
    port: int = 0
    latency_ms: float = 0.0
    fail_rate: float = 0.0
    fail_kinds: tuple[str, ...] = ("429", "500", "503")
    timeout_sleep_s: float = 30.0
    seed: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int = 0
    reply: str = "The answer is computed. Answer: 42"
    model: str | None = None
    auth_log_limit: int = 100_000
    usage: dict[str, Any] | None = None
    omit_usage: bool = False
    finish_reason: str = "stop"
    anthropic_usage: dict[str, Any] | None = None
    fail_first: int = 0
    retry_after: str | None = None
    tool_script: list[Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.fail_kinds, str):
            self.fail_kinds = tuple(k.strip() for k in self.fail_kinds.split(",") if k.strip())
        self.fail_kinds = tuple(str(k) for k in self.fail_kinds)
        unknown = [k for k in self.fail_kinds if k not in FAIL_KINDS]
        if unknown:
            raise ValueError(f"unknown fail_kinds {unknown}; choose from {list(FAIL_KINDS)}")
        if not 0.0 <= float(self.fail_rate) <= 1.0:
            raise ValueError(f"fail_rate must be in [0, 1], got {self.fail_rate}")
        if self.fail_rate > 0 and not self.fail_kinds:
            raise ValueError("fail_rate > 0 needs at least one fail_kind")
        if self.latency_ms < 0 or self.timeout_sleep_s < 0 or self.cached_tokens < 0:
            raise ValueError("latency_ms, timeout_sleep_s and cached_tokens must be >= 0")


@dataclass
class ServerStats:
    """Counters kept by the server (mutated only on the server's event loop).

    Attributes:
        requests: chat-completion requests received.
        by_status: chat-completion responses per HTTP status; a dropped connection is
            counted under the key ``"disconnect"``.
        faults: injected faults per kind.
        auth_headers: the ``Authorization`` header of every chat-completion request, in
            arrival order (``None`` when absent), capped at ``ServerConfig.auth_log_limit``.
        prompt_tokens / completion_tokens: totals reported in successful responses.
        request_times: ``time.monotonic()`` at the arrival of each chat completion (capped
            like ``auth_headers``).
        messages: the ``messages`` of every well-formed chat-completion request, as received, in
            arrival order (capped like ``auth_headers``): what a client really sent.
        tools: per well-formed request (capped likewise), the ``tools`` it offered (as sent; None
            when it offered none) and its ``tool_choice``: ``{"tools", "tool_choice"}``.
        fault_times: ``time.monotonic()`` when each injected fault was answered (its response
            sent: for a 429 the moment a client can learn of it), in order (capped like ``auth_headers``).
        open_now / open_max: chat completions being answered right now, and the most ever at
            once (from arrival to response): what a client's concurrency cap looks like here.
    """

    requests: int = 0
    by_status: dict[int | str, int] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)
    auth_headers: list[str | None] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    request_times: list[float] = field(default_factory=list)
    messages: list[list[Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    fault_times: list[float] = field(default_factory=list)
    open_now: int = 0
    open_max: int = 0

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (status keys become strings)."""
        d = asdict(self)
        d["by_status"] = {str(k): v for k, v in self.by_status.items()}
        return d
