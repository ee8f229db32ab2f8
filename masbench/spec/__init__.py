"""Typed specs for every YAML kind, and JSON Schema export."""

from __future__ import annotations

from .agent import AgentSpec, AnswerSpec, OutputSpec, RouteSpec
from .base import Spec
from .budget import Budget
from .design import DesignSpec, LoopSpec, NodeSpec
from .model import ModelSpec, SimFaults, SimProfile, TokenDist
from .stats import StatsSpec
from .suite import CotScSpec, DesignRef, SuiteSpec, TaskSource

KINDS: dict[str, type[Spec]] = {
    "agent": AgentSpec,
    "design": DesignSpec,
    "suite": SuiteSpec,
    "model": ModelSpec,
    "budget": Budget,
}
"""Kind name → spec class. Other modules add kinds (e.g. ``handbook``) via :func:`register_kind`."""


def register_kind(name: str, cls: type[Spec]) -> type[Spec]:
    """Register another YAML kind (for ``masbench schema`` and ``validate``)."""
    KINDS[name] = cls
    return cls


def json_schema(kind: str) -> dict:
    """JSON Schema of one kind, with every field documented."""
    cls = KINDS[kind]
    schema = cls.model_json_schema(by_alias=True)
    schema.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
    return schema


__all__ = [
    "AgentSpec", "AnswerSpec", "Budget", "CotScSpec", "DesignRef", "DesignSpec", "KINDS", "LoopSpec",
    "ModelSpec", "NodeSpec", "OutputSpec", "RouteSpec", "SimFaults", "SimProfile", "Spec", "StatsSpec", "SuiteSpec",
    "TaskSource", "TokenDist", "json_schema", "register_kind",
]
