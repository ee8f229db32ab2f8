"""``select`` nodes: a selector agent picks one of the candidates (verifier / ScEnsemble); when it
gives no usable choice, the majority over the candidates stands in (and the node is degraded)."""

from __future__ import annotations

from dataclasses import dataclass

from ...charge import Tally
from ...spec.design import NodeSpec
from ...text import parse_choice
from ..info import Checking, NodeInfo
from ..pyfuncs import majority_vote
from ..scope import Env, Scope
from ..values import OK, Val
from .base import Binding, Calls, Getter, Weigher, head
from .prompted import PromptedNode, PromptedOp, sim_task


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SelectNode(PromptedNode):
    """The selector agent picks one of the candidates (its ``from`` inputs' members)."""

    async def run(self, sc: Scope, env: Env, i: int | None, st: Tally, calls: Calls) -> Val:
        """Ask the selector; record the choice (or the fallback) under ``detail["selects"]``."""
        cands = [m for name, vg in self.inputs if name != "question" for v in [vg(env)] if v is not None
                 for m in v.members() if m.present and m.status == OK]
        if not cands:
            return Val(status="empty", error="no candidates to select from")
        env.cands = cands
        messages = self.messages(env)
        meta = {"sim": {"gold": sc.gold, "skills": sc.skills + list(self.skills), "mode": "choice",
                        "task": sim_task(sc), "agent": self.actor,
                        "candidates": [",".join(c.answers) if c.answers else c.text for c in cands]}}
        res = await calls.model(self, sc, messages, meta, calls.index(self, sc, 0), st)
        choice = parse_choice(res.text, len(cands)) if res.error is None else None
        sc.selects[sc.prefix + self.key] = {"n": len(cands), "choice": None if choice is None else choice + 1,
                                            "fallback": choice is None}
        if choice is None:  # the selector failed or gave no usable choice: majority over the candidates
            winner, _t, _tie = majority_vote([c.answers for c in cands])
            pick = next((c for c in cands if c.answers == winner), cands[0])
            err = res.error or "no usable choice in the selector's reply; fell back to majority"
            return Val(text=pick.text, answers=pick.answers, data=pick.data, status="degraded", error=err)
        pick = cands[choice]
        return Val(text=pick.text, answers=pick.answers, data=pick.data)


class SelectOp(PromptedOp):
    """The selector agent named by ``select:`` picks one of the ``from`` candidates."""

    agent_key = "select"
    keys = ("select", "agent")
    names = frozenset({"candidates"})
    color = "#f8d7da"
    shape = ('{"', '"}')

    def check(self, an: Checking, info: NodeInfo) -> None:
        super().check(an, info)
        if not info.spec.inputs:
            an.at(info, (), "select needs candidates: give `from: [nodes...]`")

    def extra_inputs(self, b: Binding, info: NodeInfo, referenced: set[str]) -> tuple[tuple[str, Getter], ...]:
        # `from` is the candidates: only a `question` entry is shown as an input of its own
        out = [(lbl, g) for (lbl, g), entry in zip(b.input_texts(info), info.spec.inputs)
               if head(entry) not in referenced and entry.strip() == "question"]
        if "candidates" not in referenced:
            out.append(("Candidates", b.str_getter("candidates", None, info)))
        return tuple(out)

    def compile(self, b: Binding, info: NodeInfo) -> SelectNode:
        return SelectNode(**self.prompted_fields(b, info))

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        return 1

    def aggregates(self, node: NodeSpec) -> bool:
        return True

    def label(self, info: NodeInfo) -> str:
        return f"select: {info.spec.select}"


OP = SelectOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["select"]``)."""

__all__ = ["OP", "SelectNode", "SelectOp"]
