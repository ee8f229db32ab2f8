"""``loop`` nodes: a bounded sub-graph (the body) run up to ``max_rounds`` times, stopping early when
its ``until`` condition holds (judged by :mod:`.until`). The check resolves the round bound, the
body (node by node, through the analysis), the condition, ``init`` and the output. The compiled
:class:`LoopNode` is the round controller (:meth:`LoopNode.round`) and the exit
(:meth:`LoopNode.exit`); a scheduler runs the body's own nodes between them."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ...charge import Tally
from ...spec.design import NodeSpec
from ..info import VAL_FIELDS, Checking, LoopInfo, NodeInfo, Until
from ..scope import Env, Scope
from ..template import substitute_params
from ..values import Val, read, vtext
from . import op_of
from .base import Binding, Getter, Node, Op, Weigher
from .until import StopRule

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



@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class LoopNode(Node):
    """A loop: its round controller and its exit (it never runs as one node)."""

    cur: Getter
    """The loop's current value: its body output's latest value, else its init node's value."""
    max_rounds: int
    init: str | None
    converged: bool
    """It stops when a round repeats the previous round's answers."""
    fan_judge: tuple[str, StopRule] | None
    """When the ``until`` node fans out: its key and the rule, judged here once all its branches are
    in (a single until node judges itself as it runs)."""

    async def round(self, state: dict, sc: Scope) -> dict:
        """The round controller: judge the round just finished, then start another or exit
        (``sc.go[loop]``). Its state update is empty."""
        L = self.key
        r = sc.rounds.get(L, 0)
        v = self.cur(Env(state, sc))
        if r == 0:
            # before round 1 only the init has a value (loops are not nested; a sub-design's loop
            # has its own scope)
            if self.init is not None and v is not None:
                sc.hist.setdefault(L, []).append((0, self.init, vtext(v)))
        else:
            if self.fan_judge is not None and L not in sc.stop:  # judged once all branches are in
                ukey, rule = self.fan_judge
                uv = read(state, ukey, True)
                if uv is not None:
                    rule.check(sc, uv)
            if self.converged and L not in sc.stop:
                if v is not None and v.answers is not None and v.answers == sc.prev.get(L):
                    sc.stop[L] = "converged"
        if v is not None:
            # a fan-out's value (``read``) carries no answers of its own, so ``converged`` compares
            # single values only
            sc.prev[L] = v.answers
        if L not in sc.stop:
            if r >= self.max_rounds:
                sc.stop[L] = "max_rounds"
            elif sc.sh.meter.exhausted:
                sc.stop[L] = "budget"
            else:
                sc.rounds[L] = r + 1
        sc.go[L] = L not in sc.stop
        return {}

    async def exit(self, state: dict, sc: Scope) -> dict:
        """The exit: write the loop's value and record its rounds (and its node row)."""
        L = self.key
        t0 = time.perf_counter()
        v = self.cur(Env(state, sc))  # the body output's latest value, else the init's (a Val is never mutated)
        if v is None:
            v = Val(status="empty", error="the loop produced no value")
        sc.loops[sc.prefix + L] = {"rounds": sc.rounds.get(L, 0), "max_rounds": self.max_rounds,
                                   "stopped": sc.stop.get(L)}
        sc.record(L, v)
        sc.emit(L, self.row_op, None, None, Tally(), v, t0)
        return {L: v}


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

    def compile(self, b: Binding, info: NodeInfo) -> LoopNode:
        lp = b.an.loops[info.name]
        u = lp.until
        judge = None
        if u is not None and u.node is not None and lp.body[u.node].fan is not None:
            judge = (lp.body[u.node].key, StopRule.of(lp.name, u))
        return LoopNode(**b.base(info), cur=b.loop_cur(lp), max_rounds=lp.max_rounds, init=lp.init,
                        converged=u is not None and u.converged, fan_judge=judge)

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        lp = node.loop
        if lp is None:
            return 0
        rounds = w.param(lp.max_rounds)
        rounds = rounds if isinstance(rounds, int) else 1
        return rounds * max(w.body(lp.nodes, lp.output), 1)


OP = LoopOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["loop"]``)."""

__all__ = ["MAX_ROUNDS", "OP", "LoopNode", "LoopOp", "check_loop"]
