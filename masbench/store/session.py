"""One run session: the lifecycle every command that writes a store goes through.

``with RunSession(path) as s:`` takes the store's writer lock (a second writer is refused with
:class:`~.lock.StoreBusy` before anything is opened), opens the store and owns its one
:class:`~.writer.StoreWriter` (``s.writer``, made on first use, flushed at the end). Then either

- ``s.start(run_id, suite, …)`` starts (or resumes) a run of its own, which the session marks at
  its end: ``finished`` when the block ends normally, ``interrupted`` on ``KeyboardInterrupt`` /
  ``asyncio.CancelledError``, ``failed`` with a reason on any other exception — the message of a
  :class:`RunFailed` (e.g. the harness's ``RunAborted``), else ``"Type: message"``; or
- ``s.attach(run_id)`` writes into an existing run (``masbench stats``, ``reprice``, ``route
  outcomes``, a designer added to a harness run), which the session never marks; or neither
  (rows not tied to one run).

A session may also be opened over a store the caller already opened (``RunSession(store)``):
it then takes the lock on that store's file and leaves the store open at the end.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import TracebackType
from typing import Any

from .db import MEMORY_LIMIT, Store
from .lock import WriterLock
from .runs import finish_run, has_run, start_run
from .writer import StoreWriter

REASON_CHARS = 500


class RunFailed(Exception):
    """A run-stopping error whose message is the whole reason recorded in ``runs.reason``."""


def failure_reason(exc: BaseException) -> str:
    """What ``runs.reason`` says about the exception that ended a run."""
    text = str(exc) if isinstance(exc, RunFailed) else f"{type(exc).__name__}: {exc}"
    return text[:REASON_CHARS]


def end_status(exc: BaseException | None) -> tuple[str, str | None]:
    """(status, reason) of a run whose block ended with ``exc`` (None: normally)."""
    if exc is None:
        return "finished", None
    if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)):
        return "interrupted", None
    return "failed", failure_reason(exc)


class RunSession:
    """The writer lock, the open store, its writer and (optionally) the run being written."""

    def __init__(self, store: str | Path | Store, *, what: str | None = None, flush_rows: int = 2000,
                 flush_interval_s: float = 2.0, memory_limit: str = MEMORY_LIMIT):
        """``store``: a store file (opened after the lock is taken, closed at the end) or an open
        :class:`Store`; ``what``: the holder's description in the lock file (default: the command
        line); ``flush_rows`` / ``flush_interval_s``: the writer's batching; ``memory_limit``: the
        opened store's DuckDB memory limit unless ``$MASBENCH_DUCKDB_MEMORY`` is set."""
        self._memory_limit = memory_limit
        self._given = store if isinstance(store, Store) else None
        self.path = Path(store.path) if isinstance(store, Store) else Path(store)
        self.lock = WriterLock(self.path, what)
        self._store: Store | None = self._given
        self._writer: StoreWriter | None = None
        self._flush = (flush_rows, flush_interval_s)
        self.run_id: str | None = None
        """The run written (started or attached), if any."""
        self.owns_run = False
        """The run was started by this session, which marks it at the end."""
        self.status: str | None = None
        """How the session marked its run (after the end)."""

    # ----- lifecycle ----------------------------------------------------------------------------
    def open(self) -> "RunSession":
        """Take the lock (:class:`~.lock.StoreBusy` if another process writes), then open the store."""
        self.lock.acquire()
        if self._store is None:
            try:
                self._store = Store(self.path, memory_limit_default=self._memory_limit)
            except BaseException:
                self.lock.release()
                raise
        return self

    def close(self, exc: BaseException | None = None) -> None:
        """Flush the writer, mark an own run by how the block ended (``exc``), close and unlock.
        A failed final flush fails the run (and is raised when the block itself succeeded)."""
        flush_exc: Exception | None = None
        try:
            if self._writer is not None:
                try:
                    self._writer.flush()
                except Exception as e:  # noqa: BLE001 - rows not written: the run did not finish
                    flush_exc = e
            self._mark(exc or flush_exc)
        finally:
            if self._store is not None and self._given is None:
                self._store.close()
            self.lock.release()
        if flush_exc is not None and exc is None:
            raise flush_exc

    def _mark(self, exc: BaseException | None) -> None:
        if self.owns_run and self.status is None and self._store is not None and self.run_id is not None:
            self.status, reason = end_status(exc)
            finish_run(self._store, self.run_id, self.status, reason)

    def __enter__(self) -> "RunSession":
        return self.open()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(exc)

    # ----- what is written ----------------------------------------------------------------------
    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("the run session is not open")
        return self._store

    @property
    def writer(self) -> StoreWriter:
        """The session's writer (made on first use; flushed when the session ends)."""
        if self._writer is None:
            self._writer = StoreWriter(self.store, flush_rows=self._flush[0], flush_interval_s=self._flush[1])
        return self._writer

    def start(self, run_id: str, suite: str, config: dict[str, Any], models: dict[str, str], simulated: bool,
              command: str = "", transcripts: str | None = None) -> str:
        """Start (or resume) run ``run_id`` as this session's own: it is marked at the end.
        ``transcripts``: the run's transcript mode (``runs.transcripts``)."""
        start_run(self.store, run_id, suite, config, models, simulated, command=command, transcripts=transcripts)
        self.run_id, self.owns_run = run_id, True
        return run_id

    def attach(self, run_id: str) -> str:
        """Write into the existing run ``run_id`` (never marked by this session); ValueError if
        the store has no such run."""
        if not has_run(self.store, run_id):
            raise ValueError(f"no run {run_id!r} in the store")
        self.run_id = run_id
        return run_id

    def share(self) -> None:
        """From here on hold the store's file only while flushing, so readers (``masbench
        status``) get in between flushes; other writers are still refused by the lock."""
        self.store.brief = True
        self.store.release()


__all__ = ["REASON_CHARS", "RunFailed", "RunSession", "end_status", "failure_reason"]
