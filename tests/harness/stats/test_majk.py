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


# Hand-worked pools (every k-subset written out in the comments), one per tie rule.

def test_two_answers_tied_each_rule_by_hand():
    # pool a, b with a gold. k=1: a or b alone -> 1/2. k=2: a 1-1 tie
    assert exact_majk(["a", "b"], [True, False], "split").tolist() == [0.5, 0.5]  # tie split in half
    assert exact_majk(["a", "b"], [True, False], "first").tolist() == [0.5, 1.0]  # a was seen first
    assert exact_majk(["b", "a"], [False, True], "first").tolist() == [0.5, 0.0]  # b was seen first


def test_first_rule_by_hand_on_b_a_a_b():
    # gold a. k=2: {b,a} b first 0, {b,a} 0, {b,b} 0, {a,a} 1, {a,b} a first 1, {a,b} 1 -> 3/6;
    # k=3: {b,a,a} 1, {b,a,b} 0, {b,a,b} 0, {a,a,b} 1 -> 2/4; k=4: 2-2 tie, b first -> 0
    got = exact_majk(["b", "a", "a", "b"], [False, True, True, False], "first")
    assert got.tolist() == pytest.approx([0.5, 0.5, 0.5, 0.0], abs=1e-12)


def test_random_rule_by_hand_on_three_single_answers():
    # pool a, b, c, gold a. k=2: {a,b} a wins iff prio(a) > prio(b), {a,c} likewise, {b,c} 0 -> sum / 3;
    # k=3: a three-way tie, a wins iff it has the highest priority of the three
    outcomes = set()
    for seed in range(16):
        pa, pb, pc = (priority(seed, "t", x) for x in "abc")
        want = [1 / 3, ((pa > pb) + (pa > pc)) / 3, float(pa > max(pb, pc))]
        got = exact_majk(["a", "b", "c"], [True, False, False], "random", seed=seed, task_id="t")
        assert got.tolist() == pytest.approx(want, abs=1e-12), seed
        outcomes.add(tuple(want))
    assert len(outcomes) == 3  # the seeds reach every case: a below both, between, above both


def test_random_rule_by_hand_with_counts():
    # pool a, a, b, b, c, gold a. k=4 drops one sample: an a (2 ways) -> b wins 2-1-1 (0); a b (2 ways) ->
    # a wins (1); c -> a 2-2 tie with b. So maj@4 = (2 + [prio(a) > prio(b)]) / 5; k=5: the 2-2-1 tie
    seen = set()
    for seed in range(8):
        win = float(priority(seed, "t", "a") > priority(seed, "t", "b"))
        got = exact_majk(["a", "a", "b", "b", "c"], [True, True, False, False, False], "random", seed=seed,
                         task_id="t")
        assert got[3:].tolist() == pytest.approx([(2 + win) / 5, win], abs=1e-12), seed
        seen.add(win)
    assert seen == {0.0, 1.0}


def test_no_answer_and_empty_answer_never_win():
    # pool a, "", None, b with a gold; "" and None are no answer. k=2: {a,""} 1, {a,None} 1, {a,b} 1/2,
    # {"",None} 0, {"",b} 0, {None,b} 0 -> 2.5/6; k=3: {a,"",None} 1, {a,"",b} 1/2, {a,None,b} 1/2,
    # {"",None,b} 0 -> 2/4; k=4: a 1-1 tie with b -> 1/2
    got = exact_majk(["a", "", None, "b"], [True, False, False, False], "split")
    assert got.tolist() == pytest.approx([0.25, 2.5 / 6, 0.5, 0.5], abs=1e-12)
    # a correct-flagged empty answer is not a gold answer: nothing can win
    assert exact_majk(["", "b"], [True, False], "split").tolist() == [0.0, 0.0]
    assert exact_majk(["", "", "b"], [True, True, False], "first").tolist() == [0.0, 0.0, 0.0]


def test_two_gold_answers_by_hand_for_each_rule():
    # pool 7, 8, 9 with 7 and 8 gold. split: k=1 2/3; k=2 {7,8} 1, {7,9} 1/2, {8,9} 1/2 -> 2/3; k=3 2 of 3 tied
    # -> 2/3. first: k=2 the first of each pair is 7 or 8 -> 1; k=3 7 first -> 1
    assert exact_majk(["7", "8", "9"], [True, True, False], "split").tolist() == pytest.approx([2 / 3] * 3)
    assert exact_majk(["7", "8", "9"], [True, True, False], "first").tolist() == pytest.approx([2 / 3, 1.0, 1.0])
    # 9 first: k=2 {9,7} 0, {9,8} 0, {7,8} 1 -> 1/3; k=3 9 first -> 0
    assert exact_majk(["9", "7", "8"], [False, True, True], "first").tolist() == pytest.approx([2 / 3, 1 / 3, 0.0])


def test_two_gold_answers_under_the_random_rule_add_up():
    # pool 7, 8, 9 with 7 and 8 gold: k=1 2/3 whatever the priorities; k=3 a three-way tie, won by gold
    # unless 9 has the top priority; k=2: {7,8} 1, {7,9} and {8,9} won by gold iff it outranks 9
    for seed in range(6):
        p7, p8, p9 = (priority(seed, "t", x) for x in "789")
        want = [2 / 3, (1 + (p7 > p9) + (p8 > p9)) / 3, float(p9 < max(p7, p8))]
        got = exact_majk(["7", "8", "9"], [True, True, False], "random", seed=seed, task_id="t")
        assert got.tolist() == pytest.approx(want, abs=1e-12), seed


def test_default_cell_key_is_seed_0_and_no_task():
    labels = [f"x{i}" for i in range(6)]
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert exact_majk([a, b], [True, False], "random")[1] == float(priority(0, "", a) > priority(0, "", b))


def test_unknown_tie_rule_is_named():
    with pytest.raises(ValueError, match="unknown tie rule 'coin'"):
        exact_majk(["a"], [True], "coin")


@pytest.mark.parametrize("tie", ["split", "random", "first"])
def test_an_all_gold_pool_scores_one_never_more(tie):
    # every vote is won by a gold answer, so maj@k = 1 for every k; float sums of the counts can land
    # a hair above 1 (1 + 2e-16 on these pools), which a probability must not
    rng = np.random.default_rng(0)
    for trial in range(300):
        n, m = int(rng.integers(2, 20)), int(rng.integers(2, 6))
        answers = [str(x) for x in rng.integers(0, m, n)]
        got = exact_majk(answers, [True] * n, tie, seed=trial, task_id="t")
        assert got.max() <= 1.0 and got == pytest.approx(np.ones(n), abs=1e-12), answers
