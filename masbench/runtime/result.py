"""Assemble a run's :class:`~masbench.runtime.types.DesignResult`: the output's answer (a vote
over a fan-out output; the best upstream answer as a fallback), the status, usage and detail."""

from __future__ import annotations

from typing import Any

from ..charge import Tally
from .design_analysis import Analysis
from .pyfuncs import majority_vote
from .scope import Scope
from .types import DesignResult
from .values import OK, fmt_data, read, vtext

_DETAIL = ("branches", "votes", "loops", "selects", "parse_failures", "errors", "subs", "notes")
_DETAIL_NAME = {"subs": "subdesigns"}


def fallback(an: Analysis, final: dict, output: str, fan_keys: set[str]) -> tuple[str, str, tuple[str, ...]] | None:
    """Best answer so far: the nearest upstream node of the output that has an answer."""
    anc = an.graph.ancestors(output)
    for name in reversed(an.order):
        if name not in anc:
            continue
        v = read(final, name, name in fan_keys)
        if v is None:
            continue
        if v.items is None:
            if v.answers:
                return name, v.text, v.answers
            continue
        winner, _t, _tie = majority_vote([m.answers for m in v.items])
        if winner:
            pick = next(m for m in v.items if m.answers == winner)
            return name, pick.text, winner
    return None


def assemble(an: Analysis, sc: Scope, final: dict | None, output: str, fan_keys: set[str], wall: float,
             error: str | None, u: Tally) -> DesignResult:
    """The result of one run, from its final state (None if the run raised) and its usage ``u``."""
    meter = sc.sh.meter
    out_val = read(final, output, output in fan_keys) if final else None
    detail: dict[str, Any] = {"nodes": sc.status}
    for key in _DETAIL:
        value = getattr(sc, key)
        if value:
            detail[_DETAIL_NAME.get(key, key)] = value
    text = ""
    answers: tuple[str, ...] | None = None
    if out_val is not None:
        if out_val.items is not None:
            winner, tally, tie = sc.sh.vote([m.answers for m in out_val.items], "output")
            answers = winner
            text = vtext(out_val)
            if len(out_val.items) > 1:
                detail["output_vote"] = {"tally": {", ".join(k): c for k, c in tally.items()},
                                         "tie": [", ".join(t) for t in tie] or None}
        else:
            text = out_val.text or fmt_data(out_val.data)
            answers = out_val.answers
    if final is not None and (out_val is None or (not answers and out_val.status != OK)):
        fb = fallback(an, final, output, fan_keys)
        if fb is not None:
            detail["fallback"], text, answers = fb
    ans = list(answers or ())
    n = sc.n
    ans = (ans + [""] * n)[:n] if len(ans) != n else ans
    if meter.exhausted and meter.refused:
        status = "budget_exhausted"
    elif error is not None or not any(ans):
        status = "failed"
    elif sc.bad > 0 or "fallback" in detail:
        status = "degraded"
    else:
        status = "ok"
    if status == "failed" and error is None:
        error = out_val.error if out_val is not None and out_val.error else "no answer"
    if meter.limited:
        detail["budget"] = meter.summary()
    detail["simulated"] = sc.sh.simulated
    return DesignResult(text=text, answers=ans, status=status, prompt_tokens=u.prompt,
                        completion_tokens=u.completion, tokens=u.tokens, cost_usd=u.cost,
                        calls=u.calls, wall_s=wall, error=error, detail=detail)


__all__ = ["assemble", "fallback"]
