"""Opening a store: connect, migrate forward, (re)create views."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import duckdb

from . import schema as _schema
from .views import create_views


class Store:
    """A DuckDB file holding runs, calls, results and the views over them.

    One process writes a store at a time (DuckDB's rule); ``--workers`` give each worker its own
    file and merge them (see :func:`merge_into`). All access goes through ``lock``.
    """

    def __init__(self, path: str | Path = ":memory:", read_only: bool = False):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(self.path, read_only=read_only)
        self.lock = threading.RLock()
        if not read_only:
            self.migrate()
            create_views(self.con)

    # ----- schema ----------------------------------------------------------------------------
    def version(self) -> int:
        with self.lock:
            self.con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER, summary VARCHAR, "
                             "applied_at TIMESTAMP DEFAULT current_timestamp)")
            v = self.con.execute("SELECT max(version) FROM schema_version").fetchone()[0]
        return int(v or 0)

    def migrate(self) -> list[int]:
        """Apply every migration newer than the file's version. Returns the versions applied."""
        applied = []
        current = self.version()
        for version, summary, sql in _schema.MIGRATIONS:
            if version <= current:
                continue
            with self.lock:
                self.con.execute("BEGIN TRANSACTION")
                try:
                    self.con.execute(sql)
                    self.con.execute("INSERT INTO schema_version(version, summary) VALUES (?, ?)", [version, summary])
                    self.con.execute("COMMIT")
                except Exception:
                    self.con.execute("ROLLBACK")
                    raise
            applied.append(version)
        return applied

    def columns(self, table: str) -> list[str]:
        with self.lock:
            return [r[0] for r in self.con.execute(f"DESCRIBE {table}").fetchall()]

    # ----- queries ---------------------------------------------------------------------------
    def sql(self, query: str, params: list[Any] | None = None) -> list[tuple]:
        with self.lock:
            return self.con.execute(query, params or []).fetchall()

    def df(self, query: str, params: list[Any] | None = None):
        """Query → pandas DataFrame."""
        with self.lock:
            return self.con.execute(query, params or []).df()

    def close(self) -> None:
        with self.lock:
            self.con.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def merge_into(target: Store, part_path: str | Path) -> dict[str, int]:
    """Copy every row of a worker's store file into ``target`` (one transaction). Returns rows
    copied per table."""
    counts = {}
    with target.lock:
        target.con.execute(f"ATTACH '{Path(part_path).as_posix()}' AS part")
        try:
            target.con.execute("BEGIN TRANSACTION")
            for t in _schema.TABLES:
                if t == "runs":
                    continue
                n = target.con.execute(f"SELECT count(*) FROM part.{t}").fetchone()[0]
                target.con.execute(f"INSERT INTO {t} BY NAME SELECT * FROM part.{t}")
                counts[t] = int(n)
            target.con.execute("COMMIT")
        except Exception:
            target.con.execute("ROLLBACK")
            raise
        finally:
            target.con.execute("DETACH part")
    return counts
