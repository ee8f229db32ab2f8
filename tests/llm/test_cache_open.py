"""Opening the shared response cache while other processes open it too: worker processes open it
at the same moment, and switching a new file to WAL upgrades a lock where SQLite answers
"database is locked" at once (no busy handler: deadlock avoidance) — the cache must retry, not fail."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
from pathlib import Path

import pytest

from masbench.llm import ResponseCache


class Flaky:
    """A connection whose first ``n`` journal-mode switches answer "database is locked"."""

    def __init__(self, con: sqlite3.Connection, n: int, message: str = "database is locked"):
        self.con, self.n, self.message, self.tries = con, n, message, 0

    def execute(self, sql: str, *args):
        if "journal_mode" in sql:
            self.tries += 1
            if self.tries <= self.n:
                raise sqlite3.OperationalError(self.message)
        return self.con.execute(sql, *args)


def _bare(tmp_path: Path, flaky: Flaky) -> ResponseCache:
    cache = ResponseCache.__new__(ResponseCache)
    cache._db = flaky  # type: ignore[assignment]  # the test's stand-in connection
    return cache


def test_a_locked_switch_to_wal_is_retried(tmp_path: Path) -> None:
    con = sqlite3.connect(str(tmp_path / "c.sqlite"), isolation_level=None)
    flaky = Flaky(con, 3)
    _bare(tmp_path, flaky)._setup()
    assert flaky.tries == 4
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT count(*) FROM responses").fetchone() == (0,)


def test_other_errors_and_a_lock_that_never_clears_still_raise(tmp_path: Path) -> None:
    con = sqlite3.connect(str(tmp_path / "c.sqlite"), isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        _bare(tmp_path, Flaky(con, 1, "disk I/O error"))._setup()
    forever = Flaky(con, 10**9)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _bare(tmp_path, forever)._setup(wait_s=0.2)
    assert forever.tries > 1


def _open(path: str, q) -> None:
    try:
        ResponseCache(path).close()
        q.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        q.put(repr(exc))


@pytest.mark.slow
def test_eight_processes_open_one_new_cache_at_once(tmp_path: Path) -> None:
    ctx = mp.get_context("fork")  # no re-import: the processes start together, as workers do
    for trial in range(3):
        path = str(tmp_path / f"c{trial}.sqlite")
        q = ctx.Queue()
        ps = [ctx.Process(target=_open, args=(path, q)) for _ in range(8)]
        for p in ps:
            p.start()
        for p in ps:
            p.join(60)
        assert [q.get(timeout=5) for _ in ps] == ["ok"] * 8
