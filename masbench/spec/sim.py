"""The simulator's error model: latent task difficulty, shared wrong answers, reactions to shown answers.

Each block is optional; a profile without them behaves exactly as the fixed-probability simulator
(one independent coin per call with the skill's accuracy, distractors drawn independently).
Everything the simulator produces is labelled SIMULATED.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from .base import Spec


class SimDifficulty(Spec):
    """Latent task difficulty, item-response style: for a task t and a call with skill s,
    P(correct) = σ(ability[s] − spread·z_t − own·u_t), where z_t ~ N(0, 1) is seeded by (``world``,
    task id) — shared by every model of the same world — and u_t ~ N(0, 1) by (profile seed, model
    id, task id) — this model's own view of the task. Every sample of the model on the task uses the
    same probability, so hard tasks are hard for all samples and, through z_t, for all models."""

    spread: float = Field(default=1.5, ge=0, le=10)
    """Standard deviation of the shared task difficulty on the logit scale (0: every task equally hard)."""
    own: float = Field(default=0.0, ge=0, le=10)
    """Standard deviation of this model's own per-task deviation (logit scale). 0: models of the same
    world rank tasks identically; larger: their errors are less correlated."""
    world: int = 0
    """Seed of the shared task difficulties and shared wrong answers. Models with the same world
    agree on which tasks are hard and share part of their wrong answers."""
    ability: dict[str, float] = Field(default_factory=dict)
    """Explicit logit ability per skill id (``default`` for unlisted ones). A skill not given here is
    calibrated from the profile's ``accuracy``, so that the mean P(correct) over tasks equals it."""


class SimErrors(Spec):
    """Per-task wrong answers: each (model, task) has its own distribution over ``distractors``
    wrong answers, shared by every sample of that model on that task (so a pool agrees on the same
    wrong answer and maj@k saturates below 1). It is a mixture: ``overlap`` of a distribution shared
    by the world, the rest the model's own; both are Dirichlet draws seeded by the task id."""

    distractors: int = Field(default=5, ge=1, le=50)
    """Distinct wrong answers a task has (wrong answer i = gold + i for numbers)."""
    concentration: float = Field(default=0.5, gt=0, le=100)
    """Dirichlet concentration per wrong answer: small (≤ 0.5) puts most of a task's errors on one
    wrong answer; large (≥ 10) spreads them evenly (nearly today's fixed distractors)."""
    overlap: float = Field(default=0.5, ge=0, le=1)
    """Weight of the world's shared wrong-answer distribution in each model's (1: models of the
    same world make the same mistakes; 0: their wrong answers are unrelated)."""


class SimReaction(Spec):
    """How a call that sees other answers (a debater, verifier, critic, refiner, aggregator,
    selector) reacts to them. The shown answer is the most common answer among those the call
    was shown (ties: the first seen). A judge's shown answer is its candidate."""

    keep_right: float = Field(default=0.95, ge=0, le=1)
    """P(the call ends correct | the shown answer is correct); otherwise it answers a wrong answer
    (a judge rejects the right candidate)."""
    fix_wrong: float = Field(default=0.3, ge=0, le=1)
    """P(the call ends correct | the shown answer is wrong): it fixes the error (a judge rejects the
    candidate and states the right answer)."""
    adopt_wrong: float = Field(default=0.5, ge=0, le=1)
    """P(the call repeats the shown wrong answer | it is wrong): conformity; for a judge,
    rubber-stamping a wrong candidate. The rest (1 − fix − adopt) gives another wrong answer."""

    @model_validator(mode="after")
    def _sum(self) -> "SimReaction":
        if self.fix_wrong + self.adopt_wrong > 1.0 + 1e-9:
            raise ValueError(f"fix_wrong + adopt_wrong = {self.fix_wrong + self.adopt_wrong:g} exceeds 1")
        return self


__all__ = ["SimDifficulty", "SimErrors", "SimReaction"]


class SimTools(Spec):
    """How a simulated model uses tools in a ReAct loop (metadata ``mode: react``; see
    docs/tools.md). Per step it answers once every hop's evidence document is in its context,
    else acts for the first hop not yet found."""

    search: float | None = Field(default=None, ge=0, le=1)
    """Retrieval competence: P(a search for the next unfound hop uses that hop's ideal query).
    None: the profile's ``accuracy`` for skill ``search`` (else its ``default``)."""
    read: float = Field(default=0.3, ge=0, le=1)
    """When the search is not the ideal one: P(the step reads a document it saw in results instead
    of searching with vague words of the question)."""
    guess: float = Field(default=0.05, ge=0, le=1)
    """P(a forced answer — last step, or no search tool — with evidence missing is still correct)."""
    summary_recall: float = Field(default=0.9, ge=0, le=1)
    """P(a summary of dropped steps keeps one evidence document it covers, so it stays seen)."""


class SimGrading(Spec):
    """How a simulated judge grades a reply (request mode ``grade``, the judge scorer's calls):
    the caller says whether the reply is truly right (its rule-checked verdict, where the task has
    one); the judge passes a wrong reply with ``false_pass`` and fails a right one with
    ``false_fail``, independently per sample. A reply of unknown truth passes with ``unknown_pass``."""

    false_pass: float = Field(default=0.1, ge=0, le=1)
    """P(a sample passes | the reply is wrong)."""
    false_fail: float = Field(default=0.1, ge=0, le=1)
    """P(a sample fails | the reply is right)."""
    unknown_pass: float = Field(default=0.5, ge=0, le=1)
    """P(a sample passes | the caller does not know whether the reply is right)."""
    spread: float = Field(default=0.15, ge=0, le=0.5)
    """Graded scale: the score is drawn uniformly within ± this around 0.8 (pass) or 0.2 (fail)."""
