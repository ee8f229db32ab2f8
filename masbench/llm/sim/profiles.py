"""Built-in simulator profiles (``sim/<name>``), the ``sim/p<percent>`` shorthand, and two
presets with the error model on: ``sim/frontier`` and ``sim/7b``. All of them are SIMULATED.

The presets mimic published behaviour *qualitatively* (shapes, not any one model's numbers):

``frontier`` — a frontier API model on grade-school math (GSM8K-class, ~90% with CoT). Most tasks
are solved almost always and a hard tail almost never (wide difficulty spread), and its errors on
a task concentrate on one wrong answer, so self-consistency gains only a few points and saturates
early (Wang et al. 2023). Debaters keep right answers and conform to a shown consensus more often
than they fix it — debate reaches unanimity at once on most tasks (the Illusion paper); verifiers
and critics rubber-stamp most wrong drafts (Huang et al. 2024, "LLMs cannot self-correct
reasoning yet").

``7b`` — a 7B open model with CoT on the same tasks (~50%). Its errors are more diverse (a higher
Dirichlet concentration), so maj@k climbs for longer; it agrees less with the frontier model on
which tasks are hard (``own`` deviation) and shares fewer of its wrong answers; it flips right
answers more often when it revises or judges, and rubber-stamps more.

Both keep the default completion lengths (120 ± 30 tokens), which stay inside every bundled
agent's ``max_tokens`` (a truncated reply has no answer). Both live in world 0, so their task
difficulties are correlated (the hard tasks of one are mostly hard for the other).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...spec.model import SimFaults, SimProfile, TokenDist
from ...spec.sim import SimDifficulty, SimErrors, SimReaction


def _reactions(**roles: tuple[float, float, float]) -> dict[str, SimReaction]:
    return {role.replace("_", "-"): SimReaction(keep_right=k, fix_wrong=f, adopt_wrong=a)
            for role, (k, f, a) in roles.items()}


FRONTIER = SimProfile(
    accuracy={"default": 0.9},
    difficulty=SimDifficulty(spread=2.5, own=0.5, world=0),
    errors=SimErrors(distractors=4, concentration=0.3, overlap=0.6),
    reactions=_reactions(default=(0.97, 0.3, 0.5), debater=(0.97, 0.3, 0.6), final_decider=(0.98, 0.3, 0.6),
                         critic=(0.93, 0.2, 0.7), verifier=(0.93, 0.2, 0.7), refiner=(0.95, 0.25, 0.6),
                         selector=(0.95, 0.3, 0.6)),
)
"""SIMULATED frontier-model preset (see the module docstring)."""

SEVEN_B = SimProfile(
    accuracy={"default": 0.5},
    difficulty=SimDifficulty(spread=2.0, own=1.2, world=0),
    errors=SimErrors(distractors=6, concentration=1.0, overlap=0.3),
    reactions=_reactions(default=(0.85, 0.15, 0.5), debater=(0.85, 0.15, 0.55), final_decider=(0.9, 0.15, 0.55),
                         critic=(0.8, 0.1, 0.75), verifier=(0.8, 0.1, 0.75), refiner=(0.8, 0.15, 0.6),
                         selector=(0.85, 0.15, 0.55)),
)
"""SIMULATED 7B-model preset (see the module docstring)."""

BUILTIN_PROFILES: dict[str, SimProfile] = {
    "perfect": SimProfile(accuracy={"default": 1.0}),
    "strong": SimProfile(accuracy={"default": 0.85}, completion_tokens=TokenDist(mean=220, sd=60)),
    "medium": SimProfile(accuracy={"default": 0.6}),
    "weak": SimProfile(accuracy={"default": 0.3}, completion_tokens=TokenDist(mean=90, sd=25)),
    "coin": SimProfile(accuracy={"default": 0.5}),
    "wrong": SimProfile(accuracy={"default": 0.0}),
    "flaky": SimProfile(accuracy={"default": 0.6}, faults=SimFaults(rate=0.3)),
    "frontier": FRONTIER,
    "7b": SEVEN_B,
}
"""Profiles usable as a bare ``sim/<name>`` id."""


@lru_cache(maxsize=128)
def _percent(pct: int) -> SimProfile:
    return SimProfile(accuracy={"default": pct / 100})


def profile_for(model_id: str, explicit: SimProfile | None) -> SimProfile:
    """The profile of ``sim/<name>``: the model's own ``sim`` block, else a built-in, else a
    ``sim/p<percent>`` shorthand (``sim/p70`` → 70% correct)."""
    if explicit is not None:
        return explicit
    name = model_id.split("/", 1)[1] if "/" in model_id else model_id
    if name in BUILTIN_PROFILES:
        return BUILTIN_PROFILES[name]
    m = re.fullmatch(r"p(\d{1,3})", name)
    if m and int(m.group(1)) <= 100:
        return _percent(int(m.group(1)))
    raise ValueError(f"unknown simulator profile {name!r}: use one of {sorted(BUILTIN_PROFILES)}, "
                     "sim/p<percent>, or give the model a `sim:` block")


__all__ = ["BUILTIN_PROFILES", "FRONTIER", "SEVEN_B", "profile_for"]
