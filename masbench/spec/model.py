"""Model definitions: a litellm id plus prices, limits and default parameters."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from .base import Spec
from .sim import SimDifficulty, SimErrors, SimGrading, SimReaction, SimTools


class TokenDist(Spec):
    """A token-count distribution for the simulator (normal, clipped at ``min``)."""

    mean: float = Field(default=120, gt=0)
    """Mean completion tokens."""
    sd: float = Field(default=30, ge=0)
    """Standard deviation of completion tokens."""
    min: int = Field(default=1, ge=1)
    """Smallest completion length returned."""


class SimFaults(Spec):
    """Faults the simulator injects, to exercise retries and failure isolation."""

    rate: float = Field(default=0.0, ge=0, le=1)
    """Probability that one attempt fails."""
    kinds: list[Literal["rate_limit", "server_error", "timeout", "connection", "bad_request"]] = Field(
        default_factory=lambda: ["rate_limit", "server_error", "timeout"])
    """Which errors a failing attempt raises (chosen uniformly)."""
    permanent: bool = False
    """If true, a faulty request fails on every attempt (a branch that never succeeds)."""


class SimProfile(Spec):
    """A seeded simulated model, for tests and controlled studies. Its numbers are always
    labelled simulated. Without ``difficulty``/``errors``/``reactions`` it answers correctly with a
    fixed per-skill probability and otherwise draws a wrong answer from ``distractor_weights``; the
    three blocks add latent task difficulty, per-task shared wrong answers and reactions to shown
    answers (see docs/simulator.md)."""

    accuracy: dict[str, float] = Field(default_factory=lambda: {"default": 0.6})
    """Probability of a correct answer per skill id; ``default`` covers unlisted skills. Dotted
    skills fall back to their parent (``arith.add`` → ``arith``) before ``default``."""
    distractor_weights: list[float] = Field(default_factory=lambda: [0.5, 0.3, 0.2])
    """Relative probability of wrong answer 1, 2, 3, … (wrong answer i = gold + i for numbers)."""
    completion_tokens: TokenDist = Field(default_factory=TokenDist)
    """Completion-length distribution."""
    latency_ms: float = Field(default=0.0, ge=0)
    """Mean simulated latency per call in milliseconds (exponential jitter around it)."""
    faults: SimFaults = Field(default_factory=SimFaults)
    """Injected faults."""
    seed: int = 0
    """Seed mixed into every draw; the same request with the same seed gives the same answer."""
    difficulty: SimDifficulty | None = None
    """Latent per-task difficulty (item response). None: a fixed probability per skill for every task.
    With it, ``accuracy`` is the mean over tasks."""
    errors: SimErrors | None = None
    """Per-task wrong-answer distributions shared by all samples. None: ``distractor_weights`` per call."""
    reactions: dict[str, SimReaction] = Field(default_factory=dict)
    """Reaction to shown answers per agent name (``default``: every other agent that sees answers).
    Empty: a call's correctness does not depend on what it was shown."""
    tools: SimTools | None = None
    """The tool-use policy of ReAct steps (retrieval competence, reads, guesses, summaries).
    None: :class:`SimTools`' defaults."""
    grading: SimGrading | None = None
    """How it grades replies as a judge scorer (false pass / false fail rates). None: a sample is
    right with the profile's accuracy for skill ``judge``, else wrong (both error kinds alike)."""

    @property
    def tool_policy(self) -> SimTools:
        """``tools``, or the defaults when unset."""
        return self.tools or _DEFAULT_TOOLS

    @field_validator("accuracy")
    @classmethod
    def _probabilities(cls, v: dict[str, float]) -> dict[str, float]:
        for k, p in v.items():
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"accuracy[{k!r}] = {p} is not a probability in [0, 1]")
        return v


_DEFAULT_TOOLS = SimTools()


