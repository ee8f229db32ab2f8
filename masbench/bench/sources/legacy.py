"""Readers ``legacy-jsonl`` and ``legacy-parquet``: one file, read as the older ``jsonl:`` /
``parquet:`` keys always read it (with the ``guess`` format).

They differ from the ``jsonl`` / ``parquet`` readers in what they raise, which stays as it was: a
missing file is a ``FileNotFoundError`` (``task file not found: PATH``), a bad JSONL line a
``ValueError`` ``PATH:LINE: …``; the file is read whatever its suffix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from ...spec.suite import TaskSource
from .base import Row, RowGroup
from .readers import resolve, total_rows


def _existing(path: str, base_dir: Path | None) -> Path:
    file = resolve(path, base_dir)
    if not file.exists():
        raise FileNotFoundError(f"task file not found: {file}")
    return file


def jsonl_lines(path: Path, n: int | None) -> list[Row]:
    """At most ``n`` objects of a JSONL file (blank lines skipped), as rows numbered by line."""
    rows: list[Row] = []
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}:{line_no}: invalid JSON: {exc}") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{line_no}: each line must be a JSON object")
            rows.append((path, line_no, row))
            if n is not None and len(rows) >= n:
                break
    return rows


def parquet_table_rows(path: Path, n: int | None) -> list[Row]:
    """At most ``n`` rows of a parquet file, numbered from 1."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    if n is not None:
        table = table.slice(0, n)
    return [(path, i, r) for i, r in enumerate(table.to_pylist(), start=1)]


def read_legacy_jsonl(path: str, source: TaskSource, base_dir: Path | None) -> Iterator[RowGroup]:
    """The rows of one JSONL file (at most ``n`` when the source sets it)."""
    file = _existing(path, base_dir)
    rows = jsonl_lines(file, source.n)
    yield RowGroup(rows, str(file), source.split, files=[file], filetype="jsonl",
                   total=total_rows(len(rows), source.n, [file], ".jsonl"))


def read_legacy_parquet(path: str, source: TaskSource, base_dir: Path | None) -> Iterator[RowGroup]:
    """The rows of one parquet file (at most ``n`` when the source sets it)."""
    file = _existing(path, base_dir)
    rows = parquet_table_rows(file, source.n)
    yield RowGroup(rows, str(file), source.split, files=[file], filetype="parquet",
                   total=total_rows(len(rows), source.n, [file], ".parquet"))
