"""``agent`` nodes: one model call (plus structured-output retries)."""

from __future__ import annotations

from dataclasses import dataclass

from ...charge import Tally
from ...spec.design import NodeSpec
from ..info import NodeInfo
from ..scope import Env, Scope
from ..structured import parse_structured
from ..values import Val
from .base import Binding, Calls, Weigher
from .prompted import Answer, PromptedNode, PromptedOp, answer_of, cited_evidence, fields_desc


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class AgentNode(PromptedNode):
    """One call of the agent's model; with a schema, re-asked up to ``retries`` times until the
    reply parses."""

    retries: int
    """Re-asks after a reply that does not parse (the structured output's ``retries``)."""
    answer: Answer | None

    async def run(self, sc: Scope, env: Env, i: int | None, st: Tally, calls: Calls) -> Val:
        return await self.ask(sc, env, calls.index(self, sc, i or 0), st, calls)

    async def ask(self, sc: Scope, env: Env, idx: int, st: Tally, calls: Calls) -> Val:
        """Call the agent's model; parse and re-ask (up to ``retries``) when a schema is declared."""
        messages = self.messages(env)
        meta = self.sim_meta(sc, env)
        meta["sim"].update(cited_evidence(sc, messages))
        res = await calls.model(self, sc, messages, meta, idx, st)
        if res.error is not None:
            return Val(status="error", error=res.error)
        text = res.text
        data = None
        if self.schema is not None:
            attempt = 0
            while True:
                data, err = parse_structured(text, self.schema)
                if err is None:
                    break
                sc.parse_failures.append({"node": sc.prefix + self.key, "attempt": attempt, "error": err})
                if attempt >= self.retries:
                    return Val(text=text, status="parse_failed", error=f"structured output: {err} "
                                                                     f"(after {attempt + 1} attempts)")
                attempt += 1
                messages = messages + [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": f"Your reply could not be used: {err}. Reply again with only a "
                                                f"JSON object with the fields: {fields_desc(self.schema)}."}]
                res = await calls.model(self, sc, messages, meta, idx, st)
                if res.error is not None:
                    return Val(status="error", error=res.error)
                text = res.text
        answers = self.answer.extract(sc, text, data) if self.answer is not None else None
        return Val(text=text, answers=answers, data=data)


class AgentOp(PromptedOp):
    """One call of the agent's model; ``repeat``/``map`` fan it out."""

    keys = ("agent",)
    fans = frozenset({"repeat", "map"})
    extracts = True
    direct = True
    color = "#cfe2ff"

    def compile(self, b: Binding, info: NodeInfo) -> AgentNode:
        out = info.spec.output or (info.agent.output if info.agent is not None else None)
        return AgentNode(**self.prompted_fields(b, info), retries=out.retries if out is not None else 0,
                         answer=answer_of(info))

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        return 1

    def signature(self, node: NodeSpec) -> tuple | None:
        return ("agent", str(node.agent), node.prompt, node.system)

    def label(self, info: NodeInfo) -> str:
        return f"agent: {info.agent.name if info.agent else info.spec.agent}"


OP = AgentOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["agent"]``)."""

__all__ = ["OP", "AgentNode", "AgentOp"]
