"""``python`` nodes: a registered function (:data:`~masbench.runtime.pyfuncs.PYTHON_FUNCS`) called
on the node's inputs — never model-written code."""

from __future__ import annotations

import inspect
import json
from typing import Any

from ...spec.design import NodeSpec
from ...text import normalize_answer
from ..info import Checking, NodeInfo
from ..plan import Plan
from ..pyfuncs import PYTHON_FUNCS
from ..scope import Env, Scope, Stats
from ..values import Val, fmt_data, pyval
from .base import Binding, Calls, Op, SubRunner


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

    def bind(self, b: Binding, p: Plan, sub_runner: SubRunner) -> None:
        name = p.info.spec.python
        p.pyfn = PYTHON_FUNCS[name] if name and name in PYTHON_FUNCS else None
        p.kwargs = b.node_params(p)

    def actor(self, info: NodeInfo) -> str | None:
        return info.spec.python

    async def run(self, plan: Plan, sc: Scope, env: Env, i: int | None, st: Stats, calls: Calls) -> Val:
        return await python_body(plan, sc, env)

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


async def python_body(plan: Plan, sc: Scope, env: Env) -> Val:
    """Call the function with the node's inputs (the item, in a ``map`` branch) and params."""
    if env.br is not None:
        item = env.br.item
        args = [pyval(item) if isinstance(item, Val) else item]
    else:
        args = [g(env) for g in plan.py_args]
    assert plan.pyfn is not None  # the checker rejects unregistered functions
    ret = plan.pyfn(*args, **plan.kwargs)
    if inspect.isawaitable(ret):
        ret = await ret
    text = ret if isinstance(ret, str) else fmt_data(ret) if not isinstance(ret, (list, dict)) else \
        json.dumps(ret, ensure_ascii=False, default=str)
    return Val(text=text, answers=answers_of(ret, sc.n), data=ret)


OP = PythonOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["python"]``)."""

__all__ = ["OP", "PythonOp", "answers_of", "python_body"]
