"""References between nodes: every ``from`` entry, template reference and ``map`` source is
resolved against what the node can see (built-ins, params, nodes, channels, its loop's body),
becoming the node's dependencies; anything unknown or out of scope is reported."""

from __future__ import annotations

import re

from .info import VAL_FIELDS, Checking, LoopInfo, NodeInfo
from .ops import kinds_where, op_of
from .reads import RESERVED
from .template import refs as template_parts

_ENTRY = re.compile(r"([A-Za-z_][\w\-]*)(?:\.([A-Za-z_][\w\-]*))?")
_NOT_FROM = RESERVED - {"question"}


def templates(info: NodeInfo) -> list[tuple[tuple, str | None]]:
    """(yaml sub-path, template text) of every template the node renders (its op says which)."""
    return op_of(info.kind).templates(info)


def _loop_of(an: Checking, info: NodeInfo) -> LoopInfo | None:
    return an.loops.get(info.loop) if info.loop else None


def fields_of(an: Checking, name: str, ctx: NodeInfo) -> set[str] | None:
    """Fields a reference to ``name`` may use (None: any)."""
    lp = _loop_of(an, ctx)
    target: NodeInfo | None = None
    if lp is not None and name in lp.body:
        target = lp.body[name]
    elif name in an.top:
        target = an.top[name]
    if target is None:
        return None if name in an.channels else set(VAL_FIELDS)
    return op_of(target.kind).ref_fields(target)


def check_ref(an: Checking, info: NodeInfo, name: str, fld: str | None, sub: tuple, what: str) -> bool:
    """Is ``name[.fld]`` visible from ``info``? Reports a problem if not."""
    lp = _loop_of(an, info)
    if name in ("question", "inputs"):
        ok = fld is None
    elif name in ("item", "index"):
        if info.fan is None:
            an.at(info, sub, f"{what} uses {{{name}}}, which only exists in repeat/map nodes")
            return False
        ok = fld is None or name == "item"
    elif name == "candidates":
        if name not in op_of(info.kind).names:
            an.at(info, sub, f"{what} uses {{candidates}}, which only exists in "
                             f"{kinds_where(lambda o: 'candidates' in o.names)} nodes")
            return False
        ok = fld is None
    elif name in ("round", "history"):
        if lp is None:
            an.at(info, sub, f"{what} uses {{{name}}}, which only exists inside a loop body")
            return False
        ok = fld is None
    elif name in an.params:
        pv = an.params[name]
        ok = fld is None or (isinstance(pv, dict) and fld in pv)
    elif (lp is not None and (name in lp.body or name == lp.name)) or name in an.top or name in an.channels:
        fields = fields_of(an, name, info)
        if fld is not None and fields is not None and fld not in fields:
            an.at(info, sub, f"{what} reads {name}.{fld}, but {name!r} has no field {fld!r} "
                             f"(fields: {', '.join(sorted(fields))})")
            return True  # the node itself is known: keep the dependency
        if name == info.name and info.loop is None:
            an.at(info, sub, f"cycle: node {name!r} reads itself (only loop bodies may read their "
                             "previous round)")
            return False
        return True
    else:
        hint = ""
        for L, l2 in an.loops.items():
            if name in l2.body:
                hint = f" ({name!r} is inside loop {L!r}; read the loop's value {{{L}}} instead)"
        an.at(info, sub, f"unknown reference {{{name}{'.' + fld if fld else ''}}} in {what}: no node, "
                         f"param or built-in of that name{hint}")
        return False
    if not ok:
        an.at(info, sub, f"{what} reads {name}.{fld}: {name!r} has no such field")
    return ok


def resolve(an: Checking, info: NodeInfo) -> None:
    """Check a node's references and set its ``refs``, ``deps``, ``ext`` and ``back``."""
    spec = info.spec
    found: list[tuple[str, str | None]] = []
    for i, entry in enumerate(spec.inputs):
        m = _ENTRY.fullmatch(entry.strip())
        sub = ("from", i) if isinstance(spec.from_, list) else ("from",)
        if not m:
            an.at(info, sub, f"from entry {entry!r} must be a node name (or node.field)")
            continue
        if m.group(1) in _NOT_FROM:
            an.at(info, sub, f"from entry {entry!r} must name a node or question")
            continue
        if check_ref(an, info, m.group(1), m.group(2), sub, "from"):
            found.append((m.group(1), m.group(2)))
    for sub, text in templates(info):
        what = ("prompt" if sub == ("prompt",) else "system" if sub == ("system",)
                else f"agent {info.agent.name!r}" if info.agent else "template")
        for name, fld in template_parts(text):
            if name in an.params and fld is None:
                continue
            if check_ref(an, info, name, fld, sub, what):
                found.append((name, fld))
    if info.map_src is not None:
        name, fld = info.map_src
        if check_ref(an, info, name, fld, ("map",), "map"):
            found.append((name, fld))
            _check_map(an, info, name, fld)
    info.refs = found
    lp = _loop_of(an, info)
    for name, _ in found:
        if name in RESERVED or name in an.params:
            continue
        if lp is not None:
            if name in lp.body:
                (info.deps if lp.body[name].order < info.order else info.back).add(name)
                continue
            if name == lp.name:
                continue
            info.ext.update(producers(an, name))
        else:
            info.deps.update(producers(an, name))


def producers(an: Checking, name: str) -> list[str]:
    """The nodes whose values a reference to ``name`` reads (a channel's writers)."""
    if name in an.channels and name not in an.top:
        return list(an.channels[name])
    return [name]


def _check_map(an: Checking, info: NodeInfo, name: str, fld: str | None) -> None:
    lp = _loop_of(an, info)
    target = lp.body.get(name) if lp is not None and name in lp.body else an.top.get(name)
    if target is None:
        return
    if fld is None:
        if target.fan is None and not op_of(target.kind).may_be_list and name not in an.channels:
            an.at(info, ("map",), f"map over {name!r}: not a list (map a list field such as {name}.items, "
                                  "or a repeat/map node)")
    elif target.schema is not None and fld in target.schema and not target.schema[fld].startswith("list"):
        an.at(info, ("map",), f"map over {name}.{fld}: field type is {target.schema[fld]}, not a list")


def check_body(an: Checking, lp: LoopInfo) -> None:
    """Every body node is read by another, or is the loop's output or its until node."""
    read: set[str] = set()
    for b in lp.body.values():
        read |= b.deps | b.back
    for b in lp.body.values():
        if b.name not in read and b.name != lp.output and (lp.until is None or lp.until.node != b.name):
            an.at(b, (), f"unreachable: nothing in loop {lp.name!r} reads {b.name!r} and it is neither the "
                         "loop's output nor its until node")


__all__ = ["check_body", "check_ref", "fields_of", "producers", "resolve", "templates"]
