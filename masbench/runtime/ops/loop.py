"""``loop`` nodes: a bounded sub-graph (the body) run up to ``max_rounds`` times, stopping early when
its ``until`` condition holds (judged by :mod:`.until`). The check resolves the round bound, the
body (node by node, through the analysis), the condition, ``init`` and the output; the graph wires
the body between the loop's round controller and its exit (:mod:`masbench.runtime.steps`)."""

from __future__ import annotations

import re

from ...spec.design import NodeSpec
from ..info import VAL_FIELDS, Checking, LoopInfo, NodeInfo, Until
from ..plan import Plan
from ..scope import Env, Scope, Stats
from ..template import substitute_params
from ..values import Val
from . import op_of
from .base import Binding, Calls, Op, SubRunner, Weigher

MAX_ROUNDS = 100
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
        body[bname] = an.node(bname, bspec, path, L, i)
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
        elif sch is None and not op_of(target.kind).data_fields:
            an.at(info, where, f"until reads {until.node}.{until.field}, but {until.node!r} has no structured "
                               f"output (use `{until.node} contains WORD`)")
    return until



class LoopOp(Op):
    """A bounded loop over a body sub-graph (its value: the body output's latest value)."""

    keys = ("loop",)
    may_be_list = True
    color = "#eeeeee"

    def check(self, an: Checking, info: NodeInfo) -> None:
        if info.spec.loop is None:
            an.at(info, (), "a loop node needs `loop:` (its body, output and bound)")
        elif info.loop is not None:
            an.at(info, ("loop",), "loops cannot be nested")

    def body(self, an: Checking, info: NodeInfo) -> LoopInfo | None:
        return check_loop(an, info) if info.spec.loop is not None and info.loop is None else None

    def ref_fields(self, info: NodeInfo) -> set[str] | None:
        return set(VAL_FIELDS) | {"history"}

    def bind(self, b: Binding, p: Plan, sub_runner: SubRunner) -> None:
        lp = b.an.loops[p.name]
        p.loop_cur = b.loop_cur(lp)
        if lp.until is not None and lp.until.node is not None:
            up = b.plans[lp.body[lp.until.node].key]
            up.until = lp.until
            if lp.until.word:
                up.until_rx = re.compile(rf"(?<!\w){re.escape(lp.until.word.strip())}(?!\w)", re.I)

    async def run(self, plan: Plan, sc: Scope, env: Env, i: int | None, st: Stats, calls: Calls) -> Val:
        raise RuntimeError("a loop runs as its round controller and exit, not as one node")

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        lp = node.loop
        if lp is None:
            return 0
        rounds = w.param(lp.max_rounds)
        rounds = rounds if isinstance(rounds, int) else 1
        return rounds * max(w.body(lp.nodes, lp.output), 1)


OP = LoopOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["loop"]``)."""

__all__ = ["MAX_ROUNDS", "OP", "LoopOp", "check_loop"]
