"""Designers that run per task, by the names a suite may list (``designs: [{design: meta-designer,
params: {...}}]``). Each is ``async runner(task, ctx, params, *, design_sink=None) -> DesignResult``,
the same result the runtime returns for a design, so the harness scores and stores it like one."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

DesignerRunner = Callable[..., Awaitable[Any]]


def _meta(task: Any, ctx: Any, params: dict | None = None, *, design_sink=None):
    from .meta import run_meta_designer

    return run_meta_designer(task, ctx, params, design_sink=design_sink)


def _holistic(task: Any, ctx: Any, params: dict | None = None, *, design_sink=None):
    from .holistic import run_holistic_designer

    return run_holistic_designer(task, ctx, params, design_sink=design_sink)


DESIGNERS: dict[str, DesignerRunner] = {"meta-designer": _meta, "holistic-designer": _holistic}
"""Name → per-task designer runner."""


def designer_names() -> list[str]:
    return list(DESIGNERS)


def get_designer(name: str) -> DesignerRunner | None:
    return DESIGNERS.get(name)


__all__ = ["DESIGNERS", "DesignerRunner", "designer_names", "get_designer"]
