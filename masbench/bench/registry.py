"""Name → function registries for task generators and answer scorers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol

if TYPE_CHECKING:
    from .types import Score, TaskInstance


class GeneratorFn(Protocol):
    """``fn(values, n, seed, split, **params) -> list[TaskInstance]``."""

    def __call__(self, values: list[int] | None, n: int, seed: int, split: str,
                 **params: object) -> list["TaskInstance"]: ...


ScorerFn = Callable[["TaskInstance", list[str]], "Score"]
"""``fn(task, predicted_raw_answers) -> Score``."""

ReplyScorerFn = Callable[["TaskInstance", "str | None", list[str]], "Score"]
"""``fn(task, reply_text_or_None, extracted_answers) -> Score``: a scorer that reads the whole reply
(a benchmark's own extraction rule, e.g. MASBench's ``\\boxed{}`` count)."""

GENERATORS: dict[str, GeneratorFn] = {}
"""Registered task generators by name (``masbench.depth``, ..., ``smfr``)."""

SCORERS: dict[str, ScorerFn] = {}
"""Registered scorers by name (``numeric``, ``set``, ``exact``)."""


REPLY_SCORERS: dict[str, ReplyScorerFn] = {}
"""Scorers that extract from the reply themselves (``masbench``, ``smfr``, ``gsm8k``, ``math``, ...)."""


def reply_scorer(name: str) -> Callable[[ReplyScorerFn], ReplyScorerFn]:
    """Register a reply-reading scorer under ``name`` (also usable on already-extracted answers)."""

    def register(fn: ReplyScorerFn) -> ReplyScorerFn:
        if name in REPLY_SCORERS and REPLY_SCORERS[name] is not fn:
            raise ValueError(f"scorer {name!r} is already registered")
        REPLY_SCORERS[name] = fn
        SCORERS[name] = lambda task, predicted: fn(task, None, predicted)
        return fn

    return register


def generator(name: str) -> Callable[[GeneratorFn], GeneratorFn]:
    """Register a task generator under ``name``."""

    def register(fn: GeneratorFn) -> GeneratorFn:
        if name in GENERATORS and GENERATORS[name] is not fn:
            raise ValueError(f"generator {name!r} is already registered")
        GENERATORS[name] = fn
        return fn

    return register


def scorer(name: str) -> Callable[[ScorerFn], ScorerFn]:
    """Register an answer scorer under ``name``."""

    def register(fn: ScorerFn) -> ScorerFn:
        if name in SCORERS and SCORERS[name] is not fn:
            raise ValueError(f"scorer {name!r} is already registered")
        SCORERS[name] = fn
        return fn

    return register
