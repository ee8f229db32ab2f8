"""Node ops, one class per module behind :class:`~.base.Op` (:mod:`.base`), registered by kind
in :data:`OPS`: :mod:`.agent` (one model call, structured-output retries), :mod:`.select` (a
selector picks a candidate), :mod:`.vote` (``majority``), :mod:`.loop` (a bounded sub-graph,
with :mod:`.until` its stop condition), :mod:`.python` (a registered function) and
:mod:`.design` (a sub-design) and :mod:`.react` (a bounded ReAct loop of a tool-using agent,
``kind: react``; its loop body is :mod:`.react_loop`) and :mod:`.route` (one of several
sub-designs, chosen per task from a skill handbook, ``kind: route``).

Each op module carries everything about its kind of node: the :class:`~.base.Op` (its spec
fields' check, its template and reference rules, its weight for the topology, its label and colour
for rendering, and its compile hook) and the :class:`~.base.Node` it compiles to (a frozen record
of what that op needs at run time, with its run body). The check, the compiler, the schedulers,
the renderer and :mod:`masbench.design.topology` go through ``op_of(info.kind)`` or the compiled
node and never switch on the kind.

To add an op: one module here with an :class:`~.base.Op` subclass and its node class, and one
entry in :data:`OPS` (or, from outside the package, ``OPS.add("mine", MyOp())`` before the design
is loaded). A node uses it with ``kind: mine`` (its settings in ``params``); the built-ins are also
named by their own key (``agent:``, ``op: majority``, ``select:``, ``loop:``, ``python:``, ``design:``).

The built-ins are lazy ``"module:attr"`` entries: the agent and select ops import the gateway
when they run, and the loop op checks body nodes through the analysis, so nothing here is
imported until a design needs it.
"""

from __future__ import annotations

from collections.abc import Callable

from ...registry import Registry, RegistryError
from .base import Binding, Calls, Node, Op, Weigher

OPS: Registry[Op] = Registry("op", {
    "agent": "masbench.runtime.ops.agent:OP",
    "majority": "masbench.runtime.ops.vote:OP",
    "select": "masbench.runtime.ops.select:OP",
    "loop": "masbench.runtime.ops.loop:OP",
    "python": "masbench.runtime.ops.python:OP",
    "design": "masbench.runtime.ops.design:OP",
    "react": "masbench.runtime.ops.react:OP",
    "route": "masbench.runtime.ops.route:OP",
}, plugins="masbench.ops")
"""Node kind → :class:`~.base.Op` instance."""

STAND_IN = Op()
"""The op of a node whose kind is unknown (the check reports the kind; nothing else about the
node is checked, and such a design never compiles)."""


def op_of(kind: str) -> Op:
    """The registered op of ``kind``, else :data:`STAND_IN` (the check names the unknown kind)."""
    try:
        return OPS[kind]
    except RegistryError:
        return STAND_IN


def kinds_where(test: Callable[[Op], bool], last: str = "or") -> str:
    """The registered kinds whose op passes ``test``, for a message: ``agent, design or python``."""
    names = sorted(k for k in OPS.names() if test(OPS[k]))
    if len(names) <= 1:
        return "".join(names) or "no"
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


__all__ = ["Binding", "Calls", "Node", "OPS", "Op", "STAND_IN", "Weigher", "kinds_where", "op_of"]
