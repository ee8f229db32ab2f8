"""``op: majority`` nodes: a vote over the extracted answers of ``from`` (ties broken by the run's
tie rule, :mod:`masbench.runtime.ties`; the tally and any tie are recorded under ``detail["votes"]``)."""

from __future__ import annotations

from dataclasses import dataclass

from ...charge import Tally
from ...spec.design import NodeSpec
from ..info import Checking, NodeInfo
from ..scope import Env, Scope
from ..values import Val
from .base import Binding, Calls, Getter, Node, Op

_TIE_LABEL = {"first": "first-seen", "split": "split (seeded uniform draw)", "random": "random priority"}


class VoteOp(Op):
    """A vote over the answers of the ``from`` nodes (no model call)."""

    keys = ("op",)
    color = "#ffe69c"
    shape = ('{{"', '"}}')

    def check(self, an: Checking, info: NodeInfo) -> None:
        if not [x for x in info.spec.inputs if x != "question"]:
            an.at(info, (), "a majority vote needs `from:` naming the nodes whose answers it counts")

    def compile(self, b: Binding, info: NodeInfo) -> VoteNode:
        return VoteNode(**b.base(info), inputs=b.input_vals(info))

    def aggregates(self, node: NodeSpec) -> bool:
        return True

    def label(self, info: NodeInfo) -> str:
        return "majority vote"


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class VoteNode(Node):
    """A vote over the answers of its ``from`` inputs."""

    inputs: tuple[tuple[str, Getter], ...]
    """The ``from`` inputs as values (name, getter)."""

    async def run(self, sc: Scope, env: Env, i: int | None, st: Tally, calls: Calls) -> Val:
        """Count the answers of every input member; the winner's text and the tally are the value."""
        cands = [m for name, vg in self.inputs if name != "question" for v in [vg(env)] if v is not None
                 for m in v.members()]
        keys = [c.answers if c.answers else None for c in cands]
        winner, tally, tie = sc.sh.vote(keys, sc.prefix + self.key)
        rec = {"tally": {", ".join(k): c for k, c in tally.items()}, "winner": ", ".join(winner) if winner else None,
               "tie": [", ".join(t) for t in tie] or None, "tie_break": _TIE_LABEL.get(sc.sh.tie) if tie else None,
               "voters": len(keys) - keys.count(None), "missing": keys.count(None)}
        sc.votes[sc.prefix + self.key] = rec
        if winner is None:
            return Val(status="empty", error="no answers to vote on")
        pick = next(c for c in cands if c.answers == winner)
        return Val(text=pick.text, answers=winner, data=rec)


OP = VoteOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["majority"]``)."""

__all__ = ["OP", "VoteNode", "VoteOp"]
