"""A loop node: its round bound, its body (checked node by node), its ``until`` condition, its
``init`` and its output."""

from __future__ import annotations

import re

from .info import Checking, LoopInfo, NodeInfo, Until
from .node_check import check_node
from .template import substitute_params

MAX_ROUNDS = 100
VAL_FIELDS = frozenset({"answer", "text"})
"""Fields every value has (besides its structured-output fields)."""
_UNTIL = re.compile(r"^\s*(?:(?P<not>not)\s+)?(?P<node>[A-Za-z_][\w\-]*)(?:\.(?P<field>[A-Za-z_][\w\-]*))?"
                    r"(?:\s+contains\s+(?P<word>\S.*?))?\s*$")


def check_loop(an: Checking, info: NodeInfo) -> LoopInfo:
    """Resolve a loop node's settings and body, reporting what is wrong."""
    spec = info.spec.loop
    assert spec is not None
    L = info.name
    rounds = 1
    try:
        r = int(substitute_params(spec.max_rounds, an.params))
        if not 1 <= r <= MAX_ROUNDS:
            raise ValueError
        rounds = r
    except KeyError as exc:
        an.at(info, ("loop", "max_rounds"), f"unknown param {exc.args[0]!r} in max_rounds")
    except (TypeError, ValueError):
        an.at(info, ("loop", "max_rounds"), f"max_rounds must be an integer in 1..{MAX_ROUNDS} "
                                            f"(got {spec.max_rounds!r})")
    body: dict[str, NodeInfo] = {}
    for i, (bname, bspec) in enumerate(spec.nodes.items()):
        path = ("nodes", L, "loop", "nodes", bname)
        if bname in an.design.nodes:
            an.problem(path, path, f"ambiguous reference: body node {bname!r} has the name of a top-level node")
        body[bname] = check_node(an, bname, bspec, path, L, i)
    until = _until(an, info, spec.until, body) if spec.until is not None else None
    if spec.output not in body:
        an.at(info, ("loop", "output"), f"missing output: loop output {spec.output!r} is not a node of its body "
                                        f"(body: {', '.join(body)})")
    if spec.init is not None and spec.init not in an.design.nodes:
        an.at(info, ("loop", "init"), f"unknown node {spec.init!r} in init")
    elif spec.init == L:
        an.at(info, ("loop", "init"), "a loop cannot start from itself")
    return LoopInfo(L, rounds, until, spec.init, spec.output, body)


def _until(an: Checking, info: NodeInfo, text: str, body: dict[str, NodeInfo]) -> Until | None:
    u = text.strip()
    if u == "converged":
        return Until(None, converged=True)
    m = _UNTIL.match(u)
    where = ("loop", "until")
    if not m or (m.group("field") and m.group("word")) or (m.group("not") and m.group("word")):
        an.at(info, where, f"cannot read until {u!r} (use `node.field`, `not node.field`, "
                           "`node contains WORD` or `converged`)")
        return None
    until = Until(m.group("node"), m.group("field"), m.group("word"), bool(m.group("not")))
    if until.node not in body:
        an.at(info, where, f"until names {until.node!r}, which is not a node of this loop's body")
        return None
    if until.field and until.field not in VAL_FIELDS:
        target = body[until.node]
        sch = target.schema
        if sch is not None and until.field not in sch:
            an.at(info, where, f"until reads {until.node}.{until.field}, but {until.node!r} has no field "
                               f"{until.field!r} (fields: {', '.join(sch)})")
        elif sch is None and target.kind not in ("python", "design"):
            an.at(info, where, f"until reads {until.node}.{until.field}, but {until.node!r} has no structured "
                               f"output (use `{until.node} contains WORD`)")
    return until


__all__ = ["MAX_ROUNDS", "VAL_FIELDS", "check_loop"]
