"""Helpers for the view tests over hand-built rows: a bare DuckDB with the store's tables and only
the views a test reads (plus those they read), created from the view registry at test time (so
benchmarks/sql_mutation.py's mutants reach them), and row inserts by column name."""

from __future__ import annotations

import duckdb
import pytest

from masbench.store import schema, views


def _needed(names: tuple[str, ...]) -> list[str]:
    """The named views and every view they read, in the registry's creation order."""
    want, todo = set(), list(names)
    while todo:
        n = todo.pop()
        if n in want:
            continue
        want.add(n)
        body = views.VIEWS[n].lower()
        todo += [m for m in views.VIEWS if m != n and m in body and m not in want]
    return [n for n in views.VIEWS if n in want]


class ViewDB:
    """Bare DuckDB connections with the store's tables and chosen views; inserts and reads by name."""

    def __init__(self) -> None:
        self.cons: list[duckdb.DuckDBPyConnection] = []

    def make(self, *names: str) -> duckdb.DuckDBPyConnection:
        """A connection with every migration applied and the named views (and those they read)."""
        con = duckdb.connect()
        for _, _, sql in schema.MIGRATIONS:
            con.execute(sql)
        for n in _needed(names):
            con.execute(f"CREATE VIEW {n} AS {views.VIEWS[n]}")
        self.cons.append(con)
        return con

    @staticmethod
    def insert(con: duckdb.DuckDBPyConnection, table: str, *rows: dict) -> None:
        """Insert rows given as {column: value} (other columns NULL); a run of rows with the same
        columns goes in one statement."""
        i = 0
        while i < len(rows):
            j = i + 1
            while j < len(rows) and list(rows[j]) == list(rows[i]):
                j += 1
            cols, batch = list(rows[i]), rows[i:j]
            one = f"({', '.join('?' for _ in cols)})"
            con.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES {', '.join(one for _ in batch)}",
                        [v for r in batch for v in r.values()])
            i = j

    @staticmethod
    def rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict]:
        """Query → list of {column: value}."""
        cur = con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def _view_db():
    db = ViewDB()
    yield db
    for c in db.cons:
        c.close()


@pytest.fixture
def view_db():
    """A :class:`ViewDB`; its connections are closed after the test."""
    yield from _view_db()


@pytest.fixture(scope="module")
def view_db_module():
    """A :class:`ViewDB` for rows that a module's tests only read; closed after the module."""
    yield from _view_db()
