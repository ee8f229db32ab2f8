"""Designers that run per task, by the names a suite may list (``designs: [{design: meta-designer,
params: {...}}]``). Each is ``async runner(task, ctx, params, *, design_sink=None) -> DesignResult``,
the same result the runtime returns for a design, so the harness scores and stores it like one.

The registry itself is :data:`masbench.registry.DESIGNERS` (layer 0, lazy ``"module:attr"``
entries pointing here), so ``masbench validate`` checks suite references without importing any
designer; this module is what those entries load."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from ..registry import DESIGNERS
from .holistic import run_holistic_designer as run_holistic
from .meta import run_meta_designer as run_meta

DesignerRunner = Callable[..., Awaitable[Any]]


def designer_names() -> list[str]:
    """Every registered designer name (nothing is imported)."""
    return DESIGNERS.names()


def is_designer(name: str) -> bool:
    """Whether ``name`` is a per-task designer (code) rather than a library design (data)."""
    return name in DESIGNERS


def get_designer(name: str) -> DesignerRunner | None:
    """The runner registered as ``name``, or None."""
    return DESIGNERS[name] if name in DESIGNERS else None


__all__ = ["DESIGNERS", "DesignerRunner", "designer_names", "get_designer", "is_designer", "run_holistic", "run_meta"]
