"""What a suite entry's name runs, decided here and nowhere else.

One protocol for "something the harness runs on a task": a library design (data, run by the
runtime), a per-task designer (code that designs, then runs what it designed) and a program design
(the user's own MAS code, metered at the wire: :class:`masbench.design.program.ProgramDesign`) look
the same to the harness — ``await runnable.run(task, ctx, params, design_sink=...) -> DesignResult``.

The rule (:func:`runnable_kind`): a name registered in :data:`masbench.registry.DESIGNERS` is that
designer, even when a library design has the same name; otherwise the library's design of that
name (or the design file at that path), a program design if its file says ``kind: program``.
``masbench run`` (:func:`resolve_runnable`, once per name) and ``masbench validate``
(:func:`check_suite_designs`, the suite check ``CHECKS["suite.designs"]``) both apply it, so a
suite entry validates as what it runs. Checking imports no designer and no model client.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal, Protocol

from ..library import Library
from ..registry import DESIGNERS
from ..runtime import DesignResult, RunContext
from ..spec import DesignSpec, SuiteSpec
from ..spec.problems import Problem, SpecError, problem_at
from ..spec.program import ProgramSpec
from ..spec.yamlpos import Located

if TYPE_CHECKING:
    from .records import DesignSink

DesignerRunner = Callable[..., Awaitable[Any]]
"""A per-task designer: ``async runner(task, ctx, params, *, design_sink=None) -> DesignResult``."""

RunnableKind = Literal["designer", "program", "design"]


class Runnable(Protocol):
    """A design or a designer, run on one task under ``ctx`` (its gateway, library, budget, sinks)."""

    @property
    def name(self) -> str:
        """The design or designer name a suite lists."""
        ...

    @property
    def kind(self) -> str:
        """``design`` (a library design: a fixed graph), ``designer`` (writes designs per task) or
        ``program`` (the user's own code)."""
        ...

    async def run(self, task: Any, ctx: RunContext, params: dict[str, Any] | None = None, *,
                  design_sink: DesignSink | None = None) -> DesignResult: ...


@dataclass(frozen=True, slots=True)
class LibraryDesign:
    """A design of ``ctx.library``, run by the runtime (it writes no ``designs`` rows)."""

    name: str
    """Design name in the library."""
    kind: str = "design"
    """Always ``design``."""

    async def run(self, task: Any, ctx: RunContext, params: dict[str, Any] | None = None, *,
                  design_sink: DesignSink | None = None) -> DesignResult:
        # straight to the compile cache (the runtime's run_design and compile_design relay to it);
        # imported here: compiling pulls langgraph and the gateway, which checking must not load
        from ..runtime.cache import compiled

        return await compiled(ctx.library.design(self.name), ctx.library, params).run(task, ctx)


@dataclass(frozen=True, slots=True)
class Designer:
    """A per-task designer (see :data:`masbench.registry.DESIGNERS`)."""

    name: str
    """Designer name (``meta-designer``, ``holistic-designer``)."""
    runner: DesignerRunner
    """``async runner(task, ctx, params, *, design_sink=None) -> DesignResult``."""
    kind: str = "designer"
    """Always ``designer``."""

    async def run(self, task: Any, ctx: RunContext, params: dict[str, Any] | None = None, *,
                  design_sink: DesignSink | None = None) -> DesignResult:
        return await self.runner(task, ctx, params, design_sink=design_sink)


def is_designer(name: str) -> bool:
    """Whether ``name`` runs as a per-task designer (code) rather than a library design (data)."""
    return name in DESIGNERS


def runnable_kind(name: str, library: Library) -> RunnableKind | None:
    """What ``name`` runs as: ``designer``, ``program`` or ``design`` (see the module docstring);
    None if it is neither a designer nor a design of ``library``. A library design is loaded and
    checked: an invalid one raises :class:`~masbench.spec.problems.SpecError`."""
    if is_designer(name):
        return "designer"
    try:
        spec = library.get("design", name).spec
    except SpecError:
        if library.has("design", name) or Path(name).is_file():
            raise  # there is such a design, and it is invalid
        return None
    return "program" if isinstance(spec, ProgramSpec) else "design"


def resolve_runnable(name: str, library: Library) -> Runnable:
    """What ``name`` runs. Raises :class:`~masbench.spec.problems.SpecError` (with the place) if it is
    neither a designer nor a loadable library design."""
    kind = runnable_kind(name, library)
    if kind == "designer":
        return Designer(name, DESIGNERS[name])
    if kind == "program":
        from .program import ProgramDesign, program_root  # the endpoint (aiohttp) only when a program runs

        loaded = library.get("design", name)  # loaded by runnable_kind: the library's cached copy
        assert isinstance(loaded.spec, ProgramSpec)
        return ProgramDesign(name, loaded.spec, program_root(loaded.located.file))
    if kind == "design":
        return LibraryDesign(name)
    designs = ", ".join(sorted(library.names("design"))[:30]) or "none"
    raise SpecError([Problem("<library>", 1, 1, "design", f"no design or designer named {name!r} (designs: "
                                                          f"{designs}; designers: {', '.join(DESIGNERS.names())})")])


def _agent_refs(design: DesignSpec) -> list[str]:
    """Every agent name a design's nodes give (``agent:``, ``select:``), loops included."""
    out: list[str] = []
    for v in design.walk():
        if isinstance(v.node.agent, str):
            out.append(v.node.agent)
        if v.node.select is not None:
            out.append(v.node.select)
    return out


def check_suite_designs(suite: SuiteSpec, located: Located, lib: Library) -> list[Problem]:
    """Suite check (``CHECKS["suite.designs"]``): every entry of ``designs:`` is what
    :func:`runnable_kind` finds, and the model aliases its design's agents (a program's ``models``)
    use are the suite's. A designer is taken as it is (its own designs are checked as it writes them)."""
    problems: list[Problem] = []
    aliases = set(suite.models)
    for i, ref in enumerate(suite.designs):
        name = ref if isinstance(ref, str) else ref.design
        path = ("designs", i) if isinstance(ref, str) else ("designs", i, "design")
        try:
            kind = runnable_kind(name, lib)
        except SpecError as exc:
            problems.append(problem_at(located, path, f"design {name!r} is invalid: {exc.problems[0]}"))
            continue
        if kind is None:
            problems.append(problem_at(located, path, f"unknown design {name!r}"))
        elif kind == "program":
            program = lib.program(name)
            assert program is not None
            problems += [problem_at(located, path, f"program {name!r} may call model alias {m!r}, which this "
                                                   "suite's models do not define") for m in program.models if m not in aliases]
        elif kind == "design":
            design = lib.design(name)
            for aname in _agent_refs(design):
                agent = design.agents.get(aname) or (lib.agent(aname) if lib.has("agent", aname) else None)
                if agent is not None and isinstance(agent.model, str) and agent.model not in aliases \
                        and "/" not in agent.model:
                    problems.append(problem_at(located, path, f"design {name!r}: agent {aname!r} uses model alias "
                                                              f"{agent.model!r}, which this suite's models do not define"))
    return problems


__all__ = ["Designer", "DesignerRunner", "LibraryDesign", "Runnable", "RunnableKind", "check_suite_designs",
           "is_designer", "resolve_runnable", "runnable_kind"]
