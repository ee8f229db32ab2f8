"""Merging a worker's part file into the store: one ``INSERT … SELECT`` per table from the part
attached read-only, in one transaction, and never twice (a part that outlived its merge)."""

from __future__ import annotations

from pathlib import Path

from . import schema as _schema
from .db import Store


PROBES = (("SELECT call_id FROM part.calls LIMIT 1", "SELECT 1 FROM calls WHERE call_id = ? LIMIT 1"),
          ("SELECT run_id, design, task_id, seed FROM part.results LIMIT 1",
           "SELECT 1 FROM results WHERE run_id = ? AND design = ? AND task_id = ? AND seed = ? LIMIT 1"),
          ("SELECT run_id, task_id, seed, sample_index FROM part.pool LIMIT 1",
           "SELECT 1 FROM pool WHERE run_id = ? AND task_id = ? AND seed = ? AND sample_index = ? LIMIT 1"))
"""(the part's first row of a table, the store's row with its key): a call id, else a result's or a
pool sample's key. The probes' SQL, the attach and the threads setting are module text (checked by
tests/store/test_merge.py over hand-built parts), not built in the functions below."""

# the merge's statements (SQL keywords only change case under mutation: kept out of the function)
_ATTACH = "ATTACH '{path}' AS part (READ_ONLY)"
_THREADS = "SELECT current_setting('threads')"
_SET_THREADS = "SET threads = {n}"
_BEGIN, _COMMIT, _ROLLBACK, _DETACH = "BEGIN TRANSACTION", "COMMIT", "ROLLBACK", "DETACH part"
_COPY = "INSERT INTO {table} BY NAME SELECT * FROM part.{table}"


def _merged_already(con) -> bool:
    """Whether the attached part's rows are in the store: the merge is one transaction, so one row
    of it (see :data:`PROBES`) tells."""
    for first, probe in PROBES:
        row = con.execute(first).fetchall()
        if row:
            return bool(con.execute(probe, list(row[0])).fetchall())
    return False


MERGE_THREADS = 1
"""DuckDB threads during a merge: a part's tables are small statements where more threads cost
more than they give (profiled: 730k vs 570k rows per CPU-second, fewer under load; docs/scale.md)."""


def merge_into(target: Store, part_path: str | Path) -> dict[str, int]:
    """Copy every row of a worker's store file into ``target``: one ``INSERT … SELECT`` per table
    from the part attached read-only, in one transaction (no row passes through Python). Returns
    rows inserted per table (a content table's texts already stored are not counted); empty when
    the part's rows are in ``target`` already (a merge whose part file outlived it: the driver
    died before deleting it) — a part is merged once."""
    counts = {}
    con = target.con
    began = False
    with target.lock:
        con.execute(_ATTACH.format(path=Path(part_path).as_posix()))
        threads = con.execute(_THREADS).fetchall()[0][0]
        try:
            if _merged_already(con):
                return {}
            con.execute(_SET_THREADS.format(n=MERGE_THREADS))
            con.execute(_BEGIN)
            began = True
            for t in _schema.TABLES:
                if t == "runs":
                    continue
                sql = _schema.new_content_sql(t, f"part.{t}") if t in _schema.CONTENT_TABLES else _COPY.format(table=t)
                counts[t] = int(con.execute(sql).fetchall()[0][0])  # texts: once per store
            con.execute(_COMMIT)
        except Exception:
            if began:
                con.execute(_ROLLBACK)
            raise
        finally:
            con.execute(_SET_THREADS.format(n=int(threads)))
            con.execute(_DETACH)
    return counts
