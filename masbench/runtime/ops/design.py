"""``design`` nodes: another design run as a sub-agent on this node's input, in its own scope
(sharing the budget meter), through the runner compiled into the node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...charge import Tally
from ...spec.design import NodeSpec
from .. import links
from ..info import Checking, NodeInfo
from ..scope import EMPTY, Env, Scope
from ..template import Template
from ..values import OK, Val, fmt_data, vtext
from .base import Binding, Calls, Getter, Node, Op, SubRun, Weigher
from .prompted import render_inputs

_STATUS = {"ok": OK, "degraded": "degraded", "budget_exhausted": "budget_exhausted"}


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SubNode(Node):
    """A node that runs a sub-design on a question of its own (a design node, a route node)."""

    prompt: Template | None
    """What the sub-design is asked, when the node says (else its inputs, else the question)."""
    extra_inputs: tuple[tuple[str, Getter], ...]
    """Labelled ``from`` inputs its prompt does not mention."""
    reads_inputs: bool
    """It has ``from`` inputs besides the question."""

    def sub_question(self, sc: Scope, env: Env) -> str:
        """What the sub-design is asked: the node's prompt, else the map item, else its inputs, else the question."""
        if self.prompt is not None:
            return self.prompt.render(env)
        it = env.br.item if env.br is not None else None
        if it is not None and it is not EMPTY and self.fan == "map":
            return vtext(it) if isinstance(it, Val) else fmt_data(it)
        if self.extra_inputs and self.reads_inputs:
            return render_inputs(self.extra_inputs, env)
        return sc.question

    async def run_design(self, sc: Scope, env: Env, idx: int, st: Tally, run_sub: SubRun,
                         seed_base: int | None = None) -> Val:
        """Run a sub-design; its usage counts in this node's tally, its outcome is recorded.
        ``seed_base``: the sub-design's sample indices (default: distinct from this design's and
        from every other node's and branch's)."""
        if seed_base is None:
            seed_base = sc.seed_base + (idx + 1) * 7919 + (self.order + 1) * 104729
        child = Scope(sc.sh, self.sub_question(sc, env), sc.gold, sc.skills, seed_base,
                      prefix=f"{sc.prefix}{self.key}/")
        res = await run_sub(child)
        st.merge(res.usage)
        sc.subs[f"{sc.prefix}{self.key}" + (f"[{idx}]" if self.fan else "")] = {
            "status": res.status, "answers": res.answers, "error": res.error}
        answers = tuple(a for a in res.answers if a) or None
        return Val(text=res.text, answers=answers, status=_STATUS.get(res.status, "error"), error=res.error)


def sub_fields(b: Binding, info: NodeInfo) -> dict[str, Any]:
    """The :class:`SubNode` fields of ``info`` (with the base fields: keywords for the node)."""
    text = info.spec.prompt
    prompt = b.compile(info, text) if text is not None else None
    referenced = set(prompt.names) if prompt is not None else set()
    return dict(b.base(info), prompt=prompt,
                extra_inputs=() if "inputs" in referenced else b.unmentioned(info, referenced),
                reads_inputs=any(name != "question" for name, _ in b.input_vals(info)))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class DesignNode(SubNode):
    """Another design, run as a sub-agent."""

    run_sub: SubRun
    """The sub-design, compiled with the node's params."""

    async def run(self, sc: Scope, env: Env, i: int | None, st: Tally, calls: Calls) -> Val:
        return await self.run_design(sc, env, i or 0, st, self.run_sub)


class DesignOp(Op):
    """Another design, named by ``design:``, run as a sub-agent (``params`` are its params)."""

    keys = ("design",)
    fans = frozenset({"repeat", "map"})
    may_be_list = True
    data_fields = True
    color = "#e2d9f3"
    shape = ('(["', '"])')

    def check(self, an: Checking, info: NodeInfo) -> None:
        if info.spec.design is None:
            an.at(info, (), "a design node needs `design:` naming the sub-design")
        else:
            links.check_subdesign(an, info, info.spec.design)

    def compile(self, b: Binding, info: NodeInfo) -> SubNode:
        design = info.spec.design
        assert design is not None  # the checker rejects a design node without `design:`
        return DesignNode(**sub_fields(b, info), run_sub=b.sub_design(design, b.node_params(info)))

    def actor(self, info: NodeInfo) -> str | None:
        return info.agent.name if info.agent is not None else info.spec.design

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        return w.design(node.design, node.params) if node.design else 1

    def sub_design(self, node: NodeSpec) -> str | None:
        return node.design

    def label(self, info: NodeInfo) -> str:
        return f"design: {info.spec.design}"


OP = DesignOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["design"]``)."""

__all__ = ["OP", "DesignNode", "DesignOp", "SubNode", "sub_fields"]
