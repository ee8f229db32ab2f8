"""What runs a run's cells: one interface, one registered kind per engine.

An :class:`Engine` is made once per run from an :class:`EngineContext` (the run session, the
prepared suite, the progress counters and display) and asked to :meth:`Engine.run` lists of cells,
each to the end — the whole run, or a ``--until-decided`` batch. Where the cells run is the
engine's: ``local`` (this process), ``processes`` (``--workers N`` local processes, each writing a
DuckDB part the parent merges) or ``ray`` (Ray tasks on a cluster, parts merged the same way).
They are registered by name in :data:`ENGINES` (``masbench run --engine NAME``); a third-party
engine registers itself there too. Resume needs nothing of an engine: a cell is done once its
rows are in the store; an engine only has to merge every part it wrote (also a killed run's,
which :func:`~.engine_parts.merge_parts` picks up at the next start).

Every engine owns the run's rate limiter (:mod:`masbench.llm.limits`), so the models' ``rpm``,
``tpm`` and ``max_in_flight`` hold across all its workers, and reports one progress for the whole
run: the counters, the display, and the live file ``masbench status`` reads (:mod:`.live`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from ..llm.limits import Limits, RateLimiter
from ..registry import ENGINES
from ..store import LiveBoard, RunSession, describe_snapshot
from .cells import Cell
from .prepare import Prepared, RunOptions
from .progress import Progress

def engine_name(opts: RunOptions) -> str:
    """``--engine``, else ``processes`` with ``--workers`` > 1, else ``local``."""
    return opts.engine or ("processes" if opts.workers > 1 else "local")


@dataclass
class EngineContext:
    """What every engine is given: the run, where its rows go, how progress is shown."""

    opts: RunOptions
    prep: Prepared
    run_id: str
    session: RunSession
    store_path: Path
    use_cache: bool
    concurrency: int
    progress: Progress
    display: Any
    span: Any
    stats: dict[str, Any] = field(default_factory=dict)
    """The run's gateway totals, summed over workers (the display and the live file read it)."""
    limits: Callable[[], dict[str, dict[str, Any]]] | None = None
    """The run limiter's snapshot (set by the engine that holds it)."""
    board: LiveBoard | None = None
    shards: dict[int, dict[str, Any]] = field(default_factory=dict)
    """A sharded run's workers: each one's last report (done, failed, pid), for the live file."""
    _limiter: RateLimiter | None = None

    @property
    def cache_path(self) -> Path:
        """The run's response cache, beside its store (``runs/x.duckdb`` → ``runs/x.cache.sqlite``)."""
        return self.store_path.with_suffix(".cache.sqlite")

    def limited(self) -> bool:
        """Whether any model of the suite sets ``rpm``, ``tpm`` or ``max_in_flight``."""
        return any(Limits.of(m) is not None for m in self.prep.models.values())

    def local_limiter(self) -> RateLimiter | None:
        """A limiter on this process's loop when the suite has limits (its snapshot feeds the display)."""
        if not self.limited():
            return None
        if self._limiter is None:
            self._limiter = RateLimiter()
            self.limits = self._limiter.snapshot
        return self._limiter

    def tick(self) -> None:
        """Progress changed: refresh the limits text, the display and the live file."""
        if self.limits is not None:
            self.stats["limits"] = describe_snapshot(self.limits())
        if self.display:
            self.display.update()
        if self.board is not None:
            self.board.write(self.progress, self.stats, self.limits() if self.limits else None, self.shards)


class Engine(Protocol):
    """Runs lists of cells of one run."""

    def __init__(self, ctx: EngineContext) -> None: ...

    async def run(self, cells: list[Cell]) -> None:
        """Run these cells to the end; their rows are in the store when it returns (or raises). The
        list is the engine's: a sharding engine empties it once the cells are in their shards."""
        ...

    async def aclose(self) -> dict[str, Any]:
        """Release what the engine holds; the run's gateway totals."""
        ...


class EngineUnavailable(RuntimeError):
    """The engine asked for cannot run here (its optional extra is not installed); says how to fix."""


def engine_class(opts: RunOptions) -> type[Engine]:
    """The class of the engine ``opts`` names, checked usable (an engine class may define a static
    ``require(opts)`` that raises :class:`EngineUnavailable`); an unknown name is a ``RegistryError``."""
    cls = ENGINES[engine_name(opts)]
    require = getattr(cls, "require", None)
    if require is not None:
        require(opts)
    return cls


__all__ = ["ENGINES", "Engine", "EngineContext", "EngineUnavailable", "engine_class", "engine_name"]
