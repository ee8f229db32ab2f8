"""Skill-aware routing: skill handbooks learned from traces, cost-aware routing of every agent
call, router evaluation. See ``docs/routing.md``.

Public API::

    HandbookSpec, load_handbook, save_handbook, compile_handbook, validate_handbook
    learn_handbook(matrix, name=...)            # outcome matrix → handbook (EM credit, shrinkage, split/merge)
    explore(pool, tasks) / matrix_from_store(store) / load_matrix(path)   # outcome matrices
    SkillRouter(handbook, lambda_=..., strategy=...)  .choose(agent, messages, task) / .achoose(...)
    RouteHook(library, gateway, sink)           # what RunContext.route calls (agents' calls and route nodes)
    ROUTE_TARGETS                               # candidate kinds: model (per call), design (sub-agent, per task)
    fill_outcomes(store, run_id)                # routing_decisions.outcome from results
    evaluate(matrix) / format_table / plot_pareto   # masbench route eval
    metrics: aiq, apgr, cpt, pgr, routing_entropy, oracle_choice

The handbook YAML kind itself (and its semantic check) is data: :mod:`masbench.spec.handbook`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..spec.handbook import (
    HandbookSpec,
    Indicator,
    ModelProfile,
    Provenance,
    SkillSpec,
    SkillStats,
    handbook_problems,
    validate_handbook,
)
from .demand import IndicatorMatcher, LLMDemandClassifier, infer_demand, learn_indicators
from .handbook import CompiledHandbook, compile_handbook, handbook_yaml, load_handbook, save_handbook
from .metrics import aiq, apgr, cpt, oracle_choice, pgr, routing_entropy
from .router import Decision, RouteHook, SkillRouter, credit, fill_outcomes, score_batch
from .targets import ROUTE_TARGETS, DesignTarget, ModelTarget, RouteTarget, prepare_candidates

if TYPE_CHECKING:
    from .evaluation import EvalResult, evaluate, format_table, plot_pareto
    from .learn import learn_handbook, propose_taxonomy, refine
    from .matrix import aexplore, explore, load_matrix, matrix_from_store, save_matrix, to_arrays

_LAZY = {"evaluation": ("EvalResult", "evaluate", "format_table", "plot_pareto"),
         "learn": ("learn_handbook", "propose_taxonomy", "refine"),
         "matrix": ("aexplore", "explore", "load_matrix", "matrix_from_store", "save_matrix", "to_arrays")}


def __getattr__(name: str) -> object:
    """Evaluation, learning and outcome matrices are imported on first use: they work on pandas
    frames (~0.3 s of import), which a run's calls, routed through :class:`RouteHook` in every
    worker process, never need."""
    for module, names in _LAZY.items():
        if name in names:
            return getattr(importlib.import_module(f"{__name__}.{module}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ROUTE_TARGETS", "DesignTarget", "ModelTarget", "RouteTarget", "prepare_candidates",
    "CompiledHandbook", "Decision", "EvalResult", "HandbookSpec", "Indicator", "IndicatorMatcher", "LLMDemandClassifier",
    "ModelProfile", "Provenance", "RouteHook", "SkillRouter", "SkillSpec", "SkillStats", "aexplore", "aiq", "apgr",
    "compile_handbook", "cpt", "credit", "evaluate", "explore", "format_table", "fill_outcomes", "handbook_problems", "handbook_yaml",
    "infer_demand", "learn_handbook", "learn_indicators", "load_handbook", "load_matrix", "matrix_from_store",
    "oracle_choice", "pgr", "plot_pareto", "propose_taxonomy", "refine", "routing_entropy", "save_handbook", "save_matrix",
    "score_batch", "to_arrays", "validate_handbook",
]
