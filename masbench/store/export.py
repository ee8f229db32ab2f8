"""Exports of a store, by format: Parquet (one file per table, readable by any engine) and
inspect_ai eval logs (:mod:`.inspect_log`), in one registry the ``masbench export`` command reads."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..registry import Registry

from .db import Store
from .schema import CONTENT_TABLES, TABLES


def _quote(value: str) -> str:
    """A SQL string literal (COPY takes no bound parameters)."""
    return "'" + value.replace("'", "''") + "'"


def _select(store: Store, table: str, run_id: str | None) -> str:
    """The rows of ``table`` an export writes: all, or one run's. A content-addressed table has no
    run: the run's rows are the ones its rows in the referencing tables name."""
    if run_id is None:
        return f"SELECT * FROM {table}"
    rid = _quote(run_id)
    if table in CONTENT_TABLES:
        used = " UNION ".join(f"SELECT text_hash FROM {r} WHERE run_id = {rid}" for r in CONTENT_TABLES[table])
        return f"SELECT * FROM {table} WHERE text_hash IN ({used})"
    if "run_id" in store.columns(table):
        return f"SELECT * FROM {table} WHERE run_id = {rid}"
    return f"SELECT * FROM {table}"


def export_parquet(store: Store, out_dir: str | Path, run_id: str | None = None,
                   tables: tuple[str, ...] = TABLES) -> dict[str, Path]:
    """Write ``<table>.parquet`` for each table (rows of one run if ``run_id``; of ``texts``, the
    texts that run's transcripts reference)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for t in tables:
        path = out / f"{t}.parquet"
        with store.lock:
            store.con.execute(f"COPY ({_select(store, t, run_id)}) TO {_quote(path.as_posix())} (FORMAT parquet)")
        written[t] = path
    return written


class Exporter(Protocol):
    """Write a store's rows (of one run, or all) into a folder; the files written."""

    def __call__(self, store: Store, out_dir: str | Path, run_id: str | None = None, /) -> list[Path]: ...


def _parquet(store: Store, out_dir: str | Path, run_id: str | None = None, /) -> list[Path]:
    """:func:`export_parquet` of every table."""
    return list(export_parquet(store, out_dir, run_id).values())


EXPORT_FORMATS: Registry[Exporter] = Registry("export format", {
    "parquet": _parquet,
    "inspect": "masbench.store.inspect_log:export_inspect",
})
"""``masbench export --format NAME``: what writes each format."""
