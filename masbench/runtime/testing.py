"""Gateways for tests and failure-injection experiments.

:class:`ScriptedGateway` is a real :class:`~masbench.llm.Gateway` (cache, retries, call rows,
usage) whose model replies come from a Python function instead of a model: return a string to
answer, or raise an exception to fail that attempt (a retryable error is retried like any other).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ..llm.gateway import CallResult, Gateway
from ..llm.sim import _prompt_tokens
from ..spec.model import ModelSpec

Script = Callable[[dict[str, Any]], str]
"""Receives ``{"alias", "messages", "sample_index", "attempt", "metadata", "max_tokens", "node"}``."""


class ScriptedGateway(Gateway):
    """A gateway whose replies are scripted. Token counts follow the simulator's prompt formula
    (so budget bounds are exact) and ~4 characters per completion token, clipped at max_tokens."""

    def __init__(self, script: Script, models: dict[str, ModelSpec] | None = None, **kw: Any):
        kw.setdefault("retry_base_s", 0.0001)
        kw.setdefault("retry_max_s", 0.001)
        super().__init__(models or {"default": ModelSpec(id="sim/perfect", input_usd_per_mtok=1.0,
                                                         output_usd_per_mtok=2.0)}, **kw)
        self.script = script
        self.requests: list[dict[str, Any]] = []

    async def complete(self, model: str, messages: list[dict[str, Any]], **kw: Any) -> CallResult:
        self._node = (kw.get("tags") or {}).get("node")
        return await super().complete(model, messages, **kw)

    async def _once(self, alias: str, spec: ModelSpec, messages: list[dict[str, Any]], req: dict[str, Any],
                    sample_index: int, attempt: int, metadata: dict[str, Any] | None, call_id: str) -> CallResult:
        info = {"alias": alias, "messages": messages, "sample_index": sample_index, "attempt": attempt,
                "metadata": metadata or {}, "max_tokens": req.get("max_tokens"), "node": self._node}
        self.requests.append(info)
        text = self.script(info)
        pt = _prompt_tokens(messages)
        ct = max(1, math.ceil(len(text) / 4))
        mt = req.get("max_tokens")
        finish = "stop"
        if mt is not None and ct > mt:
            ct, finish = mt, "length"
        cost = self._prices[alias].cost(pt, ct)
        return CallResult(text, pt, ct, 0, cost, 0.0, False, attempt, None, spec.id, alias, True, finish, call_id)
