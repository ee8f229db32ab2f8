"""Agent definitions: a role, a prompt template, a model (or a router), and answer parsing."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from .base import Spec

JSON_FIELD_TYPES = ("str", "int", "float", "bool", "list[str]", "list[int]", "list[float]")


class RouteSpec(Spec):
    """Choose the model per call from a skill handbook."""

    route: str = Field(min_length=1)
    """Handbook name (a file in ``skills/``)."""
    lambda_: float = Field(default=1.0, alias="lambda", ge=0)
    """Cost weight λ in U = Σ w·E[p] − λ·E[c] (cost in USD per 1k calls unless the handbook says otherwise)."""
    strategy: Literal["greedy", "thompson", "ucb", "floor"] = "greedy"
    """greedy argmax; Thompson or UCB exploration; or ``floor``: cheapest model with lower bound ≥ tau."""
    tau: float = Field(default=0.7, ge=0, le=1)
    """Quality floor for ``strategy: floor``."""
    candidates: list[str] | None = None
    """Model aliases allowed for this agent (default: every model in the handbook)."""


class AnswerSpec(Spec):
    """How the answer is pulled out of the agent's text."""

    extract: Literal["final", "boxed", "last_number", "json", "text", "auto"] = "auto"
    """``final``: after "Answer:"; ``boxed``: ``\\boxed{…}``; ``last_number``; ``json``: a field of a
    JSON object; ``text``: the whole text; ``auto``: the first of final, boxed, last number that matches."""
    field: str | None = None
    """JSON field holding the answer, for ``extract: json``."""


class OutputSpec(Spec):
    """Structured output: the text must be a JSON object with these fields."""

    json_: dict[str, Literal["str", "int", "float", "bool", "list[str]", "list[int]", "list[float]"]] = Field(
        alias="json")
    """Field name → type. The node retries with the parse error, up to ``retries`` times."""
    retries: int = Field(default=2, ge=0, le=5)
    """Re-asks after a parse/validation failure before the failure is recorded."""


class AgentSpec(Spec):
    """One agent: a role with a prompt template. Templates may use ``{question}``, ``{node}``,
    ``{node.field}`` and design params."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    """Name other files refer to."""
    description: str | None = None
    """What this agent is for (shown in graphs and reports)."""
    model: str | RouteSpec = "default"
    """A model alias from the suite (``default``), a litellm id, or ``{route: HANDBOOK}``."""
    system: str | None = None
    """System message."""
    prompt: str = Field(min_length=1)
    """User message template."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature (model default if unset)."""
    max_tokens: int = Field(default=512, ge=1, le=65536)
    """Completion cap; also what the budget reserves for this call."""
    stop: list[str] = Field(default_factory=list, max_length=4)
    """Stop sequences (at most 4, OpenAI's limit): generation ends before the first one. Keeps a
    tiny model from rambling past its answer (e.g. ``["\\n"]`` for a one-line reply)."""
    answer: AnswerSpec = Field(default_factory=AnswerSpec)
    """Answer extraction."""
    output: OutputSpec | None = None
    """Structured output, if the agent must return JSON."""
    skills: list[str] = Field(default_factory=list)
    """Skill hints for routing (dotted ids)."""
    tools: list[str] = Field(default_factory=list)
    """Tools this agent may call, by registered name (:data:`masbench.tools.TOOLS`: ``calculator``,
    ``search``, ``read_document``, or a python function registered with ``@tool``). Used by ``react``
    nodes; a tool the model names that is not listed here is refused and recorded, never run."""
    tool_mode: Literal["auto", "native", "text"] = "auto"
    """How the agent calls tools: ``native`` (the OpenAI protocol's ``tools`` / ``tool_calls``),
    ``text`` (the ReAct text protocol: ``Action: search[query]`` lines, for models without function
    calling such as the embedded one), or ``auto`` (native where the model supports it)."""
    context_tokens: int | None = Field(default=None, ge=64)
    """The transcript budget (prompt tokens) of this agent's ReAct loops, when the ``react`` node's
    ``params`` set none (None: 4096). What happens past it is the node's ``overflow`` setting."""
    judge: bool = False
    """This agent judges a candidate answer (critic / verifier). The candidate is the answer of the
    first input in the node's ``from`` that has one; simulated models answer in ``judge`` mode."""

    @field_validator("skills")
    @classmethod
    def _dotted(cls, v: list[str]) -> list[str]:
        for s in v:
            if not s or any(not part for part in s.split(".")):
                raise ValueError(f"skill id {s!r} must be dotted words like 'arith.add'")
        return v
