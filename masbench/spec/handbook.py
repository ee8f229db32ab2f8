"""Skill handbooks as data (kind ``handbook``, ``skills/*.yaml``): a skill taxonomy, per-(model, skill)
competence evidence and cost, provenance — and their semantic checks. What the evidence *means*
(posteriors with hierarchical shrinkage, routing) is :mod:`masbench.routing`."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from .base import Spec
from .model import ModelSpec
from .problems import Problem, problem_at
from .yamlpos import Located

ROOT = "*"
"""Index 0 of a compiled handbook: the model-wide rate (the demand of a call nothing matches)."""


class Indicator(Spec):
    """A weighted indicator: a word or phrase (case-insensitive, whole words) or ``/regex/``."""

    pattern: str = Field(min_length=1)
    """Word/phrase, or a regular expression between slashes (``/\\bhow many\\b/``)."""
    weight: float = Field(default=1.0, gt=0)
    """How much one match adds to the skill's demand score."""


class SkillSpec(Spec):
    """One skill of the taxonomy."""

    description: str = ""
    """What the skill is (shown to an LLM classifier and in ``masbench skills show``)."""
    parent: str | None = None
    """Parent skill id. Default: the dotted prefix (``arith.add`` → ``arith``) if it is in the taxonomy."""
    indicators: list[str | Indicator] = Field(default_factory=list)
    """Keywords/phrases/regexes whose presence in a call's text signals this skill."""
    examples: list[str] = Field(default_factory=list)
    """Example requests that need this skill."""
    active: bool = True
    """False: merged into its parent (routing uses the nearest active ancestor)."""

    @field_validator("indicators")
    @classmethod
    def _regexes_compile(cls, v: list[str | Indicator]) -> list[str | Indicator]:
        for ind in v:
            pat = ind.pattern if isinstance(ind, Indicator) else ind
            if len(pat) >= 2 and pat.startswith("/") and pat.endswith("/"):
                try:
                    re.compile(pat[1:-1])
                except re.error as exc:
                    raise ValueError(f"indicator {pat!r} is not a valid regular expression: {exc}") from None
            elif not pat.strip():
                raise ValueError("an indicator must not be blank")
        return v


class BetaPrior(Spec):
    """A Beta(alpha, beta) prior."""

    alpha: float = Field(default=1.0, gt=0)
    """Prior pseudo-successes."""
    beta: float = Field(default=1.0, gt=0)
    """Prior pseudo-failures."""


class SkillStats(Spec):
    """Evidence and cost of one model on one skill. Counts are fractional (skill-weighted)."""

    wins: float = Field(default=0.0, ge=0)
    """Skill-weighted successes (the Beta posterior's α minus its prior)."""
    losses: float = Field(default=0.0, ge=0)
    """Skill-weighted failures (β minus its prior)."""
    cost_usd: float | None = Field(default=None, ge=0)
    """Mean USD per call on this skill."""
    tokens: float | None = Field(default=None, ge=0)
    """Mean tokens (prompt + completion) per call on this skill."""
    latency_s: float | None = Field(default=None, ge=0)
    """Mean latency per call on this skill, seconds."""
    calls: float = Field(default=0.0, ge=0)
    """Skill-weighted number of calls behind the cost/token/latency means."""


class ModelProfile(Spec):
    """One candidate of the handbook (a model, or a sub-agent design). The key in ``profiles`` is the
    name the router returns."""

    target: str = Field(default="model", min_length=1)
    """What the candidate is, by its kind in the route-target registry
    (:data:`masbench.routing.ROUTE_TARGETS`): ``model`` (a model alias, chosen per call by an agent
    whose ``model`` is ``{route: …}``) or ``design`` (a design run as a sub-agent, chosen per task by
    a ``kind: route`` node); code may register more."""
    model: ModelSpec | None = None
    """How to reach the model if the gateway does not know the alias (id, prices, sim profile)."""
    prior: BetaPrior = Field(default_factory=BetaPrior)
    """Model-level prior on the success rate (e.g. from a public leaderboard); the root of the shrinkage."""
    cost_usd: float | None = Field(default=None, ge=0)
    """Model-wide mean USD per call (the fallback for skills without cost data)."""
    tokens: float | None = Field(default=None, ge=0)
    """Model-wide mean tokens per call."""
    latency_s: float | None = Field(default=None, ge=0)
    """Model-wide mean latency per call, seconds."""
    calls: float = Field(default=0.0, ge=0)
    """Calls behind the model-wide means."""
    skills: dict[str, SkillStats] = Field(default_factory=dict)
    """Skill id → evidence and cost."""
    strengths: list[str] = Field(default_factory=list)
    """Skills where this model is the best value (written by ``skills learn``; informational)."""
    weaknesses: list[str] = Field(default_factory=list)
    """Skills where this model is clearly worse than the pool (informational)."""


class RefinementEvent(Spec):
    """A split or merge of the taxonomy."""

    action: Literal["split", "merge"]
    """``split``: children became active; ``merge``: children folded into their parent."""
    skill: str
    """The parent skill."""
    children: list[str] = Field(default_factory=list)
    """The children concerned."""
    divergence: float = 0.0
    """Largest (over models) standard deviation of the children's posterior means."""
    at: str | None = None
    """ISO timestamp."""


