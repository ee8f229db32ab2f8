"""Designers that run per task, by the names a suite may list (``designs: [{design: meta-designer,
params: {...}}]``). Each is ``async runner(task, ctx, params, *, design_sink=None) -> DesignResult``,
the same result the runtime returns for a design, so the harness scores and stores it like one.

The entries are lazy (``"module:attr"``): listing the names (``masbench validate`` checks suite
references against them) imports no designer."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from ..registry import Registry

DesignerRunner = Callable[..., Awaitable[Any]]

DESIGNERS: Registry[DesignerRunner] = Registry("designer", {
    "meta-designer": "masbench.design.meta:run_meta_designer",
    "holistic-designer": "masbench.design.holistic:run_holistic_designer",
})
"""Name → per-task designer runner."""


def designer_names() -> list[str]:
    """Every registered designer name (nothing is imported)."""
    return DESIGNERS.names()


def is_designer(name: str) -> bool:
    """Whether ``name`` is a per-task designer (code) rather than a library design (data)."""
    return name in DESIGNERS


def get_designer(name: str) -> DesignerRunner | None:
    """The runner registered as ``name``, or None."""
    return DESIGNERS[name] if name in DESIGNERS else None


__all__ = ["DESIGNERS", "DesignerRunner", "designer_names", "get_designer", "is_designer"]
