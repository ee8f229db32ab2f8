"""One node's own settings — everything that can be checked without looking at other nodes: its
kind (an op registered in :data:`~masbench.runtime.ops.OPS`), the op keys it sets, the op's own
check (its agent, function or sub-design), structured output and fan-out (``repeat`` / ``map``)."""

from __future__ import annotations

import re

from ..registry import RegistryError
from ..spec.design import OP_KEYS, NodeSpec
from .info import Checking, NodeInfo
from .ops import OPS, kinds_where
from .reads import RESERVED
from .template import substitute_params

MAX_REPEAT = 256
_SOURCE = re.compile(r"([A-Za-z_][\w\-]*)(?:\.([A-Za-z_][\w\-]*))?")


def check_node(an: Checking, name: str, spec: NodeSpec, path: tuple, loop: str | None, order: int) -> NodeInfo:
    """Resolve one node (its op, agent, schema, fan-out), reporting what is wrong with it."""
    kind = spec.kind
    try:
        op = OPS[kind]
    except RegistryError as exc:
        info = NodeInfo(name, spec, path, loop, order)
        an.at(info, ("kind",), f"{exc} — register it with masbench.runtime.OPS.add")
        return info
    info = NodeInfo(name, spec, path, loop, order)
    if name in RESERVED:
        an.at(info, (), f"node name {name!r} is reserved in templates (question, inputs, item, index, "
                        "candidates, round, history)")
    for key in OP_KEYS:
        if getattr(spec, key) is not None and key not in op.keys:
            an.at(info, (key,), f"`{key}:` does not apply to a {kind} node")
    op.check(an, info)
    if spec.system is not None and not op.prompted:
        an.at(info, ("system",), f"a system message applies to {kinds_where(lambda o: o.prompted, 'and')} "
                                 "nodes only")
    if spec.output is not None and not op.prompted:
        an.at(info, ("output",), f"structured output applies to {kinds_where(lambda o: o.prompted, 'and')} "
                                 "nodes only")
    out = spec.output or (info.agent.output if info.agent is not None else None)
    if out is not None and op.prompted:
        info.schema = dict(out.json_)
    if spec.into is not None and loop is not None:
        an.at(info, ("into",), "`into` is not supported inside a loop body")
    for fan in ("repeat", "map"):
        if getattr(spec, fan) is not None and fan not in op.fans:
            an.at(info, (fan,), f"{fan} applies to {kinds_where(lambda o, f=fan: f in o.fans)} nodes only")
            return info
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
    assert info.spec.map is not None  # called only when the node has `map:`
    src = info.spec.map.strip()
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
