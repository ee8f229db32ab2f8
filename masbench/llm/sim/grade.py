"""The simulator as a judge scorer (request mode ``grade``): a verdict on a reply whose truth the
caller knows (its rule-checked verdict) or does not, with the profile's false pass / false fail
rates (:class:`~masbench.spec.sim.SimGrading`).

Metadata: ``truth`` (True, False or None), ``scale`` (``pass-fail``, ``graded``, ``pairwise``),
``position`` (``pairwise``: where the judged reply stands, ``A`` or ``B``). The reply is the text a
real judge would end with: "Verdict: PASS/FAIL", "Score: N" out of 10, or "Winner: A/B".
"""

from __future__ import annotations

import random
from typing import Any

from ...spec.model import SimProfile
from ...spec.sim import SimGrading
from .latent import skill_accuracy


def grading_of(profile: SimProfile) -> SimGrading:
    """The profile's grading block, else one whose two error rates are 1 − accuracy[judge]."""
    if profile.grading is not None:
        return profile.grading
    wrong = 1.0 - skill_accuracy(profile, ["judge"])
    return SimGrading(false_pass=wrong, false_fail=wrong)


def p_pass(g: SimGrading, truth: bool | None) -> float:
    """P(one sample passes the reply) given its truth."""
    if truth is None:
        return g.unknown_pass
    return 1.0 - g.false_fail if truth else g.false_pass


def grade_text(profile: SimProfile, meta: dict[str, Any], rng: random.Random) -> str:
    """One judge sample's reply."""
    g = grading_of(profile)
    truth = meta.get("truth")
    passed = rng.random() < p_pass(g, None if truth is None else bool(truth))
    scale = meta.get("scale", "pass-fail")
    if scale == "graded":
        centre = 0.8 if passed else 0.2
        score = min(1.0, max(0.0, centre + rng.uniform(-g.spread, g.spread)))
        return f"The reply was checked against the rubric.\nScore: {10 * score:.1f}"
    if scale == "pairwise":
        mine = str(meta.get("position", "A"))
        other = "B" if mine == "A" else "A"
        return f"Both replies were compared against the rubric.\nWinner: {mine if passed else other}"
    return f"The reply was checked against the rubric.\nVerdict: {'PASS' if passed else 'FAIL'}"


__all__ = ["grade_text", "grading_of", "p_pass"]
