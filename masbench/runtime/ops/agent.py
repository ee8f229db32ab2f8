"""``agent`` nodes: one model call (plus structured-output retries)."""

from __future__ import annotations

from ...spec.design import NodeSpec
from ..info import NodeInfo
from ..plan import Plan
from ..prompts import build_messages, cited_evidence, extract, sim_meta
from ..scope import Env, Scope, Stats
from ..structured import parse_structured
from ..values import Val
from .base import Calls, Weigher
from .prompted import PromptedOp


class AgentOp(PromptedOp):
    """One call of the agent's model; ``repeat``/``map`` fan it out."""

    keys = ("agent",)
    fans = frozenset({"repeat", "map"})
    extracts = True
    direct = True
    color = "#cfe2ff"

    async def run(self, plan: Plan, sc: Scope, env: Env, i: int | None, st: Stats, calls: Calls) -> Val:
        return await agent_body(plan, sc, env, calls.index(plan, sc, i or 0), st, calls)

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        return 1

    def signature(self, node: NodeSpec) -> tuple | None:
        return ("agent", str(node.agent), node.prompt, node.system)

    def label(self, info: NodeInfo) -> str:
        return f"agent: {info.agent.name if info.agent else info.spec.agent}"


async def agent_body(plan: Plan, sc: Scope, env: Env, idx: int, st: Stats, calls: Calls) -> Val:
    """Call the agent's model; parse and re-ask (up to ``retries``) when a schema is declared."""
    messages = build_messages(plan, env)
    meta = sim_meta(plan, sc, env)
    meta["sim"].update(cited_evidence(sc, messages))
    res = await calls.model(plan, sc, messages, meta, idx, st)
    if res.error is not None:
        return Val(status="error", error=res.error)
    text = res.text
    data = None
    if plan.schema is not None:
        attempt = 0
        while True:
            data, err = parse_structured(text, plan.schema)
            if err is None:
                break
            sc.parse_failures.append({"node": sc.prefix + plan.key, "attempt": attempt, "error": err})
            if attempt >= plan.retries:
                return Val(text=text, status="parse_failed", error=f"structured output: {err} "
                                                                 f"(after {attempt + 1} attempts)")
            attempt += 1
            messages = messages + [
                {"role": "assistant", "content": text},
                {"role": "user", "content": f"Your reply could not be used: {err}. Reply again with only a JSON "
                                            f"object with the fields: {plan.fields_desc}."}]
            res = await calls.model(plan, sc, messages, meta, idx, st)
            if res.error is not None:
                return Val(status="error", error=res.error)
            text = res.text
    return Val(text=text, answers=extract(plan, sc, text, data), data=data)


OP = AgentOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["agent"]``)."""

__all__ = ["OP", "AgentOp", "agent_body"]
