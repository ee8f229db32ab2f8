"""One protocol for "something the harness runs on a task": a library design (data, run by the
runtime), a per-task designer (code that designs, then runs what it designed) and a program design
(the user's own MAS code, metered at the wire: :class:`masbench.design.program.ProgramDesign`) look
the same to the harness — ``await runnable.run(task, ctx, params, design_sink=...) -> DesignResult``.

The harness turns a suite entry's name into a :class:`Runnable` in one place
(:func:`masbench.harness.resolve.resolve_runnable`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..runtime import DesignResult, RunContext, run_design
from .records import DesignSink
from .per_task import DesignerRunner


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
        return await run_design(self.name, task, ctx, params=params)


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


__all__ = ["Designer", "LibraryDesign", "Runnable"]
