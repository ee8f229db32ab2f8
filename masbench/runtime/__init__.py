"""The graph runtime: a design (YAML, data) is checked, compiled once per (design, params) — each
node into its op's own node — and run on one task under an enforced per-task budget, its nodes
scheduled directly, in a straight line or by langgraph (:attr:`RunContext.scheduler`).

Public API::

    ctx = RunContext(gateway=gw, library=lib, budget=Budget(per_task_tokens=4000), tags={...},
                     node_sink=rows.append, seed=0)
    result = await run_design("cot-sc", task, ctx, params={"k": 5})   # -> DesignResult

    problems = check_design(design, located, library)   # the library's load-time "design" check
    compiled = compile_design(design, library, params)   # cached

Node ops: agent (one call), ``repeat: k`` / ``map`` (parallel ``Send`` fan-outs), ``op: majority``,
``select``, ``loop`` (bounded rounds with a stop condition), ``python`` (a registered function —
see :data:`PYTHON_FUNCS` / :func:`python_func`), ``design`` (a sub-design) — each an :class:`Op`
registered by kind in :data:`OPS`; ``OPS.add("mine", MyOp())`` adds one (a node ``kind: mine``).

Where things live: :mod:`.design_analysis` (``check_design``, with :mod:`.node_check`, :mod:`.links`, :mod:`.refs`
and each op's check; :mod:`.reads` is the name reader the design package shares) checks a design;
:mod:`.bind` compiles each checked node into its op's own node (:mod:`.ops`, one module per op:
its ``Op`` and its ``Node``); the schedulers run those nodes — one node directly, a straight-line
design on :mod:`.chain`, any shape on langgraph (:mod:`.graph`) — through the same steps
(:mod:`.steps`); :mod:`.scope` holds a run's state; :mod:`.result` assembles the result;
:mod:`.compiled` and :mod:`.cache` tie it together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..lazy import lazy_exports
from ..library import Library
from ..spec.design import DesignSpec
from .design_analysis import check_design
from .ops import OPS, Op, op_of
from .reads import RESERVED, node_reads, sinks, template_refs
from .types import DesignResult, RunContext

if TYPE_CHECKING:
    from .pyfuncs import PYTHON_FUNCS, CalculatorError, calculate, majority_vote, python_func

# The python functions (and the calculator they use) load on first use: checking a design with no
# ``python`` node does not need them.
__getattr__ = lazy_exports(__name__, {name: "pyfuncs" for name in (
    "PYTHON_FUNCS", "CalculatorError", "calculate", "majority_vote", "python_func")}, globals())


def _cache():
    # Start-up time: compiling imports the gateway (litellm), which `masbench validate` — it only
    # needs check_design — must not pay for. Loaded on first use.
    from . import cache

    return cache


def compile_design(design: DesignSpec | str, library: Library, params: dict[str, Any] | None = None):
    """Check and compile a design to a langgraph graph, cached per (design, params, library).
    Raises :class:`~masbench.spec.problems.SpecError` if the design is invalid."""
    return _cache().compile_design(design, library, params)


def clear_cache() -> None:
    """Forget every compiled graph."""
    _cache().clear_cache()


async def run_design(design: DesignSpec | str, task: Any, ctx: RunContext,
                     params: dict[str, Any] | None = None) -> DesignResult:
    """Run a design (a spec, or a name in ``ctx.library``) on one task. Node failures never raise:
    they are recorded and the result's status says how the design degraded. An invalid design
    raises :class:`~masbench.spec.problems.SpecError` before anything runs."""
    if isinstance(design, str):
        design = ctx.library.design(design)
    return await compile_design(design, ctx.library, params).run(task, ctx)


__all__ = [
    "CalculatorError", "DesignResult", "OPS", "Op", "PYTHON_FUNCS", "RESERVED", "RunContext",
    "calculate", "check_design", "clear_cache", "compile_design", "majority_vote", "node_reads",
    "op_of", "python_func", "run_design", "sinks", "template_refs",
]
