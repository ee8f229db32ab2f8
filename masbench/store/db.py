"""Opening a store: seed a new file from the template, connect, migrate forward, (re)create views."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from . import schema as _schema
from .template import seed_from_template
from .views import create_views


MEMORY_LIMIT_ENV = "MASBENCH_DUCKDB_MEMORY"
MEMORY_LIMIT = "512MB"
"""DuckDB's memory limit on every connection a :class:`Store` opens (``$MASBENCH_DUCKDB_MEMORY``
overrides it, e.g. ``2GB``): what DuckDB may hold for its buffers and its operators' working
memory (the views' joins, the merge) before it spills to its temp directory (``<store>.tmp``
beside the file). DuckDB's default, 80% of RAM, let a driver's memory grow with the store."""


DRIVER_MEMORY_LIMIT = "128MB"
"""DuckDB's memory limit on a suite run's own store (the driver's connection), unless
``$MASBENCH_DUCKDB_MEMORY`` says otherwise: what it caches of the store it writes, merges into and
computes the statistics from is bounded whatever the run's size (the default 512 MB held the
whole store of a 100,000-task run: 212 MB). Its reads are sliced to fit (the curve a page of cells
at a time, the paired tests a slice of tasks); beyond it DuckDB spills to ``<store>.tmp``."""


STATS_MEMORY_LIMITS = ("64MB", "128MB", "256MB", "512MB")
"""DuckDB's memory limits for a run driver's statistics (the curve and the paired tests), tried in
order: the first unless DuckDB runs out of memory under it (each is read in slices: a page of pool
cells, a slice of tasks, so their working memory is a slice's). What DuckDB caches grows with the
store up to the limit: on a 100,000-task store the curve's peak RSS was 380 MB at 128 MB and 321 at
64; at 32 MB the paired tests' reads run out of memory whatever the slice (an operator of the
paired views needs more)."""


def memory_limit(default: str = MEMORY_LIMIT) -> str:
    """The memory limit a new connection gets: ``$MASBENCH_DUCKDB_MEMORY`` if set, else
    ``default`` (a malformed value is an error naming the variable)."""
    value = (os.environ.get(MEMORY_LIMIT_ENV) or default).strip()
    if not re.fullmatch(r"\d+(\.\d+)?\s*[KMGT]i?B", value, re.IGNORECASE):
        raise ValueError(f"{MEMORY_LIMIT_ENV}={value!r}: give a size such as 512MB or 2GB")
    return value


class Store:
    """A DuckDB file holding runs, calls, results and the views over them.

    One process writes a store at a time (DuckDB's rule, and :class:`~.lock.WriterLock` for
    runs); ``--workers`` give each worker its own file and merge them (see :func:`merge_into`).
    All access goes through ``lock``.

    DuckDB locks the whole file while a connection is open, so a running writer sets ``brief``:
    its :class:`~.writer.StoreWriter` then :meth:`release`-s the connection after every flush,
    and :attr:`con` reconnects on the next use. Readers (``masbench runs``/``status``) open
    read-only, read, and close; either side waits up to ``lock_timeout_s`` for the other.
    """

    def __init__(self, path: str | Path = ":memory:", read_only: bool = False, lock_timeout_s: float = 30.0,
                 memory_limit_default: str = MEMORY_LIMIT):
        """``memory_limit_default``: DuckDB's memory limit on every connection opened, unless
        ``$MASBENCH_DUCKDB_MEMORY`` is set (:data:`DRIVER_MEMORY_LIMIT` for a run's driver)."""
        self.path = str(path)
        self.memory_limit_default = memory_limit_default
        self.read_only = read_only
        self.lock_timeout_s = lock_timeout_s
        self.brief = False
        """Hold the connection only while writing (set by a run; see the class docstring)."""
        self.reconnects = 0
        seeded = False
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            if not read_only:
                seeded = seed_from_template(Path(self.path), _build_template)
        self.lock = threading.RLock()
        self._con: duckdb.DuckDBPyConnection | None = self._connect()
        if not read_only:
            if seeded:  # the template's schema was applied when it was made (maybe days ago): now
                self.con.execute("UPDATE schema_version SET applied_at = current_timestamp")
            self.migrate()
            create_views(self.con)

    def _connect(self) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.005
        while True:
            try:
                con = duckdb.connect(self.path, read_only=self.read_only)
            except duckdb.IOException as exc:  # the other side holds the file for a moment
                if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
                continue
            # SET, not connect(config=): a database already open in this process with another
            # configuration would refuse the connection
            con.execute(f"SET memory_limit = '{memory_limit(self.memory_limit_default)}'")
            return con

    def set_memory_limit(self, value: str) -> None:
        """DuckDB's memory limit from now on: the open connection's and every one opened later
        (``$MASBENCH_DUCKDB_MEMORY``, when set, still wins)."""
        with self.lock:
            self.memory_limit_default = value
            if self._con is not None:
                self._con.execute(f"SET memory_limit = '{memory_limit(value)}'")

    @staticmethod
    def out_of_memory(exc: BaseException) -> bool:
        """Whether ``exc`` is DuckDB's running out of its memory limit."""
        return isinstance(exc, duckdb.OutOfMemoryException)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The connection, (re)opened on demand."""
        if self._con is None:
            with self.lock:
                if self._con is None:
                    self._con = self._connect()
                    self.reconnects += 1
        return self._con

    def release(self) -> None:
        """Close the connection (DuckDB checkpoints) so other processes can open the file; the
        next use reconnects. A no-op for ``:memory:``."""
        if self.path == ":memory:":
            return
        with self.lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    # ----- schema ----------------------------------------------------------------------------
    def version(self) -> int:
        """The schema version of the file (0: a new file). Read-only too: then nothing is created."""
        with self.lock:
            if self.read_only:
                if not self.con.execute("SELECT 1 FROM information_schema.tables "
                                        "WHERE table_name = 'schema_version'").fetchall():
                    return 0
            else:
                self.con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER, summary VARCHAR, "
                                 "applied_at TIMESTAMP DEFAULT current_timestamp)")
            v = self.con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0]  # an aggregate: one row
        return int(v or 0)

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The connection inside one transaction, under ``lock``: committed when the block ends,
        rolled back (and the error raised) when it raises."""
        with self.lock:
            con = self.con
            con.begin()
            try:
                yield con
                con.commit()
            except Exception:
                con.rollback()
                raise

    def migrate(self) -> list[int]:
        """Apply every migration newer than the file's version. Returns the versions applied."""
        applied = []
        current = self.version()
        for version, summary, sql in _schema.MIGRATIONS:
            if version <= current:
                continue
            with self.transaction() as con:
                con.execute(sql)
                con.execute("INSERT INTO schema_version(version, summary) VALUES (?, ?)", [version, summary])
            applied.append(version)
        return applied

    def columns(self, table: str) -> list[str]:
        with self.lock:
            return [r[0] for r in self.con.execute(f"DESCRIBE {table}").fetchall()]

    # ----- queries ---------------------------------------------------------------------------
    def sql(self, query: str, params: list[Any] | dict[str, Any] | None = None) -> list[tuple]:
        with self.lock:
            return self.con.execute(query, params or []).fetchall()

    def df(self, query: str, params: list[Any] | dict[str, Any] | None = None):
        """Query → pandas DataFrame."""
        with self.lock:
            return self.con.execute(query, params or []).df()

    def arrays(self, query: str, params: list[Any] | dict[str, Any] | None = None) -> dict[str, Any]:
        """Query → one numpy array a column (a masked array where a column has NULLs; strings as
        object arrays): no pandas frame in between."""
        with self.lock:
            return self.con.execute(query, params or []).fetchnumpy()

    def close(self) -> None:
        with self.lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _build_template(path: Path) -> None:
    """A complete new store at ``path``, made the usual way (migrations, views)."""
    Store(path).close()
