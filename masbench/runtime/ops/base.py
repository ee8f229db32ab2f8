"""The two halves of a node op: :class:`Op`, what a design needs to know about one kind of node
before it runs (check, references, topology weight, rendering), with one :meth:`Op.compile` hook;
and :class:`Node`, the compiled node that runs — one frozen, typed object per design node, whose
fields are its state and whose one method is :meth:`Node.run`.

An op is one instance registered under its kind in :data:`masbench.runtime.ops.OPS`; nothing
outside its module names it (callers look it up by the node's kind, :func:`~masbench.runtime.ops.op_of`,
and never switch on the kind string). The phases, in the order a design meets them:

- check (:mod:`masbench.runtime.node_check` calls :meth:`Op.check`; the analysis calls
  :meth:`Op.body` for ops with a sub-graph) — the op's own spec fields, with problems reported at
  their place in the YAML;
- references (:mod:`masbench.runtime.refs`) — :meth:`Op.templates` (what the node renders),
  :meth:`Op.ref_fields` (which ``{node.field}`` a reader may use), :attr:`Op.names`,
  :attr:`Op.may_be_list`, :attr:`Op.data_fields`;
- compile (:mod:`masbench.runtime.bind`) — :meth:`Op.compile` turns the checked node into its
  :class:`Node`, reading what it needs through the :class:`Binding`;
- run (every scheduler, :func:`masbench.runtime.steps.run_node`) — :meth:`Node.run` returns the
  node's value;
- topology (:mod:`masbench.design.topology`) — :meth:`Op.weight`, :meth:`Op.signature`,
  :meth:`Op.sub_design`, :meth:`Op.aggregates`, :meth:`Op.passthrough`;
- render (:mod:`masbench.runtime.render`) — :meth:`Op.label`, :attr:`Op.color`, :attr:`Op.shape`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

from ...charge import Tally
from ...spec.design import NodeSpec
from ..info import VAL_FIELDS, Checking, LoopInfo, NodeInfo
from ..scope import Caller, Env, Scope
from ..template import Template
from ..types import DesignResult
from ..values import Val
from .until import StopRule

if TYPE_CHECKING:  # pragma: no cover - the gateway (litellm) loads only when a design runs
    from ...llm.gateway import CallResult

Getter = Callable[[Env], Any]
"""Reads something from an :class:`~masbench.runtime.scope.Env` (a value, a text, a python argument)."""
Items = Callable[[dict, Scope], Any]
"""A fan-out's items this round, from the state and the scope."""
SubRun = Callable[[Scope], Awaitable[DesignResult]]
"""A compiled sub-design's runner (its ``run_scope``)."""


class Calls(Protocol):
    """How a run body reaches its node's model (:data:`masbench.runtime.calls.CALLS`). It is passed
    to :meth:`Node.run`, so an op module never imports the gateway: checking a design loads the
    ops, and must not load litellm."""

    async def model(self, node: Caller, sc: Scope, messages: list[dict[str, Any]], meta: dict[str, Any], idx: int,
                    st: Tally, params: dict[str, Any] | None = None) -> CallResult:
        """One budget-checked call; its usage is added to ``st``. Raises when the budget refuses it.
        ``params``: extra request parameters (``tools`` / ``tool_choice``; a ``stop`` replaces the
        agent's stop sequences)."""
        ...

    def index(self, node: Caller, sc: Scope, i: int) -> int:
        """The sample index of a call of branch ``i`` (distinct per seed, loop round and branch)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Node:
    """A compiled node: what every node has (its place, its fan-out, what its row says). An op's
    node subclasses it with the fields that op needs and overrides :meth:`run`."""

    key: str
    """The state key and display name (``loop.body`` inside loops)."""
    name: str
    loop: str | None
    """The loop whose body the node is in."""
    fan: str | None
    """Its fan-out: ``repeat``, ``map`` or None."""
    order: int
    """Its position among its siblings (YAML order): orders channel entries and sub-design seeds."""
    actor: str | None
    """What the node row's ``agent`` column names (the agent, function or sub-design)."""
    agent_name: str | None
    """The agent the node invokes (its telemetry span is ``invoke_agent``), None when it has none."""
    model: str | None
    """The model alias its row names when no call said otherwise (None: routed, or no model)."""
    row_op: str
    """What the node row's ``op`` column says: the fan-out (``repeat``/``map``), else the kind."""
    into: str | None = None
    """The shared channel it also writes."""
    items: Items | None = None
    """A fan-out's items (None: not a fan-out)."""
    until: StopRule | None = None
    """Its loop's stop condition, when that condition reads this node's value."""

    async def run(self, sc: Scope, env: Env, i: int | None, st: Tally, calls: Calls) -> Val:
        """One execution (branch ``i`` of a fan-out): the node's value. May raise (the caller records
        the error); model calls go through ``calls`` (their usage lands in ``st``)."""
        raise NotImplementedError(f"{type(self).__name__} has no run body")


