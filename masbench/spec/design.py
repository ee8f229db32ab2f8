"""Designs: a MAS (or a baseline) as data — named nodes, each one op, and one output.

A node's op is its ``kind``: given explicitly (``kind: toy``, for an op registered in
:data:`masbench.runtime.OPS`, its settings in ``params``), or — the usual form — named by the one
built-in op key the node has (:data:`OP_KEYS`):
- ``agent``: one call (``repeat: k`` → k parallel calls; ``map: node.field`` → one call per item)
- ``op: majority``: vote over the extracted answers of ``from``
- ``select``: an agent picks one candidate among ``from`` (verifier / ScEnsemble)
- ``loop``: a bounded sub-graph repeated until a condition holds
- ``python``: a registered Python function, called by name (never model-written code)
- ``design``: another design, called as a sub-agent

This layer only knows those keys; which keys and fan-outs an op accepts is the op's own check,
run with the design's check (:func:`masbench.runtime.check_design`), so an op registered later
needs no change here.

Templates (agent ``system``/``prompt``, node ``prompt``) may reference:
``{question}``; ``{node}`` (its text; a fan-out renders as a numbered list); ``{node.field}`` (a
field of a structured output, or ``answer`` / ``text``; a loop also has ``history``); design params
``{k}``; ``{inputs}`` (every ``from`` input that has a value, labelled); in ``repeat``/``map``
branches ``{item}`` and ``{index}`` (1-based); in ``select`` nodes ``{candidates}``; inside a loop
body ``{round}``, ``{history}`` and the loop's own name (its current value). Any other ``{...}``
that is not a plain dotted name (e.g. a JSON example) is literal text; ``{{`` and ``}}`` escape.
``from`` inputs that the template does not mention are appended after the prompt.

Inside a loop body, a reference to an earlier body node (in YAML order) is this round's value;
a reference to the same or a later body node is the previous round's value (absent in round 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Literal

from pydantic import Field, model_validator

from .agent import AgentSpec, OutputSpec
from .base import Spec

NAME = r"^[A-Za-z_][A-Za-z0-9_\-]*$"

OP_KEYS: tuple[str, ...] = ("agent", "op", "select", "loop", "python", "design")
"""The node keys that name a built-in op. A node without ``kind:`` has exactly one of them (a
``select`` node may also name an ``agent``)."""


class LoopSpec(Spec):
    """A bounded loop: run ``nodes`` up to ``max_rounds`` times, stopping early when ``until`` holds."""

    max_rounds: int | str = Field(default=3)
    """Most rounds (an int, or a ``{param}`` template)."""
    until: str | None = None
    """Stop condition, checked right after the node it names runs; the rest of that round is
    skipped. Forms: ``critic.correct`` (a truthy structured-output field), ``not critic.correct``,
    ``critic contains CORRECT`` (a whole word, any case), or ``converged`` (the loop's answer did
    not change this round)."""
    init: str | None = None
    """Top-level node whose value is the loop's value before round 1 (what the body sees as
    ``{<loop name>}`` and what the loop returns if no round completes)."""
    nodes: dict[str, "NodeSpec"]
    """The body: a small graph run once per round. Its nodes see the previous round's values."""
    output: str
    """Body node whose value is the loop's value."""


