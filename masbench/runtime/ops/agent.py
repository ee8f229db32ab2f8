"""``agent`` nodes: one model call (plus structured-output retries)."""

from __future__ import annotations

from ..calls import call_model
from ..plan import Plan
from ..prompts import build_messages, extract, sim_meta
from ..scope import Env, Scope, Stats
from ..structured import parse_structured
from ..values import Val


async def agent_body(plan: Plan, sc: Scope, env: Env, idx: int, st: Stats) -> Val:
    """Call the agent's model; parse and re-ask (up to ``retries``) when a schema is declared."""
    messages = build_messages(plan, env)
    meta = sim_meta(plan, sc, env)
    res = await call_model(plan, sc, messages, meta, idx, st)
    if res.error is not None:
        return Val(status="error", error=res.error)
    text = res.text
    data = None
    if plan.schema is not None:
        attempt = 0
        while True:
            data, err = parse_structured(text, plan.schema)
            if err is None:
                break
            sc.parse_failures.append({"node": sc.prefix + plan.key, "attempt": attempt, "error": err})
            if attempt >= plan.retries:
                return Val(text=text, status="parse_failed", error=f"structured output: {err} "
                                                                 f"(after {attempt + 1} attempts)")
            attempt += 1
            messages = messages + [
                {"role": "assistant", "content": text},
                {"role": "user", "content": f"Your reply could not be used: {err}. Reply again with only a JSON "
                                            f"object with the fields: {plan.fields_desc}."}]
            res = await call_model(plan, sc, messages, meta, idx, st)
            if res.error is not None:
                return Val(status="error", error=res.error)
            text = res.text
    return Val(text=text, answers=extract(plan, sc, text, data), data=data)