class Binding(Protocol):
    """What an op's :meth:`Op.compile` sees of the compiler (:class:`masbench.runtime.bind.Binder`)."""

    @property
    def an(self) -> Checking:
        """The analysed design (params, loops, nodes)."""
        ...

    def base(self, info: NodeInfo) -> dict[str, Any]:
        """The :class:`Node` base fields of ``info`` (keywords for the node's constructor)."""
        ...

    def compile(self, info: NodeInfo, text: str) -> Template:
        """``text`` compiled as a template of ``info``'s node (design params filled in)."""
        ...

    def str_getter(self, name: str, field: str | None, info: NodeInfo) -> Callable[[Env], str]:
        """How ``{name.field}`` is read as text from this node."""
        ...

    def input_texts(self, info: NodeInfo) -> tuple[tuple[str, Getter], ...]:
        """The node's ``from`` inputs as labelled texts (label, getter), in ``from`` order."""
        ...

    def input_vals(self, info: NodeInfo) -> tuple[tuple[str, Getter], ...]:
        """The node's ``from`` inputs as values (name, getter), in ``from`` order."""
        ...

    def py_args(self, info: NodeInfo) -> tuple[Getter, ...]:
        """The node's ``from`` inputs as a python function's arguments."""
        ...

    def unmentioned(self, info: NodeInfo, referenced: set[str]) -> tuple[tuple[str, Getter], ...]:
        """The labelled ``from`` inputs its templates do not mention (appended after the prompt)."""
        ...

    def loop_cur(self, lp: LoopInfo) -> Getter:
        """A loop's current value."""
        ...

    def node_params(self, info: NodeInfo) -> dict[str, Any]:
        """The node's ``params`` with ``{param}`` references to design params filled in."""
        ...

    def sub_design(self, name: str, params: dict[str, Any]) -> SubRun:
        """A sub-design compiled with ``params``: its runner."""
        ...


class Weigher(Protocol):
    """What an op's :meth:`Op.weight` may ask the topology (:mod:`masbench.design.topology`)."""

    def param(self, value: Any) -> Any:
        """A ``repeat``/``map``/``max_rounds`` value with a ``{param}`` filled in (ints parsed)."""
        ...

    def design(self, name: str, params: dict[str, Any]) -> int:
        """Sequential model calls of a sub-design (1 if it is unknown or recursive)."""
        ...

    def body(self, nodes: dict[str, NodeSpec], output: str) -> int:
        """Sequential model calls along the heaviest path of a sub-graph (one round)."""
        ...


def head(entry: str) -> str:
    """The node a ``from`` entry names (``plan.subtasks`` → ``plan``)."""
    return entry.strip().partition(".")[0]


