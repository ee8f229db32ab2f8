"""``design`` nodes: another design run as a sub-agent on this node's input, in its own scope
(sharing the budget meter), through the runner the compiled design bound to the plan."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ...spec.design import NodeSpec
from .. import links
from ..info import Checking, NodeInfo
from ..plan import Plan
from ..prompts import render_inputs
from ..scope import EMPTY, Env, Scope, Stats
from ..values import OK, Val, fmt_data, vtext
from ..types import DesignResult
from .base import Binding, Calls, Op, SubRunner, Weigher

_STATUS = {"ok": OK, "degraded": "degraded", "budget_exhausted": "budget_exhausted"}


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

    def compile_templates(self, b: Binding, p: Plan) -> set[str]:
        prompt = p.info.spec.prompt
        if prompt is None:
            return set()
        p.prompt = b.compile(p, prompt)
        return set(p.prompt.names)

    def bind(self, b: Binding, p: Plan, sub_runner: SubRunner) -> None:
        design = p.info.spec.design
        assert design is not None  # the checker rejects a design node without `design:`
        p.kwargs = b.node_params(p)
        p.run_sub = sub_runner(design, p.kwargs)

    def actor(self, info: NodeInfo) -> str | None:
        return info.agent.name if info.agent is not None else info.spec.design

    async def run(self, plan: Plan, sc: Scope, env: Env, i: int | None, st: Stats, calls: Calls) -> Val:
        return await design_body(plan, sc, env, i or 0, st)

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        return w.design(node.design, node.params) if node.design else 1

    def sub_design(self, node: NodeSpec) -> str | None:
        return node.design

    def label(self, info: NodeInfo) -> str:
        return f"design: {info.spec.design}"


def sub_question(plan: Plan, sc: Scope, env: Env) -> str:
    """What the sub-design is asked: the node's prompt, else the map item, else its inputs, else the question."""
    if plan.prompt is not None:
        return plan.prompt.render(env)
    it = env.br.item if env.br is not None else None
    if it is not None and it is not EMPTY and plan.fan == "map":
        return vtext(it) if isinstance(it, Val) else fmt_data(it)
    if plan.extra_inputs and any(name != "question" for name, _ in plan.input_vals):
        return render_inputs(plan.extra_inputs, env)
    return sc.question


async def design_body(plan: Plan, sc: Scope, env: Env, idx: int, st: Stats,
                      run_sub: Callable[[Scope], Awaitable[DesignResult]] | None = None,
                      seed_base: int | None = None) -> Val:
    """Run the sub-design (``run_sub``, default the plan's); its usage counts towards this node, its
    outcome is recorded. ``seed_base``: the sub-design's sample indices (default: distinct from this
    design's and from every other node's and branch's)."""
    run_sub = run_sub or plan.run_sub
    assert run_sub is not None
    if seed_base is None:
        seed_base = sc.seed_base + (idx + 1) * 7919 + (plan.order + 1) * 104729
    child = Scope(sc.sh, sub_question(plan, sc, env), sc.gold, sc.skills, seed_base,
                  prefix=f"{sc.prefix}{plan.key}/", parent=sc)
    res = await run_sub(child)
    st.calls += res.calls
    st.tokens += res.tokens
    st.cost += res.cost_usd
    sc.subs[f"{sc.prefix}{plan.key}" + (f"[{idx}]" if plan.fan else "")] = {
        "status": res.status, "answers": res.answers, "error": res.error}
    answers = tuple(a for a in res.answers if a) or None
    return Val(text=res.text, answers=answers, status=_STATUS.get(res.status, "error"), error=res.error)


OP = DesignOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["design"]``)."""

__all__ = ["OP", "DesignOp", "design_body", "sub_question"]
