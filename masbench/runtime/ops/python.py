"""``python`` nodes: a registered function (:data:`~masbench.runtime.pyfuncs.PYTHON_FUNCS`) called
on the node's inputs — never model-written code."""

from __future__ import annotations

import inspect
import json
from typing import Any

from ...text import normalize_answer
from ..plan import Plan
from ..scope import Env, Scope
from ..values import Val, fmt_data, pyval


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
    ret = plan.pyfn(*args, **plan.pykw)  # type: ignore[misc]
    if inspect.isawaitable(ret):
        ret = await ret
    text = ret if isinstance(ret, str) else fmt_data(ret) if not isinstance(ret, (list, dict)) else \
        json.dumps(ret, ensure_ascii=False, default=str)
    return Val(text=text, answers=answers_of(ret, sc.n), data=ret)
