"""``select`` nodes: a selector agent picks one of the candidates (verifier / ScEnsemble); when it
gives no usable choice, the majority over the candidates stands in (and the node is degraded)."""

from __future__ import annotations

from ...text import parse_choice
from ..calls import call_model
from ..plan import Plan
from ..prompts import build_messages, sim_task
from ..pyfuncs import majority_vote
from ..scope import Env, Scope, Stats
from ..values import OK, Val


async def select_body(plan: Plan, sc: Scope, env: Env, idx: int, st: Stats) -> Val:
    """Ask the selector; record the choice (or the fallback) under ``detail["selects"]``."""
    cands = [m for name, vg in plan.input_vals if name != "question" for v in [vg(env)] if v is not None
             for m in v.members() if m.present and m.status == OK]
    if not cands:
        return Val(status="empty", error="no candidates to select from")
    env.cands = cands
    messages = build_messages(plan, env)
    meta = {"sim": {"gold": sc.gold, "skills": sc.skills + plan.skills, "mode": "choice",
                    "task": sim_task(sc), "agent": plan.agent_name,
                    "candidates": [",".join(c.answers) if c.answers else c.text for c in cands]}}
    res = await call_model(plan, sc, messages, meta, idx, st)
    choice = parse_choice(res.text, len(cands)) if res.error is None else None
    sc.selects[sc.prefix + plan.key] = {"n": len(cands), "choice": None if choice is None else choice + 1,
                                        "fallback": choice is None}
    if choice is None:  # the selector failed or gave no usable choice: majority over the candidates
        winner, _t, _tie = majority_vote([c.answers for c in cands])
        pick = next((c for c in cands if c.answers == winner), cands[0])
        err = res.error or "no usable choice in the selector's reply; fell back to majority"
        return Val(text=pick.text, answers=pick.answers, data=pick.data, status="degraded", error=err)
    pick = cands[choice]
    return Val(text=pick.text, answers=pick.answers, data=pick.data)
