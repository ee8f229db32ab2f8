"""Program designs: a multi-agent system the user already has as code, run as a design.

A program design is a design file with ``kind: program``. Its code is the user's — either a Python
function (``entry: module:function``, the module found on the working directory's path) or any
executable (``command: [...]``, one process per task, the task as JSON on stdin, the answer on
stdout). Every model call it makes goes to masbench's metering endpoint (an OpenAI-compatible
server on 127.0.0.1 with a token per cell), so it is budgeted, recorded and judged like a design
written as nodes::

    name: solver-critic
    kind: program
    entry: my_mas:solve            # my_mas.py in the working directory; solve(task, endpoint)
    models: [default]              # the suite's model aliases it may call
    agents: [solver, critic]       # who may be named as a call's agent
    timeout_s: 120
    max_tokens: 512                # for requests that set none

What the program receives and returns, the endpoint and what is recorded: ``docs/programs.md``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from .agent import AnswerSpec
from .base import Spec

ENTRY = r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"
AGENT = r"^[A-Za-z0-9_.\-]+$"


class ProgramSpec(Spec):
    """A design that is the user's own program (Python entry or a command), metered at the wire."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    """Name suites refer to."""
    kind: Literal["program"]
    """Always ``program``: what makes this design file a program design rather than a graph of nodes."""
    description: str | None = None
    """What this program is and where it comes from."""
    entry: str | None = Field(default=None, pattern=ENTRY)
    """``module:function`` — a Python function (sync or async) called as ``function(task, endpoint)``;
    the module is imported from the working directory's path (like ``@tool`` functions). Give this
    or ``command``, not both."""
    command: list[str] | None = Field(default=None, min_length=1)
    """An executable and its arguments, run once per task: the task as JSON on stdin, the answer on
    stdout. ``{python}`` in any argument is this Python interpreter. Its environment has no
    provider key variables, and ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` point at the endpoint."""
    models: list[str] = Field(default_factory=lambda: ["default"], min_length=1)
    """The suite's model aliases the program may name as ``model``; any other name is refused
    (the error lists these)."""
    agents: list[str] = Field(default_factory=list)
    """The agent names a call may be attributed to (``X-Masbench-Agent`` header, a per-agent token,
    or the request's ``user`` field). Empty: any name; calls that name none are ``default_agent``'s."""
    default_agent: str = Field(default="program", pattern=AGENT)
    """The agent of a call that names none."""
    timeout_s: float = Field(default=600.0, gt=0)
    """Wall-clock limit per task: the program is stopped (a command killed) and the cell fails with
    its calls so far recorded."""
    max_tokens: int = Field(default=1024, ge=1)
    """``max_tokens`` of a request that sets none (the budget reserves it as the call's worst case)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Parameters handed to the program with the task (``task["params"]``); a suite's design entry
    may override them."""
    answer: AnswerSpec = Field(default_factory=AnswerSpec)
    """How the answer is pulled out of a text the program returns (a structured answer is taken as is)."""

    @model_validator(mode="after")
    def _one_way(self) -> "ProgramSpec":
        if (self.entry is None) == (self.command is None):
            raise ValueError("a program design needs exactly one of `entry` (module:function) or `command` ([...])")
        for a in self.agents:
            if not a or any(c.isspace() for c in a):
                raise ValueError(f"agent name {a!r} must be a non-empty word")
        return self


__all__ = ["ProgramSpec"]
