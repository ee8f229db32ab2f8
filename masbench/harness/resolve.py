"""The one place a suite entry's name becomes something to run: a per-task designer (code,
registered in :data:`masbench.registry.DESIGNERS`) or a library design (data)."""

from __future__ import annotations

from typing import Any

from ..design.runnable import Designer, LibraryDesign, Runnable
from ..design.per_task import get_designer
from ..library import Library


def resolve_runnable(name: str, library: Library) -> Runnable:
    """What ``name`` runs. Raises :class:`~masbench.spec.problems.SpecError` (with the place) if it is
    neither a designer nor a loadable library design."""
    runner = get_designer(name)
    if runner is not None:
        return Designer(name, runner)
    library.get("design", name)  # load and check it now, before any call is made
    return LibraryDesign(name)


__all__ = ["resolve_runnable"]
