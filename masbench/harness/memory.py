"""Give freed memory back to the system: a sharded run's driver drops its tasks once the workers
have them, and its RSS should follow (CPython returns empty arenas, but glibc keeps freed heap
pages mapped until asked)."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc


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


__all__ = ["trim"]
