"""The checker's resolved view of a design's nodes: what each op compiles its node from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..library import Library
from ..spec.agent import AgentSpec
from ..spec.design import DesignSpec, NodeSpec

VAL_FIELDS = frozenset({"answer", "text"})
"""Fields every value has (besides its structured-output fields)."""


@dataclass(slots=True)
class Until:
    """A parsed loop stop condition."""

    node: str | None
    field: str | None = None
    word: str | None = None
    negate: bool = False
    converged: bool = False


@dataclass(slots=True)
class NodeInfo:
    """One node, resolved."""

    name: str
    spec: NodeSpec
    path: tuple
    loop: str | None = None
    order: int = 0
    agent: AgentSpec | None = None
    fan: str | None = None
    k: int = 1
    map_src: tuple[str, str | None] | None = None
    map_param: list[Any] | None = None
    refs: list[tuple[str, str | None]] = field(default_factory=list)
    deps: set[str] = field(default_factory=set)
    """Nodes (top level, or earlier in the same loop body) this node waits for."""
    ext: set[str] = field(default_factory=set)
    """Top-level nodes a loop-body node reads (the loop waits for them)."""
    back: set[str] = field(default_factory=set)
    """Body nodes read from the previous round."""
    schema: dict[str, str] | None = None

    @property
    def kind(self) -> str:
        """The node's op, by its registered name (:func:`masbench.runtime.ops.op_of` gives the op; an
        unknown kind gives a do-nothing stand-in, and the check reports it)."""
        return self.spec.kind

    @property
    def key(self) -> str:
        """langgraph state key / display name (``loop.body`` inside loops)."""
        return f"{self.loop}.{self.name}" if self.loop else self.name

    @property
    def base(self) -> tuple:
        """The node's YAML path."""
        return ("nodes", self.loop, "loop", "nodes", self.name) if self.loop else ("nodes", self.name)


@dataclass(slots=True)
class LoopInfo:
    """A loop node's settings and body."""

    name: str
    max_rounds: int
    until: Until | None
    init: str | None
    output: str
    body: dict[str, NodeInfo]


class Checking(Protocol):
    """What the parts of the check (:mod:`.node_check`, the ops' checks, :mod:`.links`,
    :mod:`.refs`) see of the analysis in progress (:class:`~masbench.runtime.design_analysis.Analysis`)."""

    design: DesignSpec
    library: Library
    params: dict[str, Any]
    top: dict[str, NodeInfo]
    loops: dict[str, LoopInfo]
    channels: dict[str, list[str]]

    def problem(self, path: tuple, field: str | tuple, msg: str) -> None: ...

    def at(self, info: NodeInfo, sub: tuple, msg: str) -> None: ...

    def ref_at(self, info: NodeInfo, sub: tuple, msg: str) -> None: ...

    def node(self, name: str, spec: NodeSpec, path: tuple, loop: str | None, order: int) -> NodeInfo:
        """Check one node (a loop's body node, say) and return it resolved."""
        ...


__all__ = ["VAL_FIELDS", "Checking", "LoopInfo", "NodeInfo", "Until"]