class Provenance(Spec):
    """Where the numbers came from and what learning them cost."""

    source: Literal["manual", "store", "explore", "matrix"] = "manual"
    """How the evidence was gathered."""
    taxonomy_source: Literal["manual", "metadata", "llm", "metadata+llm"] = "manual"
    """Where the skills came from: task metadata, an LLM proposal, or by hand."""
    created: str | None = None
    """ISO timestamp of the first learn."""
    updated: str | None = None
    """ISO timestamp of the last update."""
    store: str | None = None
    """Store file the traces came from."""
    runs: list[str] = Field(default_factory=list)
    """Run ids the traces came from."""
    suite: str | None = None
    """Task suite used for exploration."""
    tasks: int = Field(default=0, ge=0)
    """Distinct tasks behind the evidence."""
    observations: int = Field(default=0, ge=0)
    """(task, model) outcomes behind the evidence."""
    credit: Literal["responsibility", "demand", "whole"] = "responsibility"
    """How a task's outcome was split among its skills (see :mod:`masbench.routing.learn`)."""
    learning_cost_usd: float = Field(default=0.0, ge=0)
    """USD spent learning (exploration calls + LLM taxonomy proposals)."""
    learning_tokens: int = Field(default=0, ge=0)
    """Tokens spent learning."""
    learning_calls: int = Field(default=0, ge=0)
    """Model calls spent learning."""
    simulated: bool = False
    """True if any evidence came from ``sim/`` models: its numbers are SIMULATED."""
    history: list[RefinementEvent] = Field(default_factory=list)
    """Splits and merges, oldest first."""


CostUnit = Literal["usd_per_1k_calls", "relative", "ktokens"]
"""How a handbook states E[c]: USD per 1000 calls, relative to the priciest model, or thousands of
tokens per call (for a pool whose USD cost is 0, e.g. sub-agents on the embedded model)."""


class HandbookSpec(Spec):
    """A skill handbook: taxonomy, per-(model, skill) competence evidence and cost, provenance."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    """Name agents use in ``model: {route: NAME}``."""
    description: str | None = None
    """What pool and tasks this handbook is for."""
    cost_unit: CostUnit = "usd_per_1k_calls"
    """Unit of E[c] in U = Σ w·E[p] − λ·E[c]: USD per 1000 calls; relative to the priciest
    model's mean cost per call (so E[c] ∈ [0, 1] and λ = 0.1 means "10 points of accuracy are worth
    the priciest model's cost"); or ``ktokens``, thousands of tokens per call (λ = 0.1: 10 points
    of accuracy are worth 1000 tokens a task)."""
    shrinkage: float = Field(default=4.0, ge=0)
    """κ: pseudo-count strength with which a skill's rate is pulled toward its parent's."""
    split_threshold: float = Field(default=0.15, ge=0, le=1)
    """A family of sibling skills stays split (active) when some model's posterior means across
    the children have standard deviation ≥ this; below it the children are merged."""
    taxonomy: dict[str, SkillSpec] = Field(default_factory=dict)
    """Skill id (dotted) → skill."""
    profiles: dict[str, ModelProfile] = Field(default_factory=dict)
    """Model alias → profile."""
    provenance: Provenance = Field(default_factory=Provenance)
    """Where the numbers came from."""

    @field_validator("taxonomy")
    @classmethod
    def _dotted_ids(cls, v: dict[str, SkillSpec]) -> dict[str, SkillSpec]:
        for s in v:
            if s == ROOT or not s or any(not part for part in s.split(".")):
                raise ValueError(f"skill id {s!r} must be dotted words like 'arith.add'")
        return v

    def parent_of(self, skill: str) -> str | None:
        """The parent id (explicit, else the dotted prefix if present in the taxonomy)."""
        spec = self.taxonomy.get(skill)
        if spec is not None and spec.parent is not None:
            return spec.parent
        parts = skill.split(".")
        for i in range(len(parts) - 1, 0, -1):
            cand = ".".join(parts[:i])
            if cand in self.taxonomy:
                return cand
        return None


# ----- validation ------------------------------------------------------------------------------
def handbook_problems(hb: HandbookSpec) -> list[tuple[tuple, str]]:
    """Semantic problems as (data path, message): unknown parents, cycles, evidence for unknown
    skills, an empty pool."""
    out: list[tuple[tuple, str]] = []
    for sid, sk in hb.taxonomy.items():
        if sk.parent is not None and sk.parent not in hb.taxonomy:
            out.append((("taxonomy", sid, "parent"), f"unknown parent skill {sk.parent!r}"))
        if sk.parent == sid:
            out.append((("taxonomy", sid, "parent"), "a skill cannot be its own parent"))
    for sid in hb.taxonomy:  # cycles
        seen = {sid}
        cur = hb.parent_of(sid)
        while cur is not None:
            if cur in seen:
                out.append((("taxonomy", sid, "parent"), f"parent chain of {sid!r} loops back to {cur!r}"))
                break
            seen.add(cur)
            cur = hb.parent_of(cur) if cur in hb.taxonomy else None
    for alias, prof in hb.profiles.items():
        for sid in prof.skills:
            if sid not in hb.taxonomy:
                out.append((("profiles", alias, "skills", sid), f"skill {sid!r} is not in the taxonomy"))
    if not hb.profiles:
        out.append((("profiles",), "a handbook needs at least one model profile to route between"))
    return out


def validate_handbook(hb: HandbookSpec) -> list[str]:
    """Human-readable semantic problems (empty list: valid)."""
    return [f"{'.'.join(map(str, p))}: {m}" for p, m in handbook_problems(hb)]


def check_handbook(hb: HandbookSpec, located: Located, library: object = None) -> list[Problem]:
    """The library check for kind ``handbook``: :func:`handbook_problems`, each at its place in the YAML."""
    return [problem_at(located, path, msg) for path, msg in handbook_problems(hb)]
