"""A gateway whose replies come from a Python function — for tests and failure-injection studies.

:class:`ScriptedGateway` is the real :class:`~masbench.llm.Gateway` (cache, retries, call rows,
usage, budgets) with a :class:`ScriptBackend` plugged in through the public ``backend`` seam: the
script receives ``{"alias", "messages", "sample_index", "attempt", "metadata", "max_tokens",
"node", "tools", "tool_choice"}`` and returns the reply text (or a list of tool calls: a
function-calling reply), or raises to fail that attempt (a retryable error is retried
like any other). Token counts follow the simulator's prompt formula (so budget bounds are exact)
and ~4 characters per completion token, clipped at ``max_tokens``. Replies are flagged simulated.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable

from ..spec.model import ModelSpec
from .backends import Attempt, Reply
from .gateway import Gateway
from .sim import _prompt_tokens as prompt_tokens
from .toolcalls import normalize, tool_names

Script = Callable[[dict[str, Any]], "str | list[dict[str, Any]]"]
"""Receives ``{"alias", "messages", "sample_index", "attempt", "metadata", "max_tokens", "node",
"tools", "tool_choice"}`` (``tools``: the names offered, [] when none); returns the reply text, or
a list of tool calls in the OpenAI shape (a function-calling reply: text "", finish reason
``tool_calls``; a missing id becomes ``call_{i}``)."""


class ScriptBackend:
    """Answers every attempt with ``script(info)``; keeps every request it saw in ``requests``."""

    def __init__(self, script: Script):
        self.script = script
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, a: Attempt) -> Reply:
        info = {"alias": a.alias, "messages": a.messages, "sample_index": a.sample_index, "attempt": a.attempt,
                "metadata": a.metadata, "max_tokens": a.req.get("max_tokens"), "node": a.tags.get("node"),
                "tools": tool_names(a.req.get("tools")), "tool_choice": a.req.get("tool_choice")}
        self.requests.append(info)
        out = self.script(info)
        calls = None if isinstance(out, str) else normalize(out)
        text = out if isinstance(out, str) else ""
        pt = prompt_tokens(a.messages)
        ct = max(1, math.ceil(len(text or json.dumps(calls)) / 4))
        mt = a.req.get("max_tokens")
        finish = "stop" if calls is None else "tool_calls"
        if mt is not None and ct > mt:
            ct, finish = mt, "length"
        r = Reply(text, pt, ct, 0, finish, True)
        r.tool_calls = calls
        return r


class ScriptedGateway(Gateway):
    """A :class:`Gateway` answered by a script (see the module docstring). Default model: a priced
    ``sim/perfect`` alias ``default`` ($1 in / $2 out per million tokens)."""

    def __init__(self, script: Script, models: dict[str, ModelSpec] | None = None, **kw: Any):
        kw.setdefault("retry_base_s", 0.0001)
        kw.setdefault("retry_max_s", 0.001)
        self.script_backend = ScriptBackend(script)
        super().__init__(models or {"default": ModelSpec(id="sim/perfect", input_usd_per_mtok=1.0,
                                                         output_usd_per_mtok=2.0)},
                         backend=self.script_backend, **kw)

    @property
    def script(self) -> Script:
        return self.script_backend.script

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every attempt the script answered, in order."""
        return self.script_backend.requests


__all__ = ["Script", "ScriptBackend", "ScriptedGateway"]
