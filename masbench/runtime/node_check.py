"""One node's own settings: its op, its agent / function / sub-design, structured output and
fan-out (``repeat`` / ``map``) — everything that can be checked without looking at other nodes."""

from __future__ import annotations

import re

from ..spec.design import NodeSpec
from . import links
from .info import Checking, NodeInfo
from .pyfuncs import PYTHON_FUNCS
from .reads import RESERVED
from .template import substitute_params

MAX_REPEAT = 256
_SOURCE = re.compile(r"([A-Za-z_][\w\-]*)(?:\.([A-Za-z_][\w\-]*))?")


def check_node(an: Checking, name: str, spec: NodeSpec, path: tuple, loop: str | None, order: int) -> NodeInfo:
    """Resolve one node (its agent, schema, fan-out), reporting what is wrong with it."""
    info = NodeInfo(name, spec, path, loop, order)
    if name in RESERVED:
        an.at(info, (), f"node name {name!r} is reserved in templates (question, inputs, item, index, "
                        "candidates, round, history)")
    kind = spec.kind
    if kind == "agent":
        info.agent = links.resolve_agent(an, info, spec.agent, ("agent",))
    elif kind == "select":
        info.agent = links.resolve_agent(an, info, spec.select, ("select",))
        if not spec.inputs:
            an.at(info, (), "select needs candidates: give `from: [nodes...]`")
    elif kind == "majority":
        if not [x for x in spec.inputs if x != "question"]:
            an.at(info, (), "a majority vote needs `from:` naming the nodes whose answers it counts")
    elif kind == "python":
        if spec.python not in PYTHON_FUNCS:
            an.at(info, ("python",), f"unregistered python function {spec.python!r} (registered: "
                                     f"{', '.join(sorted(PYTHON_FUNCS))})")
    elif kind == "design":
        links.check_subdesign(an, info)
    elif kind == "loop" and loop is not None:
        an.at(info, ("loop",), "loops cannot be nested")
    if spec.system is not None and kind not in ("agent", "select"):
        an.at(info, ("system",), "a system message applies to agent and select nodes only")
    if spec.output is not None and kind not in ("agent", "select"):
        an.at(info, ("output",), "structured output applies to agent and select nodes only")
    out = spec.output or (info.agent.output if info.agent is not None else None)
    if out is not None and kind in ("agent", "select"):
        info.schema = dict(out.json_)
    if spec.into is not None and loop is not None:
        an.at(info, ("into",), "`into` is not supported inside a loop body")
    if spec.repeat is not None:
        _repeat(an, info)
    elif spec.map is not None:
        _map(an, info)
    return info


def _repeat(an: Checking, info: NodeInfo) -> None:
    spec = info.spec
    info.fan = "repeat"
    try:
        k = int(substitute_params(spec.repeat, an.params))
        if not 1 <= k <= MAX_REPEAT:
            raise ValueError
        info.k = k
    except KeyError as exc:
        an.at(info, ("repeat",), f"unknown param {exc.args[0]!r} in repeat")
    except (TypeError, ValueError):
        an.at(info, ("repeat",), f"repeat must be an integer in 1..{MAX_REPEAT} (got {spec.repeat!r})")


def _map(an: Checking, info: NodeInfo) -> None:
    info.fan = "map"
    src = info.spec.map.strip()  # type: ignore[union-attr]
    try:
        v = substitute_params(src, an.params)
    except KeyError as exc:
        an.at(info, ("map",), f"unknown param {exc.args[0]!r} in map")
        return
    if v is None:
        return
    if not (isinstance(v, str) and v == src):
        if isinstance(v, (list, tuple)):
            info.map_param = list(v)
        else:
            an.at(info, ("map",), f"map over param {src}: not a list (got {type(v).__name__})")
    elif v in an.params:
        pv = an.params[v]
        if isinstance(pv, (list, tuple)):
            info.map_param = list(pv)
        else:
            an.at(info, ("map",), f"map over param {v!r}: not a list")
    else:
        m = _SOURCE.fullmatch(v)
        if not m:
            an.at(info, ("map",), f"map must be `node.field`, `node` or `{{param}}` (got {v!r})")
        else:
            info.map_src = (m.group(1), m.group(2))


__all__ = ["MAX_REPEAT", "check_node"]
