"""The local-file readers: rows from JSONL, JSON, CSV and parquet files as published.

``path`` is a file, a folder (every data file under it, sorted) or a glob pattern (sorted). The
``file`` reader reads each file by its suffix; ``jsonl``, ``json``, ``csv`` and ``parquet`` read every
file as that type (a folder: the files with that suffix). The rows of all files are one
:class:`~masbench.bench.sources.base.RowGroup`: every row, or at most the source's ``n`` when it sets one.

A row is ``(file, row_no, dict)``; ``row_no`` is the 1-based line of a JSONL file, the 1-based data
row of a CSV file (the header is not counted) and the 1-based row of a parquet file.
"""

from __future__ import annotations

import csv
import glob
import json
from pathlib import Path
from typing import Any, Callable, Iterator

from ...spec.suite import TaskSource
from ..errors import TaskDataError
from ..jsonl import jsonl_rows
from .base import Row, RowGroup

SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


def resolve(rel: str, base_dir: Path | None) -> Path:
    """A path from a suite file, relative to the suite's folder."""
    path = Path(rel).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    return path


def expand(rel: str, base_dir: Path | None, suffixes: tuple[str, ...] = SUFFIXES) -> list[Path]:
    """A file, every data file of a folder (sorted; those with one of ``suffixes``), or the files a
    glob pattern matches (sorted)."""
    path = resolve(rel, base_dir)
    if any(ch in rel for ch in "*?["):
        files = sorted(Path(p) for p in glob.glob(str(path)))
        if not files:
            raise TaskDataError(path, "the pattern matches no file")
        return files
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in suffixes and p.is_file())
        if not files:
            raise TaskDataError(path, f"the folder holds no {'/'.join(suffixes)} file")
        return files
    if not path.exists():
        raise TaskDataError(path, "file not found")
    return [path]


def _json_array(path: Path) -> Iterator[Row]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise TaskDataError(path, f"invalid JSON ({exc})") from None
    if isinstance(data, dict):  # {"data": [...]} / {"rows": [...]}
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list):
        raise TaskDataError(path, "a .json task file must hold a list of objects")
    for i, row in enumerate(data, start=1):
        if not isinstance(row, dict):
            raise TaskDataError(path, "each item must be a JSON object", i)
        yield path, i, row


def _csv(path: Path) -> Iterator[Row]:
    with path.open(encoding="utf-8", newline="") as fh:
        for i, row in enumerate(csv.DictReader(fh), start=1):
            yield path, i, dict(row)


def _parquet(path: Path) -> Iterator[Row]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise TaskDataError(path, f"not a readable parquet file ({exc})") from None
    for i, row in enumerate(table.to_pylist(), start=1):
        yield path, i, row


_BY_SUFFIX: dict[str, Callable[[Path], Iterator[Row]]] = {
    ".jsonl": jsonl_rows, ".json": _json_array, ".csv": _csv, ".parquet": _parquet}


def iter_rows(path: Path, suffix: str | None = None) -> Iterator[Row]:
    """The rows of one file, read as ``suffix`` (default: by its own suffix)."""
    reader = _BY_SUFFIX.get((suffix or path.suffix).lower())
    if reader is None:
        raise TaskDataError(path, f"unknown file type {path.suffix!r} (expected one of {', '.join(_BY_SUFFIX)})")
    return reader(path)


def count_rows(path: Path, suffix: str | None = None) -> int:
    """The rows one file holds, counted without building them where the type allows: a parquet
    file's metadata, a JSONL file's non-blank lines; CSV and JSON files are read."""
    kind = (suffix or path.suffix).lower()
    if kind == ".parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    if kind == ".jsonl":
        with path.open(encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip())
    return sum(1 for _ in iter_rows(path, suffix))


def total_rows(read: int, cap: int | None, files: list[Path], suffix: str | None = None) -> int:
    """The rows ``files`` hold, given that ``read`` rows were read under ``cap``: counted only when
    the cap may have cut them (fewer rows than the cap means every row was read)."""
    if cap is None or read < cap:
        return read
    return sum(count_rows(f, suffix) for f in files)


def read_rows(files: list[Path], n: int | None = None, suffix: str | None = None) -> list[Row]:
    """At most ``n`` rows over ``files``, in order (each read as ``suffix``, default its own)."""
    out: list[Row] = []
    for f in files:
        for r in iter_rows(f, suffix):
            if n is not None and len(out) >= n:
                return out
            out.append(r)
    return out


class FileReader:
    """Rows of local files: ``path`` is a file, folder or glob; each file is read as ``suffix``
    (``None``: by its own suffix). All the rows are one group: every row, or at most the source's ``n``."""

    def __init__(self, suffix: str | None = None):
        self.suffix = suffix
        """The file type every file is read as (``.jsonl``, …), or None to go by each file's suffix."""

    def __call__(self, path: str, source: TaskSource, base_dir: Path | None) -> Iterator[RowGroup]:
        files = expand(path, base_dir, (self.suffix,) if self.suffix else SUFFIXES)
        kinds = {(self.suffix or f.suffix).lower().lstrip(".") for f in files}
        rows = read_rows(files, source.n, self.suffix)
        yield RowGroup(rows, str(resolve(path, base_dir)), source.split, files=files,
                       filetype=kinds.pop() if len(kinds) == 1 else None,
                       total=total_rows(len(rows), source.n, files, self.suffix))


read_files = FileReader()
"""Reader ``file``: each file by its suffix (``.jsonl``, ``.json``, ``.csv``, ``.parquet``)."""
read_jsonl = FileReader(".jsonl")
"""Reader ``jsonl``: every file as JSON lines."""
read_json = FileReader(".json")
"""Reader ``json``: every file as a JSON list of objects (or ``{"data": [...]}``)."""
read_csv = FileReader(".csv")
"""Reader ``csv``: every file as CSV with a header row."""
read_parquet = FileReader(".parquet")
"""Reader ``parquet``: every file as parquet."""
