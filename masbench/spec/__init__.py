"""Typed specs for every YAML kind, and JSON Schema export."""

from __future__ import annotations

from ..registry import Registry
from .agent import AgentSpec, AnswerSpec, OutputSpec, RouteSpec
from .base import Spec
from .budget import Budget
from .design import DesignSpec, LoopSpec, NodeSpec, NodeVisit, walk_nodes
from .handbook import HandbookSpec
from .judge import JudgeSpec
from .model import ModelSpec, SimFaults, SimProfile, TokenDist
from .sim import SimDifficulty, SimErrors, SimGrading, SimReaction
from .stats import StatsSpec
from .suite import TRANSCRIPT_MODES, CotScSpec, DesignRef, SuiteSpec, TaskSource, TranscriptMode

KINDS: Registry[type[Spec]] = Registry("kind", {
    "agent": AgentSpec,
    "design": DesignSpec,
    "suite": SuiteSpec,
    "model": ModelSpec,
    "budget": Budget,
    "handbook": HandbookSpec,
})
"""Kind name → spec class (``masbench schema`` and ``validate``). Add one with :func:`register_kind`."""


def register_kind(name: str, cls: type[Spec]) -> type[Spec]:
    """Register another YAML kind (for ``masbench schema`` and ``validate``)."""
    KINDS.add(name, cls, replace=True)
    return cls


def json_schema(kind: str) -> dict:
    """JSON Schema of one kind, with every field documented."""
    cls = KINDS[kind]
    schema = cls.model_json_schema(by_alias=True)
    schema.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
    return schema


__all__ = [
    "AgentSpec", "AnswerSpec", "Budget", "CotScSpec", "DesignRef", "DesignSpec", "HandbookSpec", "JudgeSpec", "KINDS", "LoopSpec",
    "ModelSpec", "NodeSpec", "NodeVisit", "OutputSpec", "RouteSpec", "SimDifficulty", "SimErrors", "SimFaults", "SimGrading",
    "SimProfile", "SimReaction", "Spec", "StatsSpec", "SuiteSpec", "TRANSCRIPT_MODES", "TaskSource", "TokenDist",
    "TranscriptMode", "json_schema",
    "register_kind", "walk_nodes",
]
