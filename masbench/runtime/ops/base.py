"""The :class:`Op` base class: everything the runtime, the renderer and the topology need to know
about one kind of node, as methods with neutral defaults. An op overrides what it does differently;
nothing outside its module names it (callers look it up by the node's kind, :func:`~masbench.runtime.ops.op_of`,
and never switch on the kind string).

An op is one instance registered under its kind in :data:`masbench.runtime.ops.OPS`. The phases,
in the order a design meets them:

- check (:mod:`masbench.runtime.node_check` calls :meth:`Op.check`; the analysis calls
  :meth:`Op.body` for ops with a sub-graph) — the op's own spec fields, with problems reported at
  their place in the YAML;
- references (:mod:`masbench.runtime.refs`) — :meth:`Op.templates` (what the node renders),
  :meth:`Op.ref_fields` (which ``{node.field}`` a reader may use), :attr:`Op.names`,
  :attr:`Op.may_be_list`, :attr:`Op.data_fields`;
- bind (:mod:`masbench.runtime.bind`) — :meth:`Op.compile_templates`, :meth:`Op.extra_inputs`,
  :meth:`Op.bind`;
- run (:func:`masbench.runtime.node.run_node`) — :meth:`Op.run` returns the node's value;
- topology (:mod:`masbench.design.topology`) — :meth:`Op.weight`, :meth:`Op.signature`,
  :meth:`Op.sub_design`, :meth:`Op.aggregates`, :meth:`Op.passthrough`;
- render (:mod:`masbench.runtime.render`) — :meth:`Op.label`, :attr:`Op.color`, :attr:`Op.shape`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Callable, Protocol

from ...spec.design import NodeSpec
from ..info import VAL_FIELDS, Checking, LoopInfo, NodeInfo
from ..plan import Getter, Plan
from ..scope import Env, Scope, Stats
from ..template import Template
from ..types import DesignResult
from ..values import Val

if TYPE_CHECKING:  # pragma: no cover - the gateway (litellm) loads only when a design runs
    from ...llm.gateway import CallResult

SubRunner = Callable[[str, dict[str, Any]], Callable[[Scope], Awaitable[DesignResult]]]
"""Compiles a sub-design (name, params) and returns its ``run_scope``."""


class Calls(Protocol):
    """How a run body reaches its node's model (:data:`masbench.runtime.calls.CALLS`). It is passed
    to :meth:`Op.run`, so an op module never imports the gateway: checking a design loads the ops,
    and must not load litellm."""

    async def model(self, plan: Plan, sc: Scope, messages: list[dict[str, Any]], meta: dict[str, Any], idx: int,
                    st: Stats, params: dict[str, Any] | None = None) -> CallResult:
        """One budget-checked call; its usage is added to ``st``. Raises when the budget refuses it.
        ``params``: extra request parameters (``tools`` / ``tool_choice``; a ``stop`` replaces the
        agent's stop sequences)."""
        ...

    def index(self, plan: Plan, sc: Scope, i: int) -> int:
        """The sample index of a call of branch ``i`` (distinct per seed, loop round and branch)."""
        ...


class Binding(Protocol):
    """What an op's bind step sees of the binder (:class:`masbench.runtime.bind.Binder`)."""

    @property
    def an(self) -> Checking:
        """The analysed design (params, loops, nodes)."""
        ...

    @property
    def plans(self) -> dict[str, Plan]:
        """Every plan of the design, by key."""
        ...

    def str_getter(self, name: str, field: str | None, info: NodeInfo, plan: Plan) -> Callable[[Env], str]:
        """How ``{name.field}`` is read as text from this node."""
        ...

    def loop_cur(self, lp: LoopInfo) -> Callable[[Env], Val | None]:
        """A loop's current value."""
        ...

    def compile(self, p: Plan, text: str) -> Template:
        """``text`` compiled as a template of ``p``'s node (design params filled in)."""
        ...

    def node_params(self, p: Plan) -> dict[str, Any]:
        """The node's ``params`` with ``{param}`` references to design params filled in."""
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

        class Echo(Op):
            async def run(self, plan, sc, env, i, st, calls):
                return Val(text=str(plan.kwargs.get("say", "")))
            def bind(self, b, p, sub_runner):
                p.kwargs = b.node_params(p)

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

    # ----- bind ----------------------------------------------------------------------------------
    def compile_templates(self, b: Binding, p: Plan) -> set[str]:
        """Compile the node's templates into ``p``; the names they reference."""
        return set()

    def extra_inputs(self, b: Binding, p: Plan, referenced: set[str]) -> list[tuple[str, Getter]]:
        """The labelled ``from`` inputs appended after the prompt: those it does not mention."""
        return [(lbl, g) for (lbl, g), entry in zip(p.input_texts, p.info.spec.inputs) if head(entry) not in referenced]

    def bind(self, b: Binding, p: Plan, sub_runner: SubRunner) -> None:
        """Bind what the op needs at run time into ``p`` (a function, params, a sub-design runner)."""

    # ----- run -----------------------------------------------------------------------------------
    def actor(self, info: NodeInfo) -> str | None:
        """What the node row's ``agent`` column names (the agent, function or sub-design)."""
        return info.agent.name if info.agent is not None else None

    async def run(self, plan: Plan, sc: Scope, env: Env, i: int | None, st: Stats, calls: Calls) -> Val:
        """One execution (branch ``i`` of a fan-out): the node's value. May raise (the caller records
        the error); model calls go through ``calls`` (their usage lands in ``st``)."""
        raise NotImplementedError(f"op {type(self).__name__} has no run body")

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


__all__ = ["Binding", "Calls", "Op", "SubRunner", "Weigher", "head"]
