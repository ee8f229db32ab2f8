"""A loop's ``until`` condition, judged on the value of the body node it names."""

from __future__ import annotations

from ..plan import Plan
from ..scope import Scope
from ..values import OK, Val, truthy


def check_until(plan: Plan, sc: Scope, val: Val) -> None:
    """Stop the plan's loop (``sc.stop[loop] = "until"``) if its condition holds on ``val``."""
    u = plan.until
    if u is None or val.status != OK:
        return
    if u.word is not None:
        rx = plan.until_rx
        assert rx is not None  # the loop op compiles it whenever the condition has a word
        hit = all(rx.search(m.text or "") for m in val.members())
    elif u.field is not None:
        if u.field == "answer":
            hit = all(bool(m.answers) for m in val.members())
        elif u.field == "text":
            hit = all(bool(m.text) for m in val.members())
        else:
            hit = all(isinstance(m.data, dict) and truthy(m.data.get(u.field)) for m in val.members())
    else:
        hit = all(truthy(m.data) if m.data is not None else bool(m.text) for m in val.members())
    if u.negate:
        hit = not hit
    if hit:
        assert plan.loop is not None  # an until node is in a loop body
        sc.stop[plan.loop] = "until"