class ModelSpec(Spec):
    """One model as the gateway sees it. ``id`` is any litellm model id, ``embedded/smollm2``
    (in-process llama.cpp) or ``sim/<profile>`` (the seeded simulator)."""

    id: str = Field(min_length=1)
    """litellm model id (e.g. ``openai/gpt-4o-mini``), ``embedded/smollm2`` or ``sim/<name>``."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server (e.g. ``http://127.0.0.1:8000/v1``)."""
    client: Literal["auto", "openai", "litellm"] = "auto"
    """Which client library speaks to the model's server. ``openai``: the ``openai`` SDK's
    ``AsyncOpenAI`` directly (the fast path: about half litellm's CPU per call) — for a server that
    speaks the OpenAI wire protocol (``openai/…`` ids, any OpenAI-compatible ``api_base``: vLLM,
    SGLang, llama.cpp server). ``litellm``: ``litellm.acompletion`` (every provider). ``auto`` (the
    default): ``openai`` for an ``openai/…`` or ``hosted_vllm/…`` id with an ``api_base``,
    ``litellm`` for everything else (hosted OpenAI too, where litellm adapts parameters per model).
    Both record the same call rows, cache keys and errors (docs/backends.md); ``sim/…`` and
    ``embedded/…`` have their own backends and take only ``auto``."""
    sdk_wire: bool = True
    """``client: litellm`` only: a call litellm would send unchanged — an ``openai/…`` or
    ``hosted_vllm/…`` id with an ``api_base``, text messages, parameters litellm's mapping keeps as
    they are — goes out through the ``openai`` SDK with the same body, and a plain text call of an
    ``anthropic/…`` model through the ``anthropic`` SDK with the body litellm would build; either
    reply is read as litellm reads it (same call rows, prices and errors; docs/backends.md).
    ``false``: every call through ``litellm.acompletion`` (as does ``MASBENCH_LITELLM_SDK=0`` in the
    environment)."""
    api_key_env: str | None = None
    """Name of the environment variable that holds the API key. Keys never go in YAML."""
    input_usd_per_mtok: float | None = Field(default=None, ge=0)
    """USD per 1M prompt tokens; overrides litellm's price map."""
    output_usd_per_mtok: float | None = Field(default=None, ge=0)
    """USD per 1M completion tokens (visible output); overrides litellm's price map."""
    cached_input_usd_per_mtok: float | None = Field(default=None, ge=0)
    """USD per 1M prompt tokens read from the provider's prompt cache (default: the input price)."""
    cache_write_usd_per_mtok: float | None = Field(default=None, ge=0)
    """USD per 1M prompt tokens written to the prompt cache, e.g. Anthropic's 1.25× input rate
    (default: the input price)."""
    reasoning_usd_per_mtok: float | None = Field(default=None, ge=0)
    """USD per 1M hidden reasoning tokens, if billed differently from output (default: the output price)."""
    price: Literal[0] | None = None
    """``0`` declares the model free (a local server, a self-hosted model): without it, a model with no
    YAML price and no entry in litellm's price map stops the run before any call."""
    estimate_usage: bool = False
    """If the provider returns no usage, count the tokens with a tokenizer (flagged ``estimated`` on
    the call row) instead of recording the call as ``usage_missing`` (an error)."""
    concurrency: int = Field(default=16, ge=1)
    """Most calls in flight to this model at once (per process; ``max_in_flight`` caps the run)."""
    rpm: int | None = Field(default=None, ge=1)
    """Requests per minute allowed to this model across every worker of a run (each attempt counts).
    Enforced over every sliding ``rate_window_s`` window (prorated) and, to smooth bursts, over every
    sixth of it at a sixth of the limit. None: no request-rate limit."""
    tpm: int | None = Field(default=None, ge=1)
    """Tokens (prompt + completion) per minute across every worker, windows as for ``rpm``. Each
    attempt reserves its worst case (prompt bound + ``max_tokens``, the budget's cap) before it goes
    out and is settled to the reported usage after. None: no token-rate limit."""
    max_in_flight: int | None = Field(default=None, ge=1)
    """Most attempts open at once to this model across every worker of a run (``concurrency`` is
    per process). None: no global cap."""
    rate_window_s: float = Field(default=60.0, gt=0)
    """Length of the window ``rpm``/``tpm`` are enforced over, the limits prorated (``rpm`` ×
    window / 60). 60 s matches the providers'; shorter windows smooth harder (tests shrink it)."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Per-attempt timeout in seconds."""
    max_attempts: int = Field(default=5, ge=1, le=20)
    """Attempts per call on retryable errors (429, 5xx, timeouts, connection errors)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Default request parameters (e.g. ``top_p``); an agent's own settings win."""
    sim: SimProfile | None = None
    """Simulator profile, for ``sim/…`` ids. A bare ``sim/<name>`` uses a built-in profile."""
    skills: list[str] = Field(default_factory=list)
    """Optional skill hints for routing (what this model is known to be good at)."""
    function_calling: bool | None = None
    """Whether the model takes the OpenAI protocol's ``tools`` and answers with ``tool_calls``.
    None: its provider's backend says (litellm's capability map for hosted models; the embedded
    model has none). An agent with ``tool_mode: auto`` uses function calling where this holds and
    the text protocol (``Action: tool[arguments]``) elsewhere."""

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        if v is not None and (not v.replace("_", "").isalnum() or v[0].isdigit()):
            raise ValueError("api_key_env must be the NAME of an environment variable, not a key")
        return v
