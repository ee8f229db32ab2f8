"""The simulated pool study: ``sim/`` models with known per-skill competence and prices.

Everything here is SIMULATED: the models are the seeded simulator, whose probability of a correct
answer on a task is the mean of its per-skill accuracies over the task's skills. That makes the
true competence known, so learned competence can be checked against it.

The pool has cheap specialists and expensive generalists, so routing has something to gain:

==============  =====================  =============================================
model           USD / 1M tok (in/out)  good at
==============  =====================  =============================================
sim/tiny        0.05 / 0.10            addition, comparisons, extraction
sim/wordy       0.20 / 0.80            text (extract, count), comparisons
sim/mathy       0.50 / 1.50            arithmetic
sim/general     1.50 / 4.00            everything, moderately
sim/frontier    5.00 / 15.00           everything
==============  =====================  =============================================
"""

from __future__ import annotations

import random

import numpy as np

from ..bench.types import TaskInstance
from ..spec.model import ModelSpec, SimProfile, TokenDist
from .handbook import compile_handbook
from .matrix import explore

SKILLS = ("arith.add", "arith.mul", "arith.pct", "logic.compare", "logic.order", "text.extract", "text.count")

TRUE_ACCURACY: dict[str, dict[str, float]] = {
    "sim/tiny":     {"arith.add": 0.85, "arith.mul": 0.25, "arith.pct": 0.15, "logic.compare": 0.75,
                     "logic.order": 0.30, "text.extract": 0.80, "text.count": 0.30, "default": 0.30},
    "sim/wordy":    {"arith.add": 0.80, "arith.mul": 0.40, "arith.pct": 0.30, "logic.compare": 0.80,
                     "logic.order": 0.55, "text.extract": 0.95, "text.count": 0.90, "default": 0.50},
    "sim/mathy":    {"arith.add": 0.95, "arith.mul": 0.92, "arith.pct": 0.90, "logic.compare": 0.80,
                     "logic.order": 0.50, "text.extract": 0.60, "text.count": 0.70, "default": 0.60},
    "sim/general":  {"arith.add": 0.85, "arith.mul": 0.75, "arith.pct": 0.70, "logic.compare": 0.85,
                     "logic.order": 0.75, "text.extract": 0.85, "text.count": 0.75, "default": 0.75},
    "sim/frontier": {"arith.add": 0.96, "arith.mul": 0.94, "arith.pct": 0.92, "logic.compare": 0.96,
                     "logic.order": 0.92, "text.extract": 0.96, "text.count": 0.93, "default": 0.90},
}
"""Per-skill probability of a correct answer (the ground truth the learner should recover)."""

_PRICES = {"sim/tiny": (0.05, 0.10, 60), "sim/wordy": (0.20, 0.80, 100), "sim/mathy": (0.50, 1.50, 150),
           "sim/general": (1.50, 4.00, 200), "sim/frontier": (5.00, 15.00, 300)}

# The MASBench generators tag tasks with masbench.<axis>, arith.*, plan.*, robust.*: give the
# pool parent-level accuracies for those too, so `skills learn --explore --suite masbench-5axis` works.
_MASBENCH = {"sim/tiny": {"arith": 0.6, "plan": 0.3, "robust": 0.3, "masbench": 0.5},
             "sim/wordy": {"arith": 0.55, "plan": 0.6, "robust": 0.7, "masbench": 0.6},
             "sim/mathy": {"arith": 0.92, "plan": 0.55, "robust": 0.5, "masbench": 0.7},
             "sim/general": {"arith": 0.8, "plan": 0.75, "robust": 0.75, "masbench": 0.75},
             "sim/frontier": {"arith": 0.95, "plan": 0.9, "robust": 0.9, "masbench": 0.9}}


def study_pool(seed: int = 0) -> dict[str, ModelSpec]:
    """Alias → ModelSpec of the simulated pool (aliases are the ids)."""
    out = {}
    for i, (m, acc) in enumerate(TRUE_ACCURACY.items()):
        pin, pout, toks = _PRICES[m]
        out[m] = ModelSpec(id=m, input_usd_per_mtok=pin, output_usd_per_mtok=pout,
                           sim=SimProfile(accuracy={**_MASBENCH[m], **acc},
                                          completion_tokens=TokenDist(mean=toks, sd=toks * 0.15, min=8),
                                          seed=seed * 100 + i))
    return out


