"""The one place a suite entry's name becomes something to run: a per-task designer (code,
registered in :data:`masbench.registry.DESIGNERS`), a program design (the user's own code, a design
file with ``kind: program``) or a library design (data)."""

from __future__ import annotations

from ..design.runnable import Designer, LibraryDesign, Runnable
from ..design.per_task import get_designer
from ..library import Library
from ..spec.program import ProgramSpec


def resolve_runnable(name: str, library: Library) -> Runnable:
    """What ``name`` runs. Raises :class:`~masbench.spec.problems.SpecError` (with the place) if it is
    neither a designer nor a loadable library design."""
    runner = get_designer(name)
    if runner is not None:
        return Designer(name, runner)
    loaded = library.get("design", name)  # load and check it now, before any call is made
    if isinstance(loaded.spec, ProgramSpec):
        from ..design.program import ProgramDesign, program_root  # the endpoint (aiohttp) only when a program runs

        return ProgramDesign(name, loaded.spec, program_root(loaded.located.file))
    return LibraryDesign(name)


__all__ = ["resolve_runnable"]
