"""Settings of a ``react`` node (a bounded ReAct loop of one tool-using agent), given in the node's
``params:``::

    search:
      kind: react
      agent: searcher              # an agent with `tools: [search, read_document]`
      params: {max_steps: 8, context_tokens: 3000, overflow: summarize, parallel_tools: 3}
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Spec

OVERFLOWS = ("truncate_oldest", "summarize", "stop")
"""What a ReAct loop does when its transcript outgrows ``context_tokens``."""

DEFAULT_CONTEXT_TOKENS = 4096
"""The transcript budget when neither the node nor its agent sets one."""

MAX_STEPS = 50
"""The largest ``max_steps`` a node may ask for."""


class ReactParams(Spec):
    """A ``react`` node's ``params``."""

    max_steps: int = Field(default=6, ge=1, le=MAX_STEPS)
    """Model steps (each may ask for tool calls) before the loop stops; then one more call asks for
    the final answer, if the budget allows it."""
    context_tokens: int | None = Field(default=None, ge=64)
    """The transcript's budget in prompt tokens (estimated at ~4 characters a token, the simulator's
    formula). None: the agent's ``context_tokens``, else 4096."""
    overflow: Literal["truncate_oldest", "summarize", "stop"] = "truncate_oldest"
    """When the transcript outgrows ``context_tokens``: ``truncate_oldest`` drops the oldest steps
    (a model reply with its observations) and keeps the system message and the question;
    ``summarize`` makes one extra model call that summarises the dropped steps and keeps the summary
    instead; ``stop`` ends the loop and asks for the final answer from what is there."""
    parallel_tools: int = Field(default=4, ge=1, le=32)
    """At most this many tool calls run per step (concurrently); further calls of that step are not
    run and are recorded ``refused`` (the model is told)."""


__all__ = ["DEFAULT_CONTEXT_TOKENS", "MAX_STEPS", "OVERFLOWS", "ReactParams"]