_NAMES = ["Ava", "Ben", "Cleo", "Dan", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jade", "Kim", "Leo", "Mia", "Nora"]
_CITIES = ["Lisbon", "Osaka", "Quito", "Tunis", "Perth", "Oslo", "Lima", "Hanoi", "Cairo", "Dakar"]
_ITEMS = ["apples", "marbles", "stamps", "coins", "books", "shells", "cards", "pens"]
_WORDS = ["river", "garden", "silver", "planet", "window", "orange", "market", "pencil", "castle", "winter",
          "basket", "candle", "forest", "harbor", "island", "jacket", "kettle", "ladder", "mirror", "needle",
          "pepper", "rocket", "saddle", "tunnel", "valley", "wallet", "yellow", "zipper", "anchor", "bridge"]


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _template(skill: str, r: random.Random) -> tuple[str, str]:
    """(question, gold) for one skill; several phrasings per skill, shared filler vocabulary."""
    n1, n2 = r.sample(_NAMES, 2)
    it = r.choice(_ITEMS)
    a, b, c = r.randint(2, 60), r.randint(2, 60), r.randint(2, 60)
    if skill == "arith.add":
        return r.choice([
            (f"What is {a} plus {b}?", str(a + b)),
            (f"Compute the sum of {a} and {b}.", str(a + b)),
            (f"{n1} has {a} {it} and gets {b} more. How many {it} does {n1} have in total?", str(a + b)),
            (f"Add {a} and {b}.", str(a + b))])
    if skill == "arith.mul":
        return r.choice([
            (f"What is {a} times {b}?", str(a * b)),
            (f"Compute the product of {a} and {b}.", str(a * b)),
            (f"{n1} buys {a} boxes with {b} {it} in each box. How many {it} is that?", str(a * b)),
            (f"Multiply {a} by {b}.", str(a * b))])
    if skill == "arith.pct":
        p = r.choice([5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 80, 90])
        base = 20 * r.randint(1, 30)
        return r.choice([
            (f"What is {p} percent of {base}?", _num(p * base / 100)),
            (f"{n1} had {base} {it} and gave away {p}% of them. How many {it} did {n1} give away?", _num(p * base / 100)),
            (f"Compute {p}% of {base}.", _num(p * base / 100))])
    if skill == "logic.compare":
        x, y = (a, b) if a != b else (a, b + 1)
        return r.choice([
            (f"Which is larger, {x} or {y}? Give the larger number.", str(max(x, y))),
            (f"{n1} is {x} years old and {n2} is {y}. How old is the older one?", str(max(x, y))),
            (f"Compare {x} and {y}: which one is smaller?", str(min(x, y)))])
    if skill == "logic.order":
        vals = sorted({a, b, c, a + b})
        while len(vals) < 3:
            vals.append(vals[-1] + 1)
        sh = vals[:]
        r.shuffle(sh)
        return r.choice([
            (f"Sort {', '.join(map(str, sh))} in ascending order. Which number comes second?", str(sorted(sh)[1])),
            (f"Arrange {', '.join(map(str, sh))} from largest to smallest and give the third one.",
             str(sorted(sh, reverse=True)[2])),
            (f"If {n1} is taller than {n2} and {n2} is taller than Zoe, rank the three; who is the shortest?",
             "Zoe")])
    if skill == "text.extract":
        city = r.choice(_CITIES)
        return r.choice([
            (f"In the sentence '{n1} flew to {city} with {b} {it} last spring', which city is mentioned?", city),
            (f"Extract the name of the person from: 'Yesterday {n1} sold {a} {it} at the market.'", n1),
            (f"Read: '{n1} lives in {city}.' Quote the city named in the text.", city)])
    if skill == "text.count":
        words = r.sample(_WORDS, r.randint(3, 8))
        w2 = " ".join(r.sample(_WORDS, 2))
        ch = r.choice("aeinorst")
        return r.choice([
            (f"How many words are in the phrase '{' '.join(words)}'?", str(len(words))),
            (f"Count the letters in '{w2}' (spaces excluded).", str(len(w2.replace(' ', '')))),
            (f"Count how many times the letter '{ch}' appears in '{w2}'.", str(w2.count(ch)))])
    raise ValueError(skill)


def study_tasks(n: int, seed: int = 0, multi: float = 0.3, skills: tuple[str, ...] = SKILLS,
                weights: tuple[float, ...] | None = None) -> list[TaskInstance]:
    """``n`` synthetic tasks; a share ``multi`` needs two skills (the question has two parts)."""
    r = random.Random(seed)
    w = list(weights) if weights is not None else [1.0] * len(skills)
    out = []
    for i in range(n):
        s1 = r.choices(skills, weights=w)[0]
        q1, g1 = _template(s1, r)
        tags = [s1]
        q, g = q1, g1
        if r.random() < multi:
            s2 = r.choices([s for s in skills if s != s1], weights=[x for s, x in zip(skills, w) if s != s1])[0]
            q2, g2 = _template(s2, r)
            q = f"First, {q1[0].lower() + q1[1:]} Then answer this: {q2}"
            g, tags = g2, [s1, s2]
        scorer = "numeric" if g.lstrip("-").isdigit() else "exact"
        out.append(TaskInstance(id=f"study-s{seed}-{i:04d}", source="routing-study", question=q, answers=[g],
                                skills=tags, scorer=scorer, meta={"simulated": True}))
    return out


def true_competence(model: str, skill: str) -> float:
    acc = TRUE_ACCURACY[model]
    return acc.get(skill, acc.get(skill.split(".")[0], acc["default"]))


def sim_matrix(n: int = 600, seed: int = 0, multi: float = 0.3, max_tokens: int = 512):
    """The outcome matrix of the study pool on ``n`` study tasks, through the Gateway. SIMULATED."""

    return explore(study_pool(seed), study_tasks(n, seed, multi), max_tokens=max_tokens)


def competence_error(hb, skills: tuple[str, ...] = SKILLS) -> np.ndarray:
    """(models, skills) |posterior mean − true accuracy| for a learned handbook of the study pool."""

    ch = compile_handbook(hb.model_copy(update={"taxonomy": {k: v.model_copy(update={"active": True})
                                                              for k, v in hb.taxonomy.items()}}))
    err = np.zeros((len(ch.models), len(skills)))
    for i, m in enumerate(ch.models):
        for j, s in enumerate(skills):
            err[i, j] = abs(ch.mean[i, ch.index[s]] - true_competence(m, s))
    return err
