"""What the ops that call an agent's model share (:mod:`.agent`, :mod:`.select`): the agent named
by one key, its prompt and system templates (the node's ``prompt``/``system`` override them), a
structured output and its JSON hint."""

from __future__ import annotations

from ...spec.agent import AgentSpec
from .. import links
from ..info import Checking, NodeInfo
from ..plan import Plan
from .base import Binding, Op


class PromptedOp(Op):
    """An op whose node calls its agent's model with the agent's (or the node's) templates."""

    agent_key: str = "agent"
    """The node key that names the agent."""
    prompted = True

    def check(self, an: Checking, info: NodeInfo) -> None:
        ref = getattr(info.spec, self.agent_key)
        if ref is None:
            an.at(info, (), f"a {info.kind} node needs `{self.agent_key}:` naming its agent")
            return
        info.agent = links.resolve_agent(an, info, ref, (self.agent_key,))

    def templates(self, info: NodeInfo) -> list[tuple[tuple, str | None]]:
        a: AgentSpec | None = info.agent
        out: list[tuple[tuple, str | None]] = []
        if info.spec.prompt is not None:
            out.append((("prompt",), info.spec.prompt))
        elif a is not None:
            out.append(((self.agent_key,), a.prompt))
        if info.spec.system is not None:
            out.append((("system",), info.spec.system))
        elif a is not None:
            out.append(((self.agent_key,), a.system))
        return out

    def compile_templates(self, b: Binding, p: Plan) -> set[str]:
        spec = p.info.spec
        a = p.agent
        assert a is not None  # the check resolved it (the design compiles only without problems)
        text = spec.prompt if spec.prompt is not None else a.prompt
        p.prompt = b.compile(p, text)
        referenced = set(p.prompt.names)
        system = spec.system if spec.system is not None else a.system
        if system:
            p.system = b.compile(p, system)
            referenced |= p.system.names
        if p.schema is not None and "json" not in text.lower():
            p.json_hint = f"\n\nReply with only a JSON object with these fields: {p.fields_desc}."
        return referenced


__all__ = ["PromptedOp"]
