"""Parquet export: one file per table (and per view on request), readable by any engine."""

from __future__ import annotations

from pathlib import Path

from .db import Store
from .schema import TABLES


def export_parquet(store: Store, out_dir: str | Path, run_id: str | None = None,
                   tables: tuple[str, ...] = TABLES) -> dict[str, Path]:
    """Write ``<table>.parquet`` for each table (rows of one run if ``run_id``)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for t in tables:
        cols = store.columns(t)
        rid = run_id if run_id and "run_id" in cols else None
        where = " WHERE run_id = ?" if rid is not None else ""
        path = out / f"{t}.parquet"
        with store.lock:
            q = f"COPY (SELECT * FROM {t}{where}) TO '{path.as_posix()}' (FORMAT parquet)"
            if rid is not None:
                store.con.execute(q.replace("?", "'" + rid.replace("'", "''") + "'"))
            else:
                store.con.execute(q)
        written[t] = path
    return written
