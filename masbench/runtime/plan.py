"""A :class:`Plan`: everything one node needs at run time, resolved from the checker's
:class:`~masbench.runtime.info.NodeInfo` at compile time (its getters are bound later by
:mod:`.bind`)."""

from __future__ import annotations

import re
from collections.abc import Awaitable
from typing import Any, Callable

from .info import NodeInfo, Until
from .template import Template
from .types import DesignResult

Getter = Callable[[Any], Any]
"""Reads something from an :class:`~masbench.runtime.scope.Env` (a value, a text, a python argument)."""


class Plan:
    """Everything one node needs at run time."""

    def __init__(self, info: NodeInfo, op: Any):
        spec = info.spec
        a = info.agent
        self.info = info
        self.name = info.name
        self.key = info.key
        self.kind = info.kind
        self.op = op
        """The node's op (:class:`~masbench.runtime.ops.base.Op`): its run body and bind step."""
        self.fan = info.fan
        self.loop = info.loop
        self.order = info.order
        self.row_op = info.fan or info.kind
        """What the node row's ``op`` column says: the fan-out (``repeat``/``map``), else the kind."""
        self.agent = a
        self.agent_name = self.op.actor(info)
        self.model: str | None = a.model if a is not None and isinstance(a.model, str) else None
        """The model alias (None: a routed agent)."""
        self.max_tokens = spec.max_tokens or (a.max_tokens if a is not None else 0)
        self.stop: list[str] = list(a.stop) if a is not None else []
        """The agent's stop sequences (empty: none sent)."""
        self.temperature = spec.temperature if spec.temperature is not None else (a.temperature if a else None)
        self.schema = info.schema
        out = spec.output or (a.output if a is not None else None)
        self.retries = out.retries if out is not None else 0
        self.fields_desc = ", ".join(f"{k} ({t})" for k, t in (self.schema or {}).items())
        self.json_hint = ""
        self.skills = list(a.skills) if a is not None else []
        self.judge = bool(a is not None and a.judge)
        self.how: str | None = None
        """How the answer is extracted (None: this node has no answer of its own)."""
        self.field: str | None = None
        if a is not None and self.op.extracts:
            ans = a.answer
            if self.schema is not None:
                fld = ans.field or next((f for f in ("answer", "final", "result") if f in self.schema), None)
                if fld is not None:
                    self.how, self.field = "json", fld
            else:
                self.how, self.field = ans.extract, ans.field
        self.prompt: Template | None = None
        self.system: Template | None = None
        self.extra_inputs: list[tuple[str, Getter]] = []
        """Labelled ``from`` inputs appended after the prompt (those it does not mention)."""
        self.input_texts: list[tuple[str, Getter]] = []
        self.input_vals: list[tuple[str, Getter]] = []
        self.py_args: list[Getter] = []
        self.pyfn: Callable[..., Any] | None = None
        """A ``python:`` node's function (bound by its op)."""
        self.kwargs: dict[str, Any] = {}
        """The node's ``params`` with design params filled in, for ops that take them (a python
        function's keyword arguments, a sub-design's params, a registered op's settings)."""
        self.run_sub: Callable[[Any], Awaitable[DesignResult]] | None = None
        """A ``design:`` node's sub-design runner (``CompiledDesign.run_scope`` of the sub-design)."""
        self.subs: dict[str, Callable[[Any], Awaitable[DesignResult]]] = {}
        """A ``route`` node's candidate sub-designs' runners, by design name (one runs per task)."""
        self.until: Until | None = None
        """The loop's stop condition, on the body node it reads (bound by the loop op)."""
        self.until_rx: re.Pattern[str] | None = None
        """The stop word's pattern, when the condition is a word."""
        self.loop_cur: Getter | None = None
        self.items: Callable[[dict, Any], Any] | None = None
        """A fan-out's items, from the state and the scope."""


__all__ = ["Getter", "Plan"]
