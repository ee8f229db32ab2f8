"""The exact probabilities behind every simulated draw: latent task difficulty and per-task answers.

A :class:`SimModel` is one ``sim/…`` model (id + profile). For a task id it gives

- :meth:`SimModel.p_correct` — P(a call is correct), item-response style when the profile has a
  ``difficulty`` block: σ(ability[skill] − spread·z_task − own·u_task), z and u standard normal,
  seeded by (world, task id) and (profile seed, model id, task id); otherwise the fixed per-skill
  accuracy (today's behaviour);
- :meth:`SimModel.wrong_weights` — the task's distribution over wrong answers 1..D (per-task
  Dirichlet mixtures with an ``errors`` block, else the profile's fixed ``distractor_weights``);
- :meth:`SimModel.answer_distribution` — the exact distribution of one call's answer.

The simulator draws from exactly these numbers, so studies and tests can compare what they
measure with what was configured. Everything here is SIMULATED.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable

from ...spec.model import SimProfile

if TYPE_CHECKING:
    import numpy as np

NUM = re.compile(r"^-?\d+(?:\.\d+)?$")
_CACHE_MAX = 200_000


@lru_cache(maxsize=1)
def _gauss_hermite() -> tuple[np.ndarray, np.ndarray]:
    """The 80-point Gauss–Hermite nodes and weights, the weights normalised so that E[f(Z)] for
    Z ~ N(0, 1) is Σ w·f(x). Deferred: start-up (numpy, ~0.1 s of imports, is for the error model's
    calibration; a fixed-probability profile never calls it)."""
    import numpy as np

    x, w = np.polynomial.hermite_e.hermegauss(80)
    return x, w / w.sum()


def seeded(*parts: Any) -> random.Random:
    """A ``random.Random`` seeded by a stable hash of ``parts`` (the same in every process)."""
    h = hashlib.blake2b(json.dumps(parts, sort_keys=True, default=str).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(h, "big"))


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _mean_p(theta: float, sd: float) -> float:
    """E[σ(θ − sd·Z)], Z ~ N(0, 1), by Gauss–Hermite quadrature."""
    import numpy as np  # loaded by _gauss_hermite

    x, w = _gauss_hermite()
    return float(np.dot(w, 1.0 / (1.0 + np.exp(-(theta - sd * x)))))


@lru_cache(maxsize=4096)
def calibrate(accuracy: float, sd: float) -> float:
    """The ability θ whose mean P(correct) over tasks is ``accuracy`` when task difficulty has
    standard deviation ``sd``: E[σ(θ − sd·Z)] = accuracy (±inf for accuracy 1 / 0)."""
    if accuracy >= 1.0:
        return math.inf
    if accuracy <= 0.0:
        return -math.inf
    if sd == 0.0:
        return math.log(accuracy / (1.0 - accuracy))
    lo, hi = -60.0, 60.0
    for _ in range(80):  # the mean is increasing in θ: bisection
        mid = (lo + hi) / 2
        if _mean_p(mid, sd) < accuracy:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def lookup(mapping: dict[str, float], skill: str) -> float | None:
    """A dotted skill's value, falling back to its parents (``arith.add`` → ``arith``); no default."""
    parts = skill.split(".")
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if key in mapping:
            return mapping[key]
    return None


def skill_accuracy(profile: SimProfile, skills: list[str]) -> float:
    """Mean accuracy over the call's skills; a dotted skill falls back to its parents, then default."""
    acc = profile.accuracy
    default = acc.get("default", 0.5)
    if not skills:
        return default
    vals = []
    for s in skills:
        v = lookup(acc, s)
        vals.append(default if v is None else v)
    return sum(vals) / len(vals)


def wrong_answer(gold: str, i: int) -> str:
    """Wrong answer number ``i`` (1-based) for a gold answer."""
    g = gold.strip()
    if NUM.match(g):
        v = Fraction(g) + i
        return str(int(v)) if v.denominator == 1 else str(float(v))
    return f"{g} (variant {i})" if g else f"wrong-{i}"


def _dirichlet(rng: random.Random, n: int, alpha: float) -> list[float]:
    g = [rng.gammavariate(alpha, 1.0) for _ in range(n)]
    s = sum(g)
    if s <= 0.0:  # every draw underflowed (tiny alpha): all mass on one answer
        j = rng.randrange(n)
        return [1.0 if i == j else 0.0 for i in range(n)]
    return [x / s for x in g]


def gold_key(gold: Iterable[str]) -> str:
    """How answers are compared: joined with commas, stripped, lower-cased."""
    return ",".join(gold).strip().lower()


