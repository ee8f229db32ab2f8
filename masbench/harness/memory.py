"""Give freed memory back to the system between a run's phases, so the driver's peak is its
largest phase's, not their sum (CPython returns empty arenas, but glibc keeps freed heap pages
mapped until asked): the driver closes the store's connection after the merge and after each
statistic (DuckDB keeps the blocks it read or wrote cached up to its memory limit while a
connection is open; the next use reopens it). A sharding driver never holds the suite's tasks
(:func:`~masbench.harness.prepare.prepare` with ``tasks=False``)."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..store import Store

T = TypeVar("T")


def trim() -> bool:
    """Collect garbage, then ask glibc to return the heap's free pages (``malloc_trim(0)``).
    True when glibc did; False where there is no glibc (macOS, musl): a no-op there."""
    gc.collect()
    fn = _glibc("malloc_trim", [ctypes.c_size_t])
    if fn is None:
        return False
    fn(0)
    return True


def _glibc(name: str, argtypes: list) -> Any:
    """glibc's function ``name`` (returning an int), or None where there is no glibc."""
    lib = ctypes.util.find_library("c")
    if not lib:
        return None
    try:
        fn = getattr(ctypes.CDLL(lib), name)
    except (OSError, AttributeError):
        return None
    fn.argtypes = argtypes
    fn.restype = ctypes.c_int
    return fn


M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter: blocks at least this large are mapped apart (and unmapped when freed)."""
MMAP_THRESHOLD_BYTES = 128 * 1024
"""glibc's starting threshold, kept fixed for a run's driver."""


def fixed_mmap_threshold() -> bool:
    """Keep glibc's mmap threshold at 128 KB for this process. glibc raises it (up to 32 MB) each
    time a mapped block is freed, so a phase's large arrays (a slice's columns, a cell's frame)
    come from the heap afterwards and their freed pages stay in the RSS; fixed, every array past
    128 KB goes back to the system when freed. Measured on the paired tests of a 100,000-task
    store: peak RSS 364 → 331 MB (10,000 tasks: 291 → 277 MB), the same rows. True when glibc
    took it; False where there is no glibc: a no-op there."""
    fn = _glibc("mallopt", [ctypes.c_int, ctypes.c_int])
    return fn is not None and fn(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1


def settle(store: Store) -> None:
    """Close ``store``'s connection (reopened on its next use; a no-op for ``:memory:``) and
    :func:`trim`."""
    store.release()
    trim()


def under_limits(store: Store, fn: Callable[[], T], limits: Sequence[str],
                 note: Callable[[str], None] | None = None) -> T:
    """``fn()`` with DuckDB's memory limit at ``limits[0]``; where DuckDB runs out of memory, the
    store's connection is let go (a write it broke is rolled back on reopening) and ``fn`` runs
    again under the next limit, said through ``note``. ``fn`` must be safe to rerun (the curve and
    the paired tests delete their rows first). The last limit's error is raised; with
    ``$MASBENCH_DUCKDB_MEMORY`` set, that limit is the only one tried."""
    from ..store.db import MEMORY_LIMIT_ENV  # deferred: memory.py loads before the store is needed

    steps = list(limits[:1]) if os.environ.get(MEMORY_LIMIT_ENV) else list(limits)
    for i, limit in enumerate(steps):
        store.set_memory_limit(limit)
        try:
            return fn()
        except Exception as exc:
            if i + 1 == len(steps) or not store.out_of_memory(exc):
                raise
            if note:
                note(f"DuckDB ran out of memory at {limit}; again at {steps[i + 1]}")
            settle(store)
    raise AssertionError("unreachable: at least one limit")


__all__ = ["fixed_mmap_threshold", "settle", "trim", "under_limits"]
