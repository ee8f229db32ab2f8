"""Tie rules for majority votes, shared by the ``majority`` node and the CoT-SC curve.

A suite chooses one rule (``cot_sc.tie``); the harness passes it to every design run and uses it
for the curve, so ``cot-sc[k]`` and the curve at k estimate the same quantity:

- ``split``: ties are split in expectation. The curve credits a tie between the gold answer and
  t − 1 others with 1/t; the vote node picks one of the tied answers uniformly at random (a
  seeded hash of run seed, task, node and the tied set), whose expected credit is that 1/t.
- ``random``: a seeded random *priority* over answers per (seed, task): the tied answer with the
  highest priority wins, in the vote node and in the curve alike (deterministic given the seed).
- ``first``: the tied answer seen first wins (lowest sample position in the vote; lowest pool
  index in the curve's subsets, which keep the pool order).

Nothing here is random at run time: every choice is a hash, so reruns reproduce it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal

TieRule = Literal["split", "random", "first"]
TIE_RULES: tuple[str, ...] = ("split", "random", "first")


def _unit(text: str) -> float:
    """A number in [0, 1) from a string (sha256; stable across processes and platforms)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2 ** 64


def answer_key(answer: Any) -> str:
    """The string a tie rule hashes: a tuple of answers is joined like the store's ``answer``."""
    if isinstance(answer, (tuple, list)):
        return ", ".join(str(a) for a in answer)
    return str(answer)


def priority(seed: int, task_id: str, answer: Any) -> float:
    """The ``random`` rule's priority of an answer in cell (task, seed); higher wins a tie."""
    return _unit(f"prio|{seed}|{task_id}|{answer_key(answer)}")


def break_tie(tied: Sequence[Any], rule: str, *, seed: int = 0, task_id: str = "", node: str = "") -> Any:
    """The winner among ``tied`` (in first-seen order) under ``rule``."""
    if not tied:
        raise ValueError("no tied answers")
    if len(tied) == 1 or rule == "first":
        return tied[0]
    if rule == "random":
        return max(tied, key=lambda a: priority(seed, task_id, a))
    if rule == "split":
        keys = sorted(answer_key(a) for a in tied)  # order-free: the draw depends on the set only
        i = int(_unit(f"split|{seed}|{task_id}|{node}|" + "\x1f".join(keys)) * len(keys))
        return next(a for a in tied if answer_key(a) == keys[i])
    raise ValueError(f"unknown tie rule {rule!r}: use one of {', '.join(TIE_RULES)}")