class SimModel:
    """One simulated model's exact per-task behaviour. Cheap to build; caches per task."""

    __slots__ = ("model_id", "profile", "_theta", "_diff", "_wrong")

    def __init__(self, model_id: str, profile: SimProfile):
        self.model_id = model_id
        self.profile = profile
        self._theta: dict[str, float] = {}
        self._diff: dict[str, float] = {}
        self._wrong: dict[str, list[float]] = {}

    @property
    def fixed(self) -> bool:
        """No error-model blocks: today's fixed-probability simulator, draw for draw."""
        p = self.profile
        return p.difficulty is None and p.errors is None and not p.reactions

    # ----- difficulty -------------------------------------------------------------------------
    def ability(self, skill: str | None) -> float:
        """Logit ability for one skill (None: the default), explicit or calibrated from accuracy."""
        key = skill or "default"
        th = self._theta.get(key)
        if th is not None:
            return th
        d = self.profile.difficulty
        assert d is not None
        acc = self.profile.accuracy
        v = lookup(d.ability, skill) if skill and skill != "default" else None
        if v is None:
            a = lookup(acc, skill) if skill and skill != "default" else None
            if a is not None:
                v = calibrate(a, math.hypot(d.spread, d.own))
            elif "default" in d.ability:
                v = d.ability["default"]
            else:
                v = calibrate(acc.get("default", 0.5), math.hypot(d.spread, d.own))
        self._theta[key] = v
        return v

    def difficulty(self, task: str) -> float:
        """This model's logit difficulty of a task: spread·z_task (shared by the world) + own·u_task."""
        v = self._diff.get(task)
        if v is not None:
            return v
        d = self.profile.difficulty
        assert d is not None
        v = d.spread * seeded("difficulty", d.world, task).gauss(0.0, 1.0)
        if d.own > 0:
            v += d.own * seeded("own-difficulty", self.profile.seed, self.model_id, task).gauss(0.0, 1.0)
        if len(self._diff) > _CACHE_MAX:
            self._diff.clear()
        self._diff[task] = v
        return v

    def p_correct(self, task: str, skills: Iterable[str] = ()) -> float:
        """Exact P(one call on ``task`` is correct), before any reaction to shown answers. With
        several skills, the mean over them (as the fixed-probability simulator does)."""
        skills = list(skills)
        if self.profile.difficulty is None:
            return skill_accuracy(self.profile, skills)
        b = self.difficulty(str(task))
        vals = []
        for s in skills or [None]:
            th = self.ability(s)
            vals.append(sigmoid(th - b) if math.isfinite(th) else float(th > 0))
        return sum(vals) / len(vals)

    # ----- wrong answers ----------------------------------------------------------------------
    def wrong_weights(self, task: str) -> list[float]:
        """P(wrong answer i | the call is wrong), i = 1..D, for this model on this task."""
        w = self._wrong.get(task)
        if w is not None:
            return w
        e = self.profile.errors
        if e is None:
            raw = self.profile.distractor_weights or [1.0]
            s = sum(raw)
            w = [x / s for x in raw]
        else:
            world = self.profile.difficulty.world if self.profile.difficulty is not None else 0
            shared = _dirichlet(seeded("wrong", world, task, e.distractors), e.distractors, e.concentration)
            own = _dirichlet(seeded("own-wrong", self.profile.seed, self.model_id, task, e.distractors),
                             e.distractors, e.concentration)
            w = [e.overlap * a + (1.0 - e.overlap) * b for a, b in zip(shared, own)]
        if len(self._wrong) > _CACHE_MAX:
            self._wrong.clear()
        self._wrong[task] = w
        return w

    def wrong_outcomes(self, task: str, gold: list[str]) -> list[tuple[tuple[str, ...], float]]:
        """Every wrong answer a call can give on the task, with P(answer | wrong). With several gold
        answers, one position (uniformly) is replaced by its wrong answer i."""
        if not gold:
            return [(("unknown",), 1.0)]
        w = self.wrong_weights(str(task))
        n = len(gold)
        out: dict[tuple[str, ...], float] = {}
        for pos in range(n):
            for i, q in enumerate(w, 1):
                a = list(gold)
                a[pos] = wrong_answer(a[pos], i)
                t = tuple(a)
                out[t] = out.get(t, 0.0) + q / n
        return list(out.items())

    def answer_distribution(self, task: str, gold: list[str], skills: Iterable[str] = ()) -> dict[tuple[str, ...], float]:
        """Exact distribution of one call's answer (a tuple of answers) on a task, for a call that
        sees no other answers (a CoT sample, a debater in round one)."""
        p = self.p_correct(task, skills)
        dist: dict[tuple[str, ...], float] = {tuple(gold): p}
        for a, q in self.wrong_outcomes(task, gold):
            dist[a] = dist.get(a, 0.0) + (1.0 - p) * q
        return dist

    def draw_wrong(self, task: str, gold: list[str], rng: random.Random,
                   exclude: str | None = None) -> list[str]:
        """One wrong answer from the task's distribution (``exclude``: a key not to give, if any other
        wrong answer has positive probability)."""
        outs = self.wrong_outcomes(task, gold)
        if exclude is not None:
            kept = [(a, q) for a, q in outs if gold_key(a) != exclude and q > 0]
            outs = kept or outs
        ans, weights = zip(*outs)
        if sum(weights) <= 0:
            return list(ans[0])
        return list(rng.choices(ans, weights=weights)[0])


__all__ = ["SimModel", "calibrate", "gold_key", "lookup", "seeded", "sigmoid", "skill_accuracy", "wrong_answer"]
