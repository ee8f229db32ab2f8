"""One model call of a node: route the model, call it under the run's budget meter
(:func:`masbench.llm.metered_call`: reserve the worst case, call, settle the call's
:class:`~masbench.charge.Charge`), and add that same charge to the node's
:class:`~masbench.charge.Tally` (its design run counts it when the node ends:
:func:`masbench.runtime.steps.run_node`). A usage-missing call is charged its worst case (see
:mod:`masbench.llm.result`) in the meter, the node and the result row alike."""

from __future__ import annotations

import inspect
from typing import Any

from ..charge import Tally
from ..llm.metered import metered_call
from ..llm.result import CallResult
from .scope import ROUND_STRIDE, Caller, Scope


class BudgetRefused(Exception):
    """A call was not made: its worst case might exceed what is left of the budget."""


async def call_model(node: Caller, sc: Scope, messages: list[dict[str, Any]], meta: dict[str, Any], idx: int,
                     st: Tally, params: dict[str, Any] | None = None) -> CallResult:
    """One budget-checked model call. Raises :class:`BudgetRefused` if it does not fit. ``params``:
    request parameters besides the agent's stop sequences (e.g. ``tools``; a ``stop`` here wins)."""
    sh = sc.sh
    model = node.model
    if model is None:  # routed agent
        model = "default"
        if sh.route is not None:
            r = sh.route(node.agent, messages)
            model = await r if inspect.isawaitable(r) else r
    where = sc.prefix + node.key
    tags = {**sh.tags, "node": where, "agent": node.actor}
    res = await metered_call(sh.gateway, sh.meter, model, messages, max_tokens=node.max_tokens,
                             temperature=node.temperature, sample_index=idx, tags=tags, metadata=meta, where=where,
                             params=_request(node, params))
    if res is None:
        raise BudgetRefused()
    st.add(res.charge)
    if res.simulated:
        sh.simulated = True
    return res


def _request(node: Caller, params: dict[str, Any] | None) -> dict[str, Any] | None:
    """The request parameters of a call: the agent's stop sequences, then the caller's."""
    if not params:
        return {"stop": list(node.stop)} if node.stop else None
    return {"stop": list(node.stop), **params} if node.stop else dict(params)


def sample_index(node: Caller, sc: Scope, i: int) -> int:
    """The sample index of a call: distinct per seed, loop round and branch."""
    if node.loop is not None:
        return sc.seed_base + sc.rounds.get(node.loop, 0) * ROUND_STRIDE + i
    return sc.seed_base + i


class ModelCalls:
    """What an op's run body is given to reach its model (:class:`masbench.runtime.ops.base.Calls`)."""

    async def model(self, node: Caller, sc: Scope, messages: list[dict[str, Any]], meta: dict[str, Any], idx: int,
                    st: Tally, params: dict[str, Any] | None = None) -> CallResult:
        """:func:`call_model`."""
        return await call_model(node, sc, messages, meta, idx, st, params)

    def index(self, node: Caller, sc: Scope, i: int) -> int:
        """:func:`sample_index`."""
        return sample_index(node, sc, i)


CALLS = ModelCalls()
"""The one :class:`ModelCalls` (:func:`masbench.runtime.steps.run_node` hands it to every op)."""

__all__ = ["BudgetRefused", "CALLS", "ModelCalls", "call_model", "sample_index"]
