"""One cell of a program design, as the metering endpoint sees it: an OpenAI Chat Completions
request becomes one budgeted gateway call of that cell (:func:`~masbench.llm.metered.metered_call`:
the worst case reserved first), attributed to an agent, tallied per agent (its :class:`~masbench.charge.Charge` added to the agent's
:class:`AgentTally`).

A request is refused — never sent — with a :class:`Refusal` (an HTTP status and an OpenAI-shaped
error the SDKs surface as non-retryable) when its model is not one of the program's aliases, when
it is malformed, when its agent is not one the program declared, or when its worst case cannot
fit what is left of the cell's budget (from then on every request is refused: the meter is
exhausted, as for a YAML design).

Seeds: a request's ``seed`` is its sample index (what the gateway keys its cache and the simulator
its draws by, and what litellm sends as ``seed``); a request without one gets the cell's seed base
plus the number of identical requests (model, messages, parameters) the cell sent before it — the
same in every rerun of the cell however its calls interleave, so a program reproduces, and a
resumed run is served from the response cache."""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..budget import BudgetMeter
from ..charge import Tally
from .gateway import Gateway
from .metered import metered_call
from .result import CallResult

PASSED_PARAMS = ("top_p", "stop", "tools", "tool_choice", "response_format", "presence_penalty",
                 "frequency_penalty", "parallel_tool_calls", "logit_bias", "logprobs", "top_logprobs")
"""Request parameters handed to the gateway as they are (besides ``temperature``, ``max_tokens``
and ``seed``, which it takes apart). Everything else a request carries (``user``, ``metadata``,
``store``, ``stream_options``) is read or ignored, never forwarded."""


