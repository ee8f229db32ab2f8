"""The tie rules against the hashes recomputed here from the documented recipe (sha256 of
``prio|seed|task|answer`` / ``split|seed|task|node|sorted answers``, its first 8 bytes over 2⁶⁴),
not through the module's helpers (issue 29)."""

from __future__ import annotations

import hashlib

import pytest

from masbench.runtime.ties import TIE_RULES, answer_key, break_tie, priority


def unit(text: str) -> float:
    """First 16 hex digits of sha256 as a fraction of 2**64."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:16], 16) / 2 ** 64


def test_rules() -> None:
    assert TIE_RULES == ("split", "random", "first")


def test_answer_key_joins_tuples_like_the_store() -> None:
    assert answer_key(("1", "2")) == "1, 2" and answer_key([3, 4]) == "3, 4" and answer_key(()) == ""
    assert answer_key(42) == "42" and answer_key("a, b") == "a, b" and answer_key(None) == "None"


def test_priority_is_the_documented_hash() -> None:
    for seed, task, ans in [(0, "t", "42"), (3, "gsm-7", "1.5"), (12345, "", "")]:
        assert priority(seed, task, ans) == unit(f"prio|{seed}|{task}|{ans}")
    assert priority(1, "t", ("3", "4")) == unit("prio|1|t|3, 4")
    assert all(0.0 <= priority(s, "t", "a") < 1.0 for s in range(50))


def test_first_and_a_single_answer() -> None:
    assert break_tie(["b", "a", "c"], "first", seed=9, task_id="t") == "b"
    assert break_tie(["c", "a"], "first") == "c"
    for rule in TIE_RULES:
        assert break_tie(["x"], rule, seed=4, task_id="t") == "x"
    with pytest.raises(ValueError, match=r"^no tied answers$"):
        break_tie([], "first")


def test_random_takes_the_highest_priority_whatever_the_order() -> None:
    tied = ["1", "2", "3"]
    not_first = not_last = 0
    for seed in range(40):
        want = max(tied, key=lambda a: unit(f"prio|{seed}|task-9|{a}"))
        for order in (tied, tied[::-1], ["2", "3", "1"]):
            assert break_tie(order, "random", seed=seed, task_id="task-9", node="vote") == want, seed
        not_first += want != "1"
        not_last += want != "3"
    assert not_first and not_last  # the seeds reach winners in every position (the rule is no position)


def test_random_defaults_to_seed_0_and_no_task() -> None:
    tied = ["a", "b", "c", "d"]
    assert break_tie(tied, "random") == max(tied, key=lambda a: unit(f"prio|0||{a}"))
    # and the defaults are not a special case: another seed or task draws differently for some answers
    assert any(break_tie(t, "random") != break_tie(t, "random", seed=1) for t in (tied, tied[1:], tied[2:]))
    assert any(break_tie(t, "random") != break_tie(t, "random", task_id="XXXX") for t in (tied, tied[1:], tied[2:]))


def test_random_priorities_of_tuple_answers() -> None:
    tied = [("1", "2"), ("2", "1")]
    for seed in range(10):
        want = max(tied, key=lambda a: unit(f"prio|{seed}|t|{a[0]}, {a[1]}"))
        assert break_tie(tied, "random", seed=seed, task_id="t") is want


def test_split_draws_from_the_sorted_set_by_its_hash() -> None:
    tied = ["b", "c", "a"]
    wins: dict[str, int] = {}
    for seed in range(60):
        u = unit(f"split|{seed}|t|vote|a\x1fb\x1fc")
        want = ["a", "b", "c"][int(u * 3)]
        for order in (tied, sorted(tied), tied[::-1]):
            assert break_tie(order, "split", seed=seed, task_id="t", node="vote") == want, seed
        wins[want] = wins.get(want, 0) + 1
    assert set(wins) == {"a", "b", "c"}
    # the node is part of the draw: another node draws differently for some seed
    assert any(break_tie(tied, "split", seed=s, task_id="t", node="vote")
               != break_tie(tied, "split", seed=s, task_id="t", node="other") for s in range(20))


def test_split_returns_the_tied_object_and_keys_tuples_like_the_store() -> None:
    tied = [("2", "1"), ("1", "2")]
    for seed in range(10):
        u = unit(f"split|{seed}|t||1, 2\x1f2, 1")
        want = tied[1] if int(u * 2) == 0 else tied[0]
        assert break_tie(tied, "split", seed=seed, task_id="t") is want


def test_an_unknown_rule_is_named() -> None:
    with pytest.raises(ValueError, match=r"^unknown tie rule 'coin': use one of split, random, first$"):
        break_tie(["a", "b"], "coin")
