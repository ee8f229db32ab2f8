"""One writer per store: an advisory lock file beside the DuckDB file, held by the process that
runs into it for as long as it runs. A second writer is refused at once with the store and the
holder named, before it touches anything; readers never take it (they share the store with the
writer, which holds its DuckDB connection only while it flushes — see :class:`~.db.Store`).
The kernel drops the lock when the holder dies, SIGKILL included."""

from __future__ import annotations

import fcntl
import os
import socket
import sys
import time
from pathlib import Path


class StoreBusy(RuntimeError):
    """Another process is writing this store."""


class WriterLock:
    """``with WriterLock(store_path):`` — the exclusive right to write the store."""

    def __init__(self, store_path: str | Path, what: str | None = None):
        self.path = Path(str(store_path) + ".lock")
        self.what = what or " ".join(Path(a).name if i == 0 else a for i, a in enumerate(sys.argv))
        self._fh = None

    def holder(self) -> str:
        """Who holds (or last held) the lock, as written in the lock file."""
        try:
            return self.path.read_text(encoding="utf-8").strip() or "unknown process"
        except OSError:
            return "unknown process"

    def acquire(self) -> "WriterLock":
        if self.path.name == ":memory:.lock":  # an in-memory store has one writer by construction
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            store = str(self.path)[:-len(".lock")]
            raise StoreBusy(f"store {store} is being written by {self.holder()}; wait for it to finish "
                            "(watch it with `masbench status`) or use another --store") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%H:%M:%S')} ({self.what})\n")
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

    def __enter__(self) -> "WriterLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


__all__ = ["StoreBusy", "WriterLock"]
