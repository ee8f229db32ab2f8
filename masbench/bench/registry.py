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


GENERATORS: Registry[GeneratorFn] = Registry("generator", {
    **{f"masbench.{axis}": f"masbench.bench.axes:{axis}_tasks"
       for axis in ("depth", "breadth", "parallel", "horizon", "robustness")},
    "masbench.arith": "masbench.bench.arith:arith_tasks",
    **{f"masbench.igsm.{axis}": f"masbench.bench.igsm:igsm_{axis}"
       for axis in ("depth", "breadth", "horizon", "parallel", "robustness")},
    "search": "masbench.bench.search.generate:search_tasks",
    "smfr": "masbench.bench.smfr:smfr_tasks",
    "smfr.paper": "masbench.bench.smfr_paper:smfr_paper_tasks",
}, plugins="masbench.generators")
"""Registered task generators by name (``masbench.depth``, ..., ``smfr``). The built-in ones are
declared here by ``module:attr`` and registered by decorator in their modules: the bench facade
imports the small ones (``masbench.*``, ``masbench.arith``); iGSM, SMFR and the search benchmark
load when a suite names them (a run of the quickstart imports none of them)."""

SCORERS: Registry[ScorerFn] = Registry("scorer", {
    "numeric": "masbench.bench.scorers:score_numeric",
    "set": "masbench.bench.scorers:score_set",
    "exact": "masbench.bench.scorers:score_exact",
    # the reply scorers' answer-only forms (a lambda each, put here by :func:`reply_scorer` as
    # masbench.bench.scoring.benchmarks loads, in place of these declarations)
    **{name: f"masbench.bench.scoring.benchmarks:score_{name}" for name in ("masbench", "smfr", "gsm8k", "aime", "math",
                                                                           "choice")},
    "judge": "masbench.bench.scoring.judge:_needs_a_model",
    "search": "masbench.bench.search.score:score_search",
}, plugins="masbench.scorers")
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
