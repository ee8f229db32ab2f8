"""Where a cell's reply is scored: a rule scorer at once, a model scorer (the ``judge``) awaited.

:class:`CellScoring` is the one seam between a design (or pool) result and its ``results``
(``pool``) row's verdict. A task whose scorer needs a model (:data:`~masbench.bench.MODEL_SCORERS`)
is scored through the run's gateway with the suite's judge: each judge sample is one call tagged
``purpose: scoring`` with the cell's design, task and seed, so it is recorded, cached (a re-score
costs nothing), kept out of every design's tally — the runtime's :class:`~masbench.runtime.DesignResult`
counted the design's calls before scoring began, and the budget meter never sees a judge call —
and reported apart (the ``judge_usage`` view).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..bench import MODEL_SCORERS, score
from ..bench.scoring.judge import PROMPT_NAMES, JudgeCall, Judged, unknown_names
from ..bench.types import Score, TaskInstance
from ..library import Library
from ..spec import AgentSpec, JudgeSpec

if TYPE_CHECKING:
    from ..llm import Gateway


class JudgeConfigError(ValueError):
    """A suite's judge cannot run: no ``judge:`` block for judged tasks, or an unusable judge agent."""


@dataclass(slots=True)
class Scored:
    """A reply's verdict, and the judge columns of its row (empty for a rule scorer)."""

    score: Score
    columns: dict[str, Any] = field(default_factory=dict)
    """``judge``, ``judge_model``, ``judge_samples``, ``judge_passes``, ``judge_value``, ``rule_correct``."""
    detail: dict[str, Any] | None = None
    """The judge's samples (scores and replies), for the results row's ``detail``."""


def judge_agent(spec: JudgeSpec, library: Library) -> AgentSpec:
    """The judge's agent, checked usable as a judge (a fixed model, a prompt naming only what a
    judge call fills in)."""
    agent = library.get("agent", spec.agent).typed(AgentSpec)
    if not isinstance(agent.model, str):
        raise JudgeConfigError(f"judge agent {agent.name!r}: its model is a route; a judge needs a fixed model alias")
    bad = unknown_names(agent.prompt, PROMPT_NAMES)
    if bad:
        raise JudgeConfigError(f"judge agent {agent.name!r}: its prompt names {', '.join('{' + b + '}' for b in bad)}; "
                               f"a judge prompt may name {', '.join('{' + n + '}' for n in PROMPT_NAMES)}")
    return agent


def check_judged(tasks: list[TaskInstance], spec: JudgeSpec | None, library: Library, suite: str) -> AgentSpec | None:
    """The judge agent when some task needs a model scorer (None when none does); raises
    :class:`JudgeConfigError` when one does and the suite has no usable ``judge:``."""
    return judge_for(judged_ids(tasks), spec, library, suite)


def judged_ids(tasks: list[TaskInstance]) -> list[str]:
    """The ids of the tasks a model scores (a judge), in task order."""
    return [t.id for t in tasks if t.scorer in MODEL_SCORERS]


def judge_for(judged: list[str], spec: JudgeSpec | None, library: Library, suite: str) -> AgentSpec | None:
    """:func:`check_judged` given the ids of the tasks a model scores."""
    if not judged:
        return None
    if spec is None:
        raise JudgeConfigError(f"suite {suite!r}: {len(judged)} task(s) (e.g. {judged[0]}) are scored by a judge "
                               "but the suite has no `judge:` block (agent, rubric, scale, k)")
    return judge_agent(spec, library)


class CellScoring:
    """Scores the replies of one run's cells (rule scorers synchronously, model scorers through
    ``gateway`` with ``spec``'s judge)."""

    def __init__(self, gateway: Gateway, run_id: str, spec: JudgeSpec | None, agent: AgentSpec | None):
        self.gateway = gateway
        self.run_id = run_id
        self.spec = spec
        self.agent = agent
        self.model_id = gateway.resolve(agent.model)[1].id if agent is not None and isinstance(agent.model, str) \
            else None

    async def score(self, task: TaskInstance, answers: list[str], reply: str | None, design: str,
                    seed: int) -> Scored:
        """The verdict on one reply of the cell (``design`` label, ``seed``)."""
        scorer = MODEL_SCORERS.get(task.scorer)
        if scorer is None:
            return Scored(score(task, answers, reply=reply))
        if self.spec is None or self.agent is None:
            raise JudgeConfigError(f"task {task.id!r} is scored by {task.scorer!r} but the run has no judge")
        spec, agent = self.spec, self.agent
        assert isinstance(agent.model, str)  # checked by judge_agent
        alias = agent.model
        tags = {"run_id": self.run_id, "purpose": "scoring", "design": design, "task_id": task.id, "seed": seed,
                "node": "judge", "agent": agent.name}
        params = {"stop": list(agent.stop)} if agent.stop else None

        async def ask(call: JudgeCall) -> str | None:
            res = await self.gateway.complete(alias, call.messages, sample_index=call.sample_index,
                                              temperature=agent.temperature, max_tokens=agent.max_tokens,
                                              params=params, tags=tags, metadata=call.meta)
            return None if res.error else res.text

        judged: Judged = await scorer.score(task, reply, answers, spec, agent, ask)
        counted = len(judged.samples) if spec.unparsed == "fail" else sum(s is not None for s in judged.samples)
        return Scored(judged.score, {"judge": judged.judge, "judge_model": self.model_id, "judge_samples": counted,
                                     "judge_passes": judged.passes, "judge_value": judged.value,
                                     "rule_correct": judged.rule_correct},
                      {"judge": {"agent": judged.judge, "samples": judged.samples, "replies": judged.texts}})


__all__ = ["CellScoring", "JudgeConfigError", "Scored", "check_judged", "judge_agent", "judge_for", "judged_ids"]
