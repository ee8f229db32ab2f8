"""The graph runtime: a design (YAML, data) is validated, compiled to a langgraph ``StateGraph``
once per (design, params), and run on one task under an enforced per-task budget.

Public API::

    ctx = RunContext(gateway=gw, library=lib, budget=Budget(per_task_tokens=4000), tags={...},
                     node_sink=rows.append, seed=0)
    result = await run_design("cot-sc", task, ctx, params={"k": 5})   # -> DesignResult

    problems = validate_design(design, located, library)   # also a registered "design" check
    compiled = compile_design(design, library, params)     # cached

Node ops: agent (one call), ``repeat: k`` / ``map`` (parallel ``Send`` fan-outs), ``op: majority``,
``select``, ``loop`` (bounded rounds with a stop condition), ``python`` (a registered function —
see :data:`PYTHON_FUNCS` / :func:`python_func`), ``design`` (a sub-design).
"""

from __future__ import annotations

from typing import Any

from ..spec.design import DesignSpec
from ..spec.problems import Problem
from ..spec.yamlpos import Located
from .analysis import Analysis
from .pyfuncs import PYTHON_FUNCS, CalculatorError, calculate, majority_vote, python_func
from .types import DesignResult, RunContext

# The compiler (langgraph) and executor (gateway → litellm) load on first use, so `masbench
# validate` — which only needs the checks registered below — stays fast.


def compile_design(design: DesignSpec | str, library: Any, params: dict[str, Any] | None = None):
    """Validate and compile a design to a langgraph graph, cached per (design, params, library).
    Raises :class:`~masbench.spec.problems.SpecError` if the design is invalid."""
    from .compiler import compile_design as _compile

    return _compile(design, library, params)


def __getattr__(name: str) -> Any:
    if name in ("CompiledDesign", "clear_cache"):
        from . import compiler

        return getattr(compiler, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def validate_design(design: DesignSpec, located: Located | None, library: Any) -> list[Problem]:
    """Every problem with a design's graph and references, each at its place in the YAML
    (``FILE:LINE:COL: nodes.<node>: message``). Empty when the design can run."""
    return Analysis(design, located, library).problems


def _design_graph_check(design: DesignSpec, located: Located, library: Any) -> list[Problem]:
    # The library's own check already reports unknown agents and sub-designs; do not repeat them.
    return Analysis(design, located, library, check_refs=False).problems


async def run_design(design: DesignSpec | str, task: Any, ctx: RunContext,
                     params: dict[str, Any] | None = None) -> DesignResult:
    """Run a design (a spec, or a name in ``ctx.library``) on one task. Node failures never raise:
    they are recorded and the result's status says how the design degraded. An invalid design
    raises :class:`~masbench.spec.problems.SpecError` before anything runs."""
    if isinstance(design, str):
        design = ctx.library.design(design)
    return await compile_design(design, ctx.library, params).run(task, ctx)


__all__ = [
    "CalculatorError", "CompiledDesign", "DesignResult", "PYTHON_FUNCS", "RunContext", "calculate",
    "clear_cache", "compile_design", "majority_vote", "python_func", "run_design", "validate_design",
]
