"""The outcome of one logical call (:class:`CallResult`) and its status class.

A call's usage is one record, :class:`~masbench.llm.usage.Usage`, in two roles:

- ``usage``: what the provider reported (or, opted in, a tokenizer estimated — flagged on it);
  ``None`` when the provider returned no usage (the call is ``usage_missing``); a failed call
  reports zero usage (nothing came back to bill);
- ``counted``: what every tally counts: ``usage`` itself, or for a usage-missing call its worst
  case (:func:`worst_case`: the provider's prompt-token bound plus the request's ``max_tokens``,
  priced at the model's prices). ``cost_usd`` is the counted cost.

``charge`` (a :class:`~masbench.charge.Charge`) is that counted usage and cost as one frozen record,
made once with the result: the budget meter, the node, the design run (its ``results``/``pool``
rows) and ``Gateway.stats`` all add that record to their :class:`~masbench.charge.Tally`.

The ``calls`` row keeps what was reported: NULL token and cost columns for a usage-missing call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..charge import Charge
from .prices import Prices
from .usage import Usage

NO_USAGE = Usage()
"""The usage of a call that got no reply (failed after its attempts): zero of every class."""


@dataclass(kw_only=True, slots=True)
class CallResult:
    """The outcome of one logical call (after retries)."""

    text: str
    """The reply's visible text ("" for a failed call)."""
    model: str
    """The model id called."""
    alias: str
    """The alias the call named (or the raw id)."""
    call_id: str
    """Unique per call in this process (the ``calls`` row's key)."""
    simulated: bool
    """Whether the reply is simulated."""
    usage: Usage | None
    """What the provider reported (``estimated`` flagged on it); None: it reported no usage."""
    counted: Usage
    """What every tally counts: ``usage``, or a usage-missing call's worst case (module docstring)."""
    cost_usd: float
    """USD of ``counted``: the provider-reported or priced cost, or the priced worst case."""
    cost_source: str = "yaml"
    """Where the cost came from: ``yaml``, ``litellm-map``, ``provider-reported``, ``zero-declared``, ``unpriced``."""
    latency_s: float = 0.0
    """Wall time of the call, attempts and waits included."""
    cache_hit: bool = False
    """Served from the response cache (no model was called)."""
    attempts: int = 0
    """Attempts made (0 for a cache hit)."""
    error: str | None = None
    """Why the call failed (after retries), or ``usage_missing: …``; None if it succeeded."""
    finish_reason: str | None = None
    """The provider's finish reason (``stop``, ``length``, …)."""
    status: str = "ok"
    """``ok``, ``error``, ``usage_missing``, ``truncated`` or ``empty`` (see :func:`call_status`)."""
    usage_raw: dict[str, Any] | None = None
    """The usage object as received, also when it could not be read (a usage-missing call)."""
    tool_calls: list[dict[str, Any]] | None = None
    """Tool calls the model asked for (function calling; OpenAI shape, see
    :attr:`masbench.llm.backends.Reply.tool_calls`); None: none."""
    charge: Charge = field(init=False)
    """The counted usage and cost as the one record every tally adds (made here, once)."""

    def __post_init__(self) -> None:
        c = self.counted
        self.charge = Charge(c.prompt_tokens, c.completion_tokens, self.cost_usd, self.model,
                             self.error is not None, self.cache_hit)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def usage_status(self) -> str:
        """``reported``, ``estimated`` or ``missing``."""
        if self.usage is None:
            return "missing"
        return "estimated" if self.usage.estimated else "reported"

    @property
    def prompt_tokens(self) -> int:
        """Counted input tokens (fresh + cached read + cache write)."""
        return self.counted.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        """Counted output tokens (visible + reasoning)."""
        return self.counted.completion_tokens

    @property
    def total_tokens(self) -> int:
        return self.counted.prompt_tokens + self.counted.completion_tokens

    @property
    def cached_tokens(self) -> int:
        return self.counted.cached_read

    @property
    def cache_write_tokens(self) -> int:
        return self.counted.cache_write

    @property
    def reasoning_tokens(self) -> int:
        return self.counted.reasoning


def worst_case(prompt_bound: int, max_tokens: int | None, prices: Prices) -> tuple[Usage, float]:
    """What a usage-missing call is counted: its prompt bound and ``max_tokens`` (a request without
    ``max_tokens`` is bounded by its prompt alone), and their cost at the model's prices."""
    completion = max_tokens or 0
    return Usage(prompt_fresh=prompt_bound, completion_visible=completion), prices.cost(prompt_bound, completion)


def call_status(res: CallResult) -> str:
    """The call's status class: ``usage_missing`` (no usage and no opt-in estimate: an error, never
    0 tokens), ``error`` (failed after retries), ``truncated`` (``finish_reason = length``),
    ``empty`` (no visible text and no tool call) or ``ok``."""
    if res.usage is None:
        return "usage_missing"
    if res.error is not None:
        return "error"
    if res.finish_reason == "length":
        return "truncated"
    if not res.text.strip() and not res.tool_calls:
        return "empty"
    return "ok"


__all__ = ["CallResult", "NO_USAGE", "call_status", "worst_case"]