class Refusal(Exception):
    """A request the endpoint will not make: ``status`` and an OpenAI-style error ``code``."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(slots=True)
class AgentTally(Tally):
    """What one agent of a program spent in one cell (its ``nodes`` row): the tally of its calls'
    charges (each call's :class:`~masbench.charge.Charge`, added once), and what a charge does not
    hold."""

    latency_s: float = 0.0
    errors: int = 0
    """Calls that failed after the gateway's retries (status ``error``; a usage-missing call is
    counted in ``failed``, not here)."""
    refused: int = 0
    """Requests refused for the budget (never sent)."""
    models: list[str] = field(default_factory=list)
    """Every model id called, in first-call order."""
    t_start: float | None = None
    t_end: float | None = None
    last_error: str | None = None


class ProgramCell:
    """A cell's access to models through the endpoint: its gateway, budget meter and run tags."""

    def __init__(self, gateway: Gateway, meter: BudgetMeter, *, tags: dict[str, Any], aliases: list[str],
                 agents: list[str], default_agent: str, max_tokens: int, seed_base: int,
                 sim: dict[str, Any] | None = None):
        """``tags``: the cell's run columns (run_id, design, task_id, seed, purpose); ``aliases``:
        the models it may name; ``agents``: the agent names it may be attributed to (empty: any);
        ``sim``: what a simulated model is told about the task (gold, skills, task id)."""
        self.gateway = gateway
        self.meter = meter
        self.tags = tags
        self.aliases = list(aliases)
        self.agents = list(agents)
        self.default_agent = default_agent
        self.max_tokens = max_tokens
        self.seed_base = seed_base
        self.sim = dict(sim or {})
        self.context: contextvars.Context | None = None
        """The context the cell's calls run in (set by its runner inside its workflow span, so each
        call's chat span is a child of it); None: the request handler's own."""
        self.by_agent: dict[str, AgentTally] = {}
        self.simulated = False
        self._seen: Counter[str] = Counter()
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    # ----- attribution -------------------------------------------------------------------------
    def agent_of(self, named: str | None, user: Any) -> str:
        """The agent a request is attributed to: the one it names (header or per-agent token),
        else its ``user`` field when that is one of the program's agents (or any word when the
        program declared none), else the default agent. A named agent the program did not declare
        is refused."""
        if named:
            if self.agents and named not in self.agents:
                raise Refusal(400, "unknown_agent", f"agent {named!r} is not one of this program's agents "
                                                    f"({', '.join(self.agents)})")
            return named
        if isinstance(user, str) and user and (user in self.agents or (not self.agents and user.isidentifier())):
            return user
        return self.default_agent

    def tally(self, agent: str) -> AgentTally:
        t = self.by_agent.get(agent)
        if t is None:
            t = self.by_agent[agent] = AgentTally()
        return t

    # ----- the call ----------------------------------------------------------------------------
    async def complete(self, body: dict[str, Any], agent: str) -> CallResult:
        """Make one request's gateway call. Raises :class:`Refusal` for a request not made."""
        model = body.get("model")
        if model not in self.aliases:
            raise Refusal(404, "model_not_found", f"model {model!r} is not one this program may call; "
                                                  f"use one of: {', '.join(self.aliases)}")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
            raise Refusal(400, "invalid_request_error", "messages must be a non-empty list of {role, content} objects")
        n = body.get("n")
        if n not in (None, 1):
            raise Refusal(400, "invalid_request_error", "n must be 1 (send one request per sample: each is metered)")
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or self.max_tokens
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise Refusal(400, "invalid_request_error", f"max_tokens must be a positive integer, got {max_tokens!r}")
        temperature = body.get("temperature")
        if temperature is not None and not isinstance(temperature, (int, float)):
            raise Refusal(400, "invalid_request_error", "temperature must be a number")
        params = {k: body[k] for k in PASSED_PARAMS if body.get(k) is not None} or None
        seed = body.get("seed")
        if seed is not None and not isinstance(seed, int):
            raise Refusal(400, "invalid_request_error", "seed must be an integer")
        idx = seed if seed is not None else self._derived_seed(model, messages, params, temperature, max_tokens)
        t = self.tally(agent)
        now = time.time()
        t.t_start = now if t.t_start is None else t.t_start
        self._inflight += 1
        self._idle.clear()
        try:
            call = metered_call(self.gateway, self.meter, model, messages, max_tokens=max_tokens,
                                temperature=temperature, sample_index=idx,
                                tags={**self.tags, "node": agent, "agent": agent},
                                metadata={"sim": {**self.sim, "agent": agent, "mode": "answer"}},
                                where=agent, params=params)
            res = await (call if self.context is None else asyncio.create_task(call, context=self.context.copy()))
        finally:
            self._inflight -= 1
            if not self._inflight:
                self._idle.set()
        t.t_end = time.time()
        if res is None:
            t.refused += 1
            raise Refusal(403, "budget_exhausted", self._budget_message())
        t.add(res.charge)
        t.latency_s += res.latency_s
        if res.model not in t.models:
            t.models.append(res.model)
        self.simulated |= res.simulated
        if res.status == "error":
            t.errors += 1
            t.last_error = res.error
            raise Refusal(502, "model_error", f"the model call failed after the gateway's retries: {res.error}")
        return res

    def _derived_seed(self, model: str, messages: list[Any], params: dict[str, Any] | None,
                      temperature: Any, max_tokens: int) -> int:
        blob = json.dumps([model, messages, params, temperature, max_tokens], sort_keys=True, default=str)
        key = hashlib.blake2b(blob.encode(), digest_size=12).hexdigest()
        n = self._seen[key]
        self._seen[key] = n + 1
        return self.seed_base + n

    def _budget_message(self) -> str:
        m = self.meter
        caps = [f"{m.max_tokens} tokens ({m.basis})" if m.max_tokens is not None else "",
                f"${m.max_usd}" if m.max_usd is not None else "",
                f"{m.max_calls} calls" if m.max_calls is not None else ""]
        cap = (m.refused[-1].get("cap") if m.refused else None) or "budget"
        return (f"masbench budget exhausted: this task's budget ({', '.join(c for c in caps if c)}) cannot fit this "
                f"request's worst case (prompt + max_tokens); spent {m.tokens} tokens, ${m.usd:.6f}, {m.calls} calls "
                f"(cap hit: {cap}). No further request of this task will be made.")

    async def drain(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) for the calls in flight to finish; True if none is left."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    @property
    def totals(self) -> tuple[int, int, float, int]:
        """(prompt tokens, completion tokens, USD, calls) over every agent."""
        t = Tally()
        for a in self.by_agent.values():
            t.merge(a)
        return t.prompt, t.completion, t.cost, t.calls


__all__ = ["AgentTally", "PASSED_PARAMS", "ProgramCell", "Refusal"]
