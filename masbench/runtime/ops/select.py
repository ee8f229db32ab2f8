"""``select`` nodes: a selector agent picks one of the candidates (verifier / ScEnsemble); when it
gives no usable choice, the majority over the candidates stands in (and the node is degraded)."""

from __future__ import annotations

import re

from ..calls import call_model
from ..plan import Plan
from ..prompts import build_messages
from ..pyfuncs import majority_vote
from ..scope import Env, Scope, Stats
from ..values import OK, Val

_CHOICE = re.compile(r"choice\s*[:#]?\s*\**\s*(\d+)", re.I)


# TODO(lead): use masbench.text.parse_choice
def parse_choice(text: str, n: int) -> int | None:
    """The 0-based index of the candidate a reply picks among ``n``: ``Choice: N``, else the last
    standalone 1–3 digit number in 1..n; None if there is none."""
    m = _CHOICE.search(text)
    if m:
        c = int(m.group(1)) - 1
        return c if 0 <= c < n else None
    nums = [int(x) - 1 for x in re.findall(r"\b(\d{1,3})\b", text)]
    nums = [x for x in nums if 0 <= x < n]
    return nums[-1] if nums else None


async def select_body(plan: Plan, sc: Scope, env: Env, idx: int, st: Stats) -> Val:
    """Ask the selector; record the choice (or the fallback) under ``detail["selects"]``."""
    cands = [m for name, vg in plan.input_vals if name != "question" for v in [vg(env)] if v is not None
             for m in v.members() if m.present and m.status == OK]
    if not cands:
        return Val(status="empty", error="no candidates to select from")
    env.cands = cands
    messages = build_messages(plan, env)
    meta = {"sim": {"gold": sc.gold, "skills": sc.skills + plan.skills, "mode": "choice",
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
