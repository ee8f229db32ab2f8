"""``react`` nodes: a bounded ReAct loop of one tool-using agent (model step → tool calls →
observations → … → final answer), run by :class:`~.react_loop.ReactLoop`::

    search:
      kind: react
      agent: searcher                  # an agent with `tools:`
      params: {max_steps: 6, context_tokens: 4096, overflow: truncate_oldest, parallel_tools: 4}

Settings: :class:`masbench.spec.react.ReactParams`. ``repeat: k`` gives k independent loops (CoT-SC
over ReAct with a ``majority`` after it); ``map:`` runs one loop per item (a planner's searchers,
each with its own context). The check reports an agent without tools, tool names no registry
entry has (with the known ones) and bad params, each at its place in the YAML.

Tools are called natively (the OpenAI protocol's ``tools`` / ``tool_calls``) when the agent's
``tool_mode`` is ``native``, or ``auto`` and the model supports function calling (the gateway's
``supports_tools(model)`` when it has one, else the model's ``function_calling``, else its
backend's :meth:`~masbench.llm.ModelBackend.supports_tools`); otherwise through the text protocol
(:mod:`masbench.tools.protocol`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ...charge import Tally
from ...spec.agent import AgentSpec
from ...spec.design import NodeSpec
from ...spec.react import DEFAULT_CONTEXT_TOKENS, ReactParams
from ...tools import TOOLS, protocol, resolve
from ..info import VAL_FIELDS, Checking, NodeInfo
from ..scope import Env, Scope
from ..template import substitute_params
from ..values import Val
from .base import Binding, Calls, Weigher
from .prompted import Answer, PromptedNode, PromptedOp, answer_of
from .react_loop import Bound, ReactLoop

DATA_FIELDS = frozenset({"steps", "tool_calls", "docs_seen", "stop"})
"""The fields of a react node's value data (``{search.docs_seen}``)."""


def _params(raw: dict[str, Any], design_params: dict[str, Any]) -> dict[str, Any]:
    return {k: substitute_params(v, design_params) for k, v in raw.items()}


def react_params(node: NodeSpec, design_params: dict[str, Any] | None = None) -> ReactParams | None:
    """The node's settings (design params filled in), or None if they do not validate."""
    try:
        return ReactParams.model_validate(_params(node.params, design_params or {}))
    except (KeyError, ValidationError):
        return None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ReactNode(PromptedNode):
    """A bounded ReAct loop of the node's agent (one :class:`~.react_loop.ReactLoop` per execution)."""

    answer: Answer | None
    cfg: Bound
    """The node's settings, tools and tool schemas, resolved at compile time."""

    async def run(self, sc: Scope, env: Env, i: int | None, st: Tally, calls: Calls) -> Val:
        loop = ReactLoop(self, self.answer, self.cfg, sc, env, calls.index(self, sc, i or 0), st, calls,
                         self.native_tools(sc), self.messages(env))
        return await loop.run()

    def native_tools(self, sc: Scope) -> bool:
        """Whether this node's calls use function calling (see the module docstring)."""
        mode = self.agent.tool_mode
        if mode != "auto":
            return mode == "native"
        if self.model is None:  # a routed agent: the model is chosen per call
            return False
        gw = sc.sh.gateway
        ask = getattr(gw, "supports_tools", None)
        if callable(ask):
            return bool(ask(self.model))
        _, spec = gw.resolve(self.model)
        if spec.function_calling is not None:
            return spec.function_calling
        return gw.provider(spec).supports_tools(spec)


class ReactOp(PromptedOp):
    """A bounded ReAct loop of the node's agent; ``repeat``/``map`` fan it out."""

    keys = ("agent",)
    fans = frozenset({"repeat", "map"})
    extracts = True
    data_fields = True
    color = "#ffe8a3"
    shape = ('[["', '"]]')

    def check(self, an: Checking, info: NodeInfo) -> None:
        super().check(an, info)
        try:
            ReactParams.model_validate(_params(info.spec.params, an.params))
        except KeyError as exc:
            an.at(info, ("params",), f"unknown param {exc.args[0]!r} in the react settings")
        except ValidationError as exc:
            for err in exc.errors():
                loc = tuple(str(x) for x in err["loc"])
                an.at(info, ("params", *loc), f"react {'.'.join(loc) or 'params'}: {err['msg']}")
        a = info.agent
        if a is None:
            return
        where: tuple = ("agent", "tools") if isinstance(info.spec.agent, AgentSpec) else ("agent",)
        known = ", ".join(sorted(TOOLS.names()))
        if not a.tools:
            an.at(info, where, f"agent {a.name!r} has no tools: a react node needs an agent with `tools:` "
                               f"(registered: {known})")
        unknown = [t for t in a.tools if t not in TOOLS]
        if unknown:
            an.at(info, where, f"agent {a.name!r} names unknown tool{'s' if len(unknown) > 1 else ''} "
                               f"{', '.join(map(repr, unknown))} (registered: {known})")
        if info.spec.output is not None or a.output is not None:
            an.at(info, ("output",) if info.spec.output is not None else ("agent",),
                  "a react node's answer comes from its final reply: structured output does not apply")

    def ref_fields(self, info: NodeInfo) -> set[str] | None:
        return set(VAL_FIELDS) | DATA_FIELDS

    def compile(self, b: Binding, info: NodeInfo) -> ReactNode:
        a = info.agent
        assert a is not None  # checked
        params = ReactParams.model_validate(b.node_params(info))
        tools = resolve(list(a.tools))
        ctx = params.context_tokens or a.context_tokens or DEFAULT_CONTEXT_TOKENS
        cfg = Bound(params, tools, ctx, protocol.instructions(tools), [t.schema() for t in tools.values()])
        return ReactNode(**self.prompted_fields(b, info), answer=answer_of(info), cfg=cfg)

    def weight(self, node: NodeSpec, w: Weigher) -> int:
        p = react_params(node) or ReactParams()
        steps = w.param(node.params.get("max_steps", p.max_steps))
        steps = steps if isinstance(steps, int) else p.max_steps
        # worst case: every step, the final-answer call, and (summarize) one summary before each later call
        return steps + 1 + (steps if p.overflow == "summarize" else 0)

    def signature(self, node: NodeSpec) -> tuple | None:
        return None

    def label(self, info: NodeInfo) -> str:
        a = info.agent
        raw = info.spec.params.get("max_steps")
        # a design param (``{steps}``) is shown as written: the label is drawn without the design's params
        steps = raw if isinstance(raw, str) else (react_params(info.spec) or ReactParams()).max_steps
        tools = ", ".join(a.tools) if a is not None else ""
        return f"react: {a.name if a else info.spec.agent} ≤{steps} steps [{tools}]"


OP = ReactOp()
"""The registered instance (:data:`masbench.runtime.ops.OPS` ``["react"]``)."""

__all__ = ["DATA_FIELDS", "OP", "ReactNode", "ReactOp", "react_params"]
