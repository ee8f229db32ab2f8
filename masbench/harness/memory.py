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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import Store


def trim() -> bool:
    """Collect garbage, then ask glibc to return the heap's free pages (``malloc_trim(0)``).
    True when glibc did; False where there is no glibc (macOS, musl): a no-op there."""
    gc.collect()
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    fn(0)
    return True


def settle(store: Store) -> None:
    """Close ``store``'s connection (reopened on its next use; a no-op for ``:memory:``) and
    :func:`trim`."""
    store.release()
    trim()


__all__ = ["settle", "trim"]
