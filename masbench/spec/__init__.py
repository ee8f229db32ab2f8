"""Typed specs for every YAML kind, and JSON Schema export.

The handbook kind (:mod:`.handbook`) is imported the first time it is asked for (``KINDS["handbook"]``,
``HandbookSpec``): checking or running a suite does not build it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports
from ..registry import Registry
from .agent import AgentSpec, AnswerSpec, OutputSpec, RouteSpec
from .base import Spec
from .budget import Budget
from .design import DesignSpec, LoopSpec, NodeSpec, NodeVisit, walk_nodes
from .judge import JudgeSpec
from .model import ModelSpec, SimFaults, SimProfile, TokenDist
from .program import ProgramSpec
from .sim import SimDifficulty, SimErrors, SimGrading, SimReaction
from .stats import StatsSpec
from .suite import TRANSCRIPT_MODES, CotScSpec, DesignRef, SuiteSpec, TaskSource, TranscriptMode

if TYPE_CHECKING:
    from .handbook import HandbookSpec

__getattr__ = lazy_exports(__name__, {"HandbookSpec": "handbook"}, globals())

KINDS: Registry[type[Spec]] = Registry("kind", {
    "agent": AgentSpec,
    "design": DesignSpec,
    "suite": SuiteSpec,
    "model": ModelSpec,
    "budget": Budget,
    "handbook": "masbench.spec.handbook:HandbookSpec",
})
"""Kind name → spec class (``masbench schema`` and ``validate``). Add one with :func:`register_kind`."""


def register_kind(name: str, cls: type[Spec]) -> type[Spec]:
    """Register another YAML kind (for ``masbench schema`` and ``validate``)."""
    KINDS.add(name, cls, replace=True)
    return cls


DESIGN_FORMS: Registry[type[Spec]] = Registry("design form", {"program": ProgramSpec})
"""A design file's ``kind:`` value → the spec class it is validated with instead of
:class:`DesignSpec` (a design that is not a graph of nodes: ``kind: program``). Its semantic
checks are registered under the form's name (``CHECKS["program"]``)."""


def spec_class(kind: str, data: object) -> tuple[type[Spec], str]:
    """The spec class a file of ``kind`` with ``data`` validates as, and the name its checks are
    registered under: the kind's own class, or for a design file whose ``kind:`` names a
    :data:`DESIGN_FORMS` entry, that form's class and name."""
    if kind == "design" and isinstance(data, dict):
        form = data.get("kind")
        if isinstance(form, str) and form in DESIGN_FORMS:
            return DESIGN_FORMS[form], form
    return KINDS[kind], kind


def json_schema(kind: str) -> dict:
    """JSON Schema of one kind, with every field documented."""
    cls = KINDS[kind]
    schema = cls.model_json_schema(by_alias=True)
    schema.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
    return schema


__all__ = [
    "AgentSpec", "AnswerSpec", "Budget", "CotScSpec", "DESIGN_FORMS", "DesignRef", "DesignSpec", "HandbookSpec", "JudgeSpec",
    "KINDS", "LoopSpec", "ModelSpec", "NodeSpec", "NodeVisit", "OutputSpec", "ProgramSpec", "RouteSpec", "SimDifficulty",
    "SimErrors", "SimFaults", "SimGrading",
    "SimProfile", "SimReaction", "Spec", "StatsSpec", "SuiteSpec", "TRANSCRIPT_MODES", "TaskSource", "TokenDist",
    "TranscriptMode", "json_schema",
    "register_kind", "spec_class", "walk_nodes",
]
