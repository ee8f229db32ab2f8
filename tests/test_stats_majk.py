"""Exact maj@k: equals brute-force enumeration of every k-subset, for each tie rule, and the
multinomial expectation for i.i.d. pools within sampling error."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from masbench.harness.stats import exact_majk
from masbench.runtime.ties import break_tie, priority


def brute(answers, correct, tie, seed=0, task_id="t"):
    n = len(answers)
    gold = {a for a, c in zip(answers, correct) if c and a}
    out = []
    for k in range(1, n + 1):
        tot = 0.0
        subsets = list(itertools.combinations(range(n), k))
        for s in subsets:
            tally: dict[str, int] = {}
            for i in s:  # pool order: first-seen = lowest index
                if answers[i]:
                    tally[answers[i]] = tally.get(answers[i], 0) + 1
            if not tally:
                continue
            top = max(tally.values())
            tied = [a for a, c in tally.items() if c == top]
            if tie == "split":
                tot += sum(a in gold for a in tied) / len(tied)
            else:
                tot += break_tie(tied, tie, seed=seed, task_id=task_id) in gold
        out.append(tot / len(subsets))
    return np.array(out)


def random_pool(rng, n):
    m = int(rng.integers(1, 5))
    labels = [str(x) for x in range(m)] + [None]
    p = rng.dirichlet(np.ones(m + 1))
    answers = [labels[i] for i in rng.choice(m + 1, size=n, p=p)]
    gold = str(int(rng.integers(0, m)))
    return answers, [a == gold for a in answers]


@pytest.mark.parametrize("tie", ["split", "random", "first"])
def test_exact_majk_equals_brute_force_over_all_subsets(tie):
    rng = np.random.default_rng(12)
    checked = 0
    for trial in range(60):
        n = int(rng.integers(1, 13))
        answers, correct = random_pool(rng, n)
        got = exact_majk(answers, correct, tie, seed=trial, task_id="t")
        want = brute(answers, correct, tie, seed=trial)
        np.testing.assert_allclose(got, want, atol=1e-10, err_msg=f"{tie} {answers} {correct}")
        checked += n
    assert checked > 200


def test_two_gold_answers_both_count():
    answers = ["7", "7.0", "8", "8"]
    correct = [True, True, False, False]
    np.testing.assert_allclose(exact_majk(answers, correct), brute(answers, correct, "split"), atol=1e-12)


def test_no_gold_or_empty_pool_scores_zero():
    assert exact_majk(["1", "2"], [False, False]).tolist() == [0.0, 0.0]
    assert len(exact_majk([], [])) == 0


def multinomial_majk(probs, k):
    """Exact maj@k (ties split) of k i.i.d. draws, answer 0 gold, by summing over count vectors."""
    total = 0.0
    for xs in itertools.product(range(k + 1), repeat=len(probs)):
        if sum(xs) != k:
            continue
        pr = math.factorial(k) * math.prod(q ** x / math.factorial(x) for x, q in zip(xs, probs))
        top = max(xs)
        if xs[0] == top and top > 0:
            total += pr / sum(x == top for x in xs)
    return total


@pytest.mark.parametrize("p", [0.35, 0.6])
def test_iid_pools_match_the_multinomial_expectation(p):
    rng = np.random.default_rng(int(p * 100))
    probs = np.array([p, (1 - p) * 0.5, (1 - p) * 0.3, (1 - p) * 0.2])
    labels = np.array(["g", "w1", "w2", "w3"])
    n_pools, n = 400, 9
    vals = np.array([exact_majk(list(labels[rng.choice(4, size=n, p=probs)]),
                                [False] * n, "split") for _ in range(1)])  # warm the cache path
    vals = []
    for _ in range(n_pools):
        a = labels[rng.choice(4, size=n, p=probs)]
        vals.append(exact_majk(list(a), list(a == "g"), "split"))
    vals = np.array(vals)
    for k in (1, 2, 3, 5, 9):
        mean, se = vals[:, k - 1].mean(), vals[:, k - 1].std(ddof=1) / math.sqrt(n_pools)
        want = multinomial_majk(probs, k)
        assert abs(mean - want) < 4 * se + 1e-9, (k, mean, se, want)


def test_random_priority_is_seeded_and_shared_with_the_vote():
    assert priority(3, "t1", "42") == priority(3, "t1", "42")
    assert priority(3, "t1", "42") != priority(4, "t1", "42")
    tied = ["1", "2", "3"]
    win = break_tie(tied, "random", seed=5, task_id="t")
    assert win == max(tied, key=lambda a: priority(5, "t", a))
    draws = {break_tie(tied, "split", seed=s, task_id="t", node="vote") for s in range(60)}
    assert draws == set(tied)  # the split draw reaches every tied answer
