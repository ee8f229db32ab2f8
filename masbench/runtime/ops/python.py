"""``python`` nodes: a registered function (:data:`~masbench.runtime.pyfuncs.PYTHON_FUNCS`) called
on the node's inputs — never model-written code."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import Any, Callable

from ...charge import Tally
from ...spec.design import NodeSpec
from ...text import normalize_answer
from ..info import Checking, NodeInfo
from ..pyfuncs import PYTHON_FUNCS
from ..scope import Env, Scope
from ..values import Val, fmt_data, pyval
from .base import Binding, Calls, Getter, Node, Op


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PythonNode(Node):
    """A registered function called on the node's inputs (the item, in a ``map`` branch)."""

    fn: Callable[..., Any]
    args: tuple[Getter, ...]
    """The ``from`` inputs as the function's positional arguments."""
    params: dict[str, Any]
    """The node's ``params`` (design params filled in): the function's keyword arguments."""

    async def run(self, sc: Scope, env: Env, i: int | None, st: Tally, calls: Calls) -> Val:
        """Call the function with the node's inputs (the item, in a ``map`` branch) and params."""
        if env.br is not None:
            item = env.br.item
            args = [pyval(item) if isinstance(item, Val) else item]
        else:
            args = [g(env) for g in self.args]
        ret = self.fn(*args, **self.params)
        if inspect.isawaitable(ret):
            ret = await ret
        text = ret if isinstance(ret, str) else fmt_data(ret) if not isinstance(ret, (list, dict)) else \
            json.dumps(ret, ensure_ascii=False, default=str)
        return Val(text=text, answers=answers_of(ret, sc.n), data=ret)


class PythonOp(Op):
    """A registered function (:data:`~masbench.runtime.pyfuncs.PYTHON_FUNCS`) on the node's inputs."""

    keys = ("python",)
    fans = frozenset({"map"})
    may_be_list = True
    data_fields = True
    color = "#d1e7dd"
    shape = ('[/"', '"/]')

    def check(self, an: Checking, info: NodeInfo) -> None:
        name = info.spec.python
        if name is None:
            an.at(info, (), "a python node needs `python:` naming a registered function")
        elif name not in PYTHON_FUNCS:
            an.at(info, ("python",), f"unregistered python function {name!r} (registered: "
                                     f"{', '.join(sorted(PYTHON_FUNCS))})")

    def ref_fields(self, info: NodeInfo) -> set[str] | None:
        return None  # a function may return any mapping

    def compile(self, b: Binding, info: NodeInfo) -> PythonNode:
        name = info.spec.python
        assert name is not None and name in PYTHON_FUNCS  # the check rejects unregistered functions
        return PythonNode(**b.base(info), fn=PYTHON_FUNCS[name], args=b.py_args(info), params=b.node_params(info))

    def actor(self, info: NodeInfo) -> str | None:
        return info.spec.python

    def aggregates(self, node: NodeSpec) -> bool:
        return node.python == "majority"

    def passthrough(self, node: NodeSpec) -> bool:
        return node.python == "identity" and len([x for x in node.inputs if x != "question"]) == 1

    def label(self, info: NodeInfo) -> str:
        return f"python: {info.spec.python}"


def answers_of(ret: Any, n: int) -> tuple[str, ...] | None:
    """The answers a function's return gives (a scalar, n scalars, or an ``answer`` field)."""
    if ret is None:
        return None
    if isinstance(ret, (list, tuple)):
        if ret and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in ret):
            if len(ret) == n or n == 1 and len(ret) == 1:
                return tuple(normalize_answer(str(x)) for x in ret)
        return None
    if isinstance(ret, dict):
        for k in ("answer", "answers", "result"):
            if k in ret:
                return answers_of(ret[k], n)
        return None
    if isinstance(ret, bool):
        return None
    return (normalize_answer(str(ret)),)


OP = PythonOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["python"]``)."""

__all__ = ["OP", "PythonNode", "PythonOp", "answers_of"]
