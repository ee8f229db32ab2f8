"""A model call under a :class:`~masbench.budget.BudgetMeter`: reserve the worst case (a prompt-token
bound plus ``max_tokens``, in the tokens the meter's basis counts), call through the gateway, settle
the call's :class:`~masbench.charge.Charge` (its *counted* usage: reported, or — when the provider
returned no usage — its worst case, never 0; see :mod:`masbench.llm.result`). The one
implementation behind runtime node calls and designer search calls."""

from __future__ import annotations

from typing import Any

from ..budget import BudgetMeter
from .gateway import Gateway
from .result import CallResult


async def metered_call(gateway: Gateway, meter: BudgetMeter, model: str, messages: list[dict[str, Any]], *,
                       max_tokens: int, temperature: float | None, sample_index: int, tags: dict[str, Any],
                       metadata: dict[str, Any] | None = None, where: str = "",
                       search: bool = False, params: dict[str, Any] | None = None) -> CallResult | None:
    """One budget-checked call. None (and the meter is exhausted) if its worst case might not fit.
    ``params``: extra request parameters (e.g. ``stop``, or ``tools`` / ``tool_choice`` for
    function calling) passed to the gateway as they are; the worst case reserved counts the
    ``tools`` schemas as prompt tokens (providers bill them so), so every step is counted before
    it is taken."""
    if not meter.limited:
        res = await gateway.complete(model, messages, sample_index=sample_index, temperature=temperature,
                                     max_tokens=max_tokens, tags=tags, metadata=metadata, params=params)
        meter.add(res.charge, search=search)
        return res
    bound = gateway.prompt_token_bound(model, messages, (params or {}).get("tools"))
    worst = meter.worst_tokens(bound, max_tokens)
    worst_usd = gateway.prices(model).cost(bound, max_tokens) if meter.needs_usd else 0.0
    if not meter.reserve(worst, worst_usd, where):
        return None
    try:
        res = await gateway.complete(model, messages, sample_index=sample_index, temperature=temperature,
                                     max_tokens=max_tokens, tags=tags, metadata=metadata, params=params)
    except BaseException:
        meter.release(worst, worst_usd)
        raise
    meter.settle(worst, worst_usd, res.charge, search=search)
    return res


__all__ = ["metered_call"]
