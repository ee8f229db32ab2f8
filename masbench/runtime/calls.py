"""One model call of a node: route the model, call it under the run's budget meter
(:func:`masbench.llm.metered_call`: reserve the worst case, call, settle), and tally its usage in
the node's :class:`~masbench.runtime.scope.Stats` and in every enclosing design run — the call's
*counted* usage, the number the meter settled (see :mod:`masbench.llm.result`), so a usage-missing
call counts its worst case in the node, the result row and the meter alike."""

from __future__ import annotations

import inspect
from typing import Any

from ..llm.metered import metered_call
from ..llm.result import CallResult
from .plan import Plan
from .scope import ROUND_STRIDE, Scope, Stats


class BudgetRefused(Exception):
    """A call was not made: its worst case might exceed what is left of the budget."""


async def call_model(plan: Plan, sc: Scope, messages: list[dict[str, Any]], meta: dict[str, Any], idx: int,
                     st: Stats, params: dict[str, Any] | None = None) -> CallResult:
    """One budget-checked model call. Raises :class:`BudgetRefused` if it does not fit. ``params``:
    request parameters besides the agent's stop sequences (e.g. ``tools``; a ``stop`` here wins)."""
    sh = sc.sh
    model = plan.model
    if model is None:  # routed agent
        model = "default"
        if sh.route is not None:
            r = sh.route(plan.agent, messages)
            model = await r if inspect.isawaitable(r) else r
    where = sc.prefix + plan.key
    tags = {**sh.tags, "node": where, "agent": plan.agent_name}
    res = await metered_call(sh.gateway, sh.meter, model, messages, max_tokens=plan.max_tokens,
                             temperature=plan.temperature, sample_index=idx, tags=tags, metadata=meta, where=where,
                             params=_request(plan, params))
    if res is None:
        raise BudgetRefused()
    st.add(res)
    sc.charge(res.prompt_tokens, res.completion_tokens, res.cost_usd)
    if res.simulated:
        sh.simulated = True
    return res


def _request(plan: Plan, params: dict[str, Any] | None) -> dict[str, Any] | None:
    """The request parameters of a call: the agent's stop sequences, then the caller's."""
    if not params:
        return {"stop": plan.stop} if plan.stop else None
    return {"stop": plan.stop, **params} if plan.stop else dict(params)


def sample_index(plan: Plan, sc: Scope, i: int) -> int:
    """The sample index of a call: distinct per seed, loop round and branch."""
    if plan.loop is not None:
        return sc.seed_base + sc.rounds.get(plan.loop, 0) * ROUND_STRIDE + i
    return sc.seed_base + i


class ModelCalls:
    """What an op's run body is given to reach its model (:class:`masbench.runtime.ops.base.Calls`)."""

    async def model(self, plan: Plan, sc: Scope, messages: list[dict[str, Any]], meta: dict[str, Any], idx: int,
                    st: Stats, params: dict[str, Any] | None = None) -> CallResult:
        """:func:`call_model`."""
        return await call_model(plan, sc, messages, meta, idx, st, params)

    def index(self, plan: Plan, sc: Scope, i: int) -> int:
        """:func:`sample_index`."""
        return sample_index(plan, sc, i)


CALLS = ModelCalls()
"""The one :class:`ModelCalls` (:func:`masbench.runtime.node.run_node` hands it to every op)."""

__all__ = ["BudgetRefused", "CALLS", "ModelCalls", "call_model", "sample_index"]
