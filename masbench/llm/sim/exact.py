"""Exact expectations of the simulator, for tests and studies: what a measurement *should* give.

- :func:`maj_at_k` — exact maj@k of k i.i.d. calls from an answer distribution (ties split the
  credit uniformly, as the CoT-SC curve does);
- :func:`pool_curve` — the exact CoT-SC curve of a simulated model over a list of tasks;
- :func:`unanimity` — P(k independent calls all give the same answer) on a task, and
  :func:`expected_unanimity` over tasks (a debate's round one: premature consensus), and
  :func:`tune_unanimity` to set that rate;
- :func:`correctness_correlation` — the population correlation (phi) of the correctness of two
  calls on the same random task, from the same model or two models of one world;
- :func:`fit_difficulty` / :func:`fit_concentration` — the (accuracy, spread) and the wrong-answer
  concentration that match a real pool's per-task accuracies and agreement among wrong answers;
- :func:`task_arrays` (and ``frontier_tasks`` / ``seven_b_tasks``) — per-task P(gold) and wrong-answer
  weights as arrays, for studies that draw samples themselves.

All SIMULATED: they describe the simulator, not any real model.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

from .latent import SimModel, calibrate, lookup
from .profiles import profile_for

Answer = tuple[str, ...]


def maj_at_k(dist: dict[Answer, float], gold: Sequence[str], k: int) -> float:
    """Exact expected credit of a majority vote over k i.i.d. answers drawn from ``dist``.

    P(gold wins) = Σ_c P(gold drawn c times, every other answer ≤ c times) / (1 + #others at c),
    computed by a dynamic programme over the other answers (exponential generating functions).
    """
    if k < 1:
        raise ValueError("k must be ≥ 1")
    g = tuple(gold)
    pg = dist.get(g, 0.0)
    others = [q for a, q in dist.items() if a != g and q > 0]
    if pg <= 0:
        return 0.0
    fact = [math.factorial(i) for i in range(k + 1)]
    total = 0.0
    n_o = len(others)
    for c in range(1, k + 1):
        r = k - c
        arr = np.zeros((r + 1, n_o + 1))
        arr[0, 0] = 1.0
        for q in others:
            new = np.zeros_like(arr)
            for x in range(min(c, r) + 1):
                coef = q ** x / fact[x]
                if x == c:
                    new[x:, 1:] += arr[: r + 1 - x, :-1] * coef
                else:
                    new[x:, :] += arr[: r + 1 - x, :] * coef
            arr = new
        ties = arr[r] / (1.0 + np.arange(n_o + 1))
        total += fact[k] / fact[c] * pg ** c * float(ties.sum())
    return total


def pool_curve(model: SimModel, tasks: Iterable[tuple[str, Sequence[str]]], k_max: int,
               skills: Iterable[str] = ()) -> list[float]:
    """Exact mean maj@k over ``tasks`` ((task id, gold answers) pairs) for k = 1..k_max."""
    skills = list(skills)
    per_k = np.zeros(k_max)
    n = 0
    for task, gold in tasks:
        dist = model.answer_distribution(str(task), list(gold), skills)
        per_k += [maj_at_k(dist, gold, k) for k in range(1, k_max + 1)]
        n += 1
    return (per_k / max(n, 1)).tolist()


def unanimity(dist: dict[Answer, float], k: int) -> float:
    """P(k independent calls from ``dist`` all give the same answer)."""
    return float(sum(q ** k for q in dist.values()))


def expected_unanimity(model: SimModel, tasks: Iterable[tuple[str, Sequence[str]]], k: int,
                       skills: Iterable[str] = ()) -> float:
    """Mean over ``tasks`` of :func:`unanimity` — e.g. the share of tasks on which k debaters who
    see nothing yet (round one) agree at once."""
    skills = list(skills)
    vals = [unanimity(model.answer_distribution(str(t), list(g), skills), k) for t, g in tasks]
    return sum(vals) / len(vals) if vals else 0.0


_X, _W = np.polynomial.hermite_e.hermegauss(60)
_W = _W / _W.sum()


def _theta(m: SimModel, skill: str | None) -> float:
    d = m.profile.difficulty
    if d is None:
        a = lookup(m.profile.accuracy, skill) if skill else None
        acc = a if a is not None else m.profile.accuracy.get("default", 0.5)
        return calibrate(acc, 0.0)
    return m.ability(skill)


def _p_given_shared(m: SimModel, skill: str | None) -> np.ndarray:
    """Rows: shared z nodes; columns: own u nodes → P(correct)."""
    th = _theta(m, skill)
    d = m.profile.difficulty
    s, o = (d.spread, d.own) if d is not None else (0.0, 0.0)
    if not math.isfinite(th):
        return np.full((len(_X), len(_X)), 1.0 if th > 0 else 0.0)
    z = _X[:, None]
    u = _X[None, :]
    return 1.0 / (1.0 + np.exp(-(th - s * z - o * u)))


def correctness_correlation(a: SimModel, b: SimModel | None = None, skill: str | None = None) -> float:
    """Population correlation (phi) of the correctness of two calls on the same random task that
    see no other answers: two calls of ``a`` (two designs, or two samples) when ``b`` is None,
    else one call of ``a`` and one of ``b``. Tasks share difficulty only within a world."""
    pa = _p_given_shared(a, skill)
    mu_a = float(_W @ pa @ _W)
    if b is None:
        e_ab = float(_W @ (pa * pa) @ _W)  # same model: the same own deviation u
        mu_b = mu_a
    else:
        pb = _p_given_shared(b, skill)
        mu_b = float(_W @ pb @ _W)
        da, db = a.profile.difficulty, b.profile.difficulty
        if da is not None and db is not None and da.world == db.world:
            e_ab = float(_W @ ((pa @ _W) * (pb @ _W)))  # shared z, independent own deviations
        else:
            e_ab = mu_a * mu_b
    var = mu_a * (1 - mu_a) * mu_b * (1 - mu_b)
    return 0.0 if var <= 0 else (e_ab - mu_a * mu_b) / math.sqrt(var)


def _var_p(theta: float, sd: float) -> float:
    p = 1.0 / (1.0 + np.exp(-(theta - sd * _X)))
    mu = float(_W @ p)
    return float(_W @ (p * p)) - mu * mu


def fit_difficulty(correct: Sequence[int], k: int) -> tuple[float, float, float]:
    """Calibrate a profile to a real pool: ``correct`` holds, per task, how many of its ``k``
    samples were right. Returns (accuracy, spread, between-task variance of P(correct)) by the
    method of moments: the between-task variance is var(p̂) − mean(p̂(1 − p̂))/(k − 1) (sampling noise
    removed), and ``spread`` is the difficulty sd whose Var(σ(θ − spread·Z)) matches it at that
    accuracy (0 if the pool looks like independent coins)."""
    if k < 2 or len(correct) < 2:
        raise ValueError("need at least 2 tasks and k ≥ 2 samples per task")
    ph = np.asarray(correct, dtype=float) / k
    mu = float(ph.mean())
    between = float(ph.var(ddof=1) - np.mean(ph * (1 - ph)) / (k - 1))
    if between <= 0 or mu <= 0 or mu >= 1:
        return mu, 0.0, max(between, 0.0)
    lo, hi = 0.0, 30.0
    if _var_p(calibrate(mu, hi), hi) <= between:
        return mu, hi, between
    for _ in range(60):  # Var(p) grows with the spread at a fixed mean: bisection
        mid = (lo + hi) / 2
        if _var_p(calibrate(mu, mid), mid) < between:
            lo = mid
        else:
            hi = mid
    return mu, (lo + hi) / 2, between


def fit_concentration(wrong: Iterable[Sequence[str]], distractors: int) -> tuple[float, float]:
    """Calibrate the ``errors`` block to a real pool: ``wrong`` holds, per task, the wrong answers its
    samples gave. Returns (P(two wrong samples of a task agree), the Dirichlet concentration that
    gives that agreement with ``distractors`` wrong answers: E[Σq²] = (α + 1)/(Dα + 1)). The formula is
    for one Dirichlet, i.e. a profile with ``overlap: 1`` (or one model alone in its world)."""
    agree = pairs = 0
    for answers in wrong:
        a = list(answers)
        for i in range(len(a)):
            for j in range(i + 1, len(a)):
                pairs += 1
                agree += a[i] == a[j]
    if pairs == 0:
        raise ValueError("no task has two wrong samples")
    c = agree / pairs
    d = distractors
    if c <= 1.0 / d:
        return c, 100.0  # as spread out as D wrong answers allow: the largest concentration
    return c, min(100.0, max(1e-3, (1 - c) / (d * c - 1)))


def tune_unanimity(model: SimModel, target: float, k: int = 3,
                   tasks: Iterable[tuple[str, Sequence[str]]] | None = None) -> SimModel:
    """The model with its wrong-answer ``concentration`` set so that k calls that see nothing yet
    (a debate's round one) agree at once on a share ``target`` of ``tasks`` (default: 400 task ids):
    premature consensus at a configured rate. Raises if the target is out of reach at the model's
    difficulty (all-right unanimity alone exceeds it, or even one wrong answer per task falls short)."""
    errors = model.profile.errors
    if errors is None:
        raise ValueError("the profile needs an `errors` block to tune its wrong answers")
    pairs = [(str(t), list(g)) for t, g in (tasks if tasks is not None else
                                            ((f"tune-{i}", ["1"]) for i in range(400)))]

    def at(alpha: float) -> tuple[SimModel, float]:
        prof = model.profile.model_copy(update={"errors": errors.model_copy(update={"concentration": alpha})})
        m = SimModel(model.model_id, prof)
        return m, expected_unanimity(m, pairs, k)

    lo, hi = math.log(1e-3), math.log(100.0)
    u_lo = at(math.exp(lo))[1]
    u_hi = at(math.exp(hi))[1]
    if not u_hi <= target <= u_lo:
        raise ValueError(f"round-one unanimity {target:.3f} is out of reach for this difficulty: "
                         f"between {u_hi:.3f} and {u_lo:.3f}")
    for _ in range(40):  # unanimity falls as the errors spread out: bisection on log α
        mid = (lo + hi) / 2
        m_mid, u = at(math.exp(mid))
        if u > target:
            lo = mid
        else:
            hi = mid
        if abs(u - target) < 1e-4:
            return m_mid
    return at(math.exp((lo + hi) / 2))[0]


def task_arrays(model: SimModel, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` fresh tasks of the model (random task ids from ``rng``): P(gold) per task and the
    per-task distribution over its wrong answers, shape (n, D) — the table a statistics study
    can draw samples from without calling the gateway."""
    ids = [f"study-{x:016x}" for x in rng.integers(0, 2 ** 62, n)]
    p = np.array([model.p_correct(t) for t in ids])
    w = np.array([model.wrong_weights(t) for t in ids])
    return p, w


def frontier_tasks(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`task_arrays` of ``sim/frontier`` (a ``module:function`` hook for studies)."""
    return task_arrays(SimModel("sim/frontier", profile_for("sim/frontier", None)), rng, n)


def seven_b_tasks(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`task_arrays` of ``sim/7b``."""
    return task_arrays(SimModel("sim/7b", profile_for("sim/7b", None)), rng, n)


__all__ = ["correctness_correlation", "expected_unanimity", "fit_concentration", "fit_difficulty", "maj_at_k",
           "frontier_tasks", "pool_curve", "seven_b_tasks", "task_arrays", "tune_unanimity", "unanimity"]