class NodeSpec(Spec):
    """One node of a design."""

    kind_: str | None = Field(default=None, alias="kind")
    """The node's op, by its name in the op registry (:data:`masbench.runtime.OPS`): a built-in
    (``agent``, ``majority``, ``select``, ``loop``, ``python``, ``design``) or an op registered by
    code (its settings in ``params``). Optional: without it the op is named by the one op key the
    node has (``agent:``, ``op: majority``, ``select:``, ``loop:``, ``python:``, ``design:``). The op
    checks the node's other keys when the design is checked."""
    agent: str | AgentSpec | None = None
    """Agent name (library or this design's ``agents``), or an inline agent."""
    op: Literal["majority"] | None = None
    """A non-model op over ``from``: ``majority`` vote after answer normalization (ties go to the
    answer seen first; the tally and any tie are recorded)."""
    select: str | None = None
    """Agent that picks one of the ``from`` candidates (verifier / ScEnsemble)."""
    loop: LoopSpec | None = None
    """A bounded loop over a body sub-graph."""
    python: str | None = None
    """Name of a registered Python function (e.g. ``calculator``)."""
    design: str | None = None
    """Another design, run as a sub-agent on this node's input."""
    repeat: int | str | None = None
    """k independent calls in parallel (an int or a ``{param}`` template)."""
    map: str | None = None
    """What to fan out over, one call per item, in parallel: ``node.field`` (a list field of a
    structured output), ``node`` (a fan-out's branches) or ``{param}`` (a list param)."""
    from_: str | list[str] | None = Field(default=None, alias="from")
    """Upstream nodes (or ``question``) this node reads. Defaults to what its prompt references."""
    prompt: str | None = None
    """Overrides the agent's prompt template for this node (for ``design`` nodes: the sub-question)."""
    system: str | None = None
    """Overrides the agent's system message for this node (a template, e.g. ``You are a {route.role}.``)."""
    output: OutputSpec | None = None
    """Structured output for this node (overrides the agent's)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Extra template params / sub-design params / python keyword arguments."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Overrides the agent's temperature."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Overrides the agent's max_tokens."""
    into: str | None = Field(default=None, pattern=NAME)
    """Also write this node's value into a shared channel. Several nodes may write one channel
    only if the design declares a reducer for it in ``reducers``."""

    @property
    def kind(self) -> str:
        """The node's op: its ``kind:``, else the op its op key names (``agent``, ``majority``,
        ``select``, ``loop``, ``python`` or ``design``)."""
        if self.kind_ is not None:
            return self.kind_
        for k in ("loop", "python", "design", "select"):
            if getattr(self, k) is not None:
                return k
        if self.op is not None:
            return self.op
        return "agent"

    @property
    def inputs(self) -> list[str]:
        """``from`` as a list."""
        if self.from_ is None:
            return []
        return [self.from_] if isinstance(self.from_, str) else list(self.from_)

    @model_validator(mode="after")
    def _one_op(self) -> "NodeSpec":
        if self.kind_ is None:
            ops = [k for k in OP_KEYS if getattr(self, k) is not None]
            if self.select is not None and self.agent is not None:
                ops.remove("agent")
            if len(ops) != 1:
                raise ValueError(
                    f"a node needs exactly one of {', '.join(OP_KEYS)}"
                    + (f" (got {', '.join(ops)})" if ops else "") + " (or a `kind:`)")
        if self.repeat is not None and self.map is not None:
            raise ValueError("use repeat or map, not both")
        return self


class DesignSpec(Spec):
    """A design (baseline or MAS): named nodes forming a DAG, plus one output node."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    """Name suites refer to."""
    description: str | None = None
    """What this design is and where it comes from."""
    kind: Literal["baseline", "expert", "generated"] = "expert"
    """Provenance: a single-agent baseline, an expert MAS, or a generated design."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Default parameters, usable as ``{name}`` in node fields and prompts; suites may override."""
    agents: dict[str, AgentSpec] = Field(default_factory=dict)
    """Agents defined inline (they shadow library agents of the same name)."""
    nodes: dict[str, NodeSpec] = Field(min_length=1)
    """Node name → node."""
    output: str
    """The node whose answer is the design's answer."""
    reducers: dict[str, Literal["append"]] = Field(default_factory=dict)
    """Channel name → how parallel writes into it (nodes' ``into``) combine. ``append``: a list of
    the writers' values, in node order."""
    source: dict[str, Any] | None = None
    """Lineage of a generated design (parent, round, prompt hash, cost)."""

    @model_validator(mode="before")
    @classmethod
    def _agent_names(cls, data: Any) -> Any:
        # Inline agents may omit ``name``: it is their key.
        if isinstance(data, dict) and isinstance(data.get("agents"), dict):
            data = dict(data)
            data["agents"] = {
                k: ({"name": k, **v} if isinstance(v, dict) and "name" not in v else v)
                for k, v in data["agents"].items()
            }
        return data


    def walk(self) -> Iterator["NodeVisit"]:
        """Every node, loop bodies included, in YAML order (a loop before its body): the one walk
        over a design's nodes that checkers, diagnostics and repairs share."""
        yield from walk_nodes(self.nodes)


@dataclass(frozen=True, slots=True)
class NodeVisit:
    """One node met by :func:`walk_nodes`."""

    name: str
    """The node's key in its ``nodes`` mapping."""
    node: NodeSpec
    """The node itself."""
    path: tuple[str, ...]
    """Its place in the YAML, e.g. ``("nodes", "refine", "loop", "nodes", "critic")``."""
    loop: str | None
    """The enclosing loop node's name (None at the top level)."""

    @property
    def dotted(self) -> str:
        """``path`` as a dotted string (``nodes.refine.loop.nodes.critic``)."""
        return ".".join(self.path)


def walk_nodes(nodes: dict[str, NodeSpec], base: tuple[str, ...] = ("nodes",),
               loop: str | None = None) -> Iterator[NodeVisit]:
    """Walk ``nodes`` and, recursively, every loop body inside them."""
    for name, node in nodes.items():
        yield NodeVisit(name, node, base + (name,), loop)
        if node.loop is not None:
            yield from walk_nodes(node.loop.nodes, base + (name, "loop", "nodes"), name)