class Op:
    """One kind of node. Subclass it, override what differs, register an instance::

        @dataclass(frozen=True, slots=True, kw_only=True, eq=False)
        class EchoNode(Node):
            say: str
            async def run(self, sc, env, i, st, calls):
                return Val(text=self.say)

        class Echo(Op):
            def compile(self, b, info):
                return EchoNode(**b.base(info), say=str(b.node_params(info).get("say", "")))

        OPS.add("echo", Echo())   # then a node `{kind: echo, params: {say: hi}}`
    """

    keys: tuple[str, ...] = ()
    """The built-in op keys (:data:`masbench.spec.design.OP_KEYS`) this op reads; a node of this
    kind that sets any other is rejected."""
    fans: frozenset[str] = frozenset()
    """Which fan-outs apply: ``repeat`` and/or ``map``."""
    prompted: bool = False
    """It renders an agent's prompt and system message; ``system:`` and ``output:`` (structured
    output) apply to it."""
    extracts: bool = False
    """Its answer is extracted from its agent's reply (the agent's ``answer`` settings)."""
    direct: bool = False
    """A design made of one plain node of this op may run it without building the graph."""
    names: frozenset[str] = frozenset()
    """Template names only nodes of this op provide (``{candidates}``)."""
    may_be_list: bool = False
    """Its value may be a list, so ``map: <node>`` may fan out over it without a ``.field``."""
    data_fields: bool = False
    """Its value's data may carry fields no schema declares (a loop's ``until`` may read them)."""
    color: str = "#cfe2ff"
    """Fill colour in rendered graphs."""
    shape: tuple[str, str] = ('["', '"]')
    """Mermaid node brackets (opening, closing)."""

    # ----- check ---------------------------------------------------------------------------------
    def check(self, an: Checking, info: NodeInfo) -> None:
        """Check the node's own settings (resolve its agent into ``info.agent``), reporting problems
        with ``an.at``. Runs for every node, before references are resolved."""

    def body(self, an: Checking, info: NodeInfo) -> LoopInfo | None:
        """The node's sub-graph, checked (a loop's body), or None. Runs for top-level nodes after
        every one of them has been checked."""
        return None

    # ----- references ----------------------------------------------------------------------------
    def templates(self, info: NodeInfo) -> list[tuple[tuple, str | None]]:
        """(YAML sub-path, template text) of every template the node renders."""
        out: list[tuple[tuple, str | None]] = []
        if info.spec.prompt is not None:
            out.append((("prompt",), info.spec.prompt))
        if info.spec.system is not None:
            out.append((("system",), info.spec.system))
        return out

    def ref_fields(self, info: NodeInfo) -> set[str] | None:
        """The fields a ``{node.field}`` reference to this node may read (None: any)."""
        return set(VAL_FIELDS) | set(info.schema or ())

    def actor(self, info: NodeInfo) -> str | None:
        """What the node row's ``agent`` column names (the agent, function or sub-design)."""
        return info.agent.name if info.agent is not None else None

    # ----- compile -------------------------------------------------------------------------------
    def compile(self, b: Binding, info: NodeInfo) -> Node:
        """The checked node as this op's :class:`Node` (its base fields: ``b.base(info)``)."""
        raise NotImplementedError(f"op {type(self).__name__} has no compile hook")

    # ----- topology (spec only: no library resolution beyond what ``w`` does) ----------------------
    def weight(self, node: NodeSpec, w: Weigher) -> int:
        """Sequential model calls one execution of the node makes (its weight on a path)."""
        return 0

    def signature(self, node: NodeSpec) -> tuple | None:
        """What makes two nodes the same single model call (None: the node is not one call)."""
        return None

    def sub_design(self, node: NodeSpec) -> str | None:
        """The design the node runs as a sub-agent, if any."""
        return None

    def aggregates(self, node: NodeSpec) -> bool:
        """It reduces its inputs to one of them (a vote, a selector)."""
        return False

    def passthrough(self, node: NodeSpec) -> bool:
        """It passes its single input on unchanged."""
        return False

    # ----- render --------------------------------------------------------------------------------
    def label(self, info: NodeInfo) -> str:
        """What a rendered node says about its op."""
        return info.kind


__all__ = ["Binding", "Calls", "Getter", "Items", "Node", "Op", "SubRun", "Weigher", "head"]
