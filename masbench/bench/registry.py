"""Name → function registries for task generators and answer scorers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Concatenate, Protocol, TypeVar

from ..registry import Registry

if TYPE_CHECKING:
    from .types import Score, TaskInstance


GeneratorFn = Callable[Concatenate["list[int] | None", int, int, str, ...], list["TaskInstance"]]
"""``fn(values, n, seed, split, **params) -> list[TaskInstance]``: the four positional arguments,
then the generator's own keyword options (the suite's ``params``)."""

G = TypeVar("G", bound=GeneratorFn)


ScorerFn = Callable[["TaskInstance", list[str]], "Score"]
"""``fn(task, predicted_raw_answers) -> Score``."""

ReplyScorerFn = Callable[["TaskInstance", "str | None", list[str]], "Score"]
"""``fn(task, reply_text_or_None, extracted_answers) -> Score``: a scorer that reads the whole reply
(a benchmark's own extraction rule, e.g. MASBench's ``\\boxed{}`` count)."""


class ModelScorer(Protocol):
    """A scorer that asks a model (the ``judge``): awaited by the harness, which hands it the
    suite's judge settings, the judge agent and an ``ask`` coroutine (one call through the gateway,
    purpose ``scoring``)."""

    async def score(self, task: "TaskInstance", reply: str | None, answers: list[str], spec: Any, agent: Any,
                    ask: Any) -> Any: ...


GENERATORS: Registry[GeneratorFn] = Registry("generator", plugins="masbench.generators")
"""Registered task generators by name (``masbench.depth``, ..., ``smfr``); the bench facade imports
the modules that define the built-in ones."""

SCORERS: Registry[ScorerFn] = Registry("scorer", plugins="masbench.scorers")
"""Registered scorers by name (``numeric``, ``set``, ``exact``, and every reply scorer)."""

REPLY_SCORERS: Registry[ReplyScorerFn] = Registry("reply scorer")
"""Scorers that extract from the reply themselves (``masbench``, ``smfr``, ``gsm8k``, ``math``, ...)."""


MODEL_SCORERS: Registry[ModelScorer] = Registry("model scorer")
"""Scorers that ask a model (``judge``). A task whose scorer is one of these is scored inside a run."""


def reply_scorer(name: str) -> Callable[[ReplyScorerFn], ReplyScorerFn]:
    """Register a reply-reading scorer under ``name`` (also usable on already-extracted answers)."""

    def register(fn: ReplyScorerFn) -> ReplyScorerFn:
        REPLY_SCORERS.add(name, fn)
        SCORERS.add(name, lambda task, predicted: fn(task, None, predicted), replace=True)
        return fn

    return register


def generator(name: str) -> Callable[[G], G]:
    """Register a task generator under ``name`` (a second, different one under the same name is an error);
    the decorated function keeps its own signature."""

    def register(fn: G) -> G:
        GENERATORS.add(name, fn)
        return fn

    return register


def scorer(name: str) -> Callable[[ScorerFn], ScorerFn]:
    """Register an answer scorer under ``name`` (a second, different one under the same name is an error)."""
    return SCORERS.register(name)
