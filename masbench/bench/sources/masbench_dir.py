"""Reader ``masbench-dir``: a local copy of the ``Salesforce/MASBench`` dataset repository.

Layout: ``<dir>/<config>/<split>-*.parquet`` for the published configs (:data:`CONFIGS`; ``combine``
has a train split only). ``configs:`` picks configs (default: every config of the split); each config
is one group of every row of the split (at most ``n`` when the source sets it), read in the order given, with ``config`` set so the ``masbench``
format builds ids ``<name>-<config>-<split>-<index>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ...spec.suite import TaskSource
from ..errors import TaskDataError
from .base import Row, RowGroup
from .masbench import CONFIGS
from .readers import read_rows, resolve, total_rows


def config_files(root: Path, config: str, split: str) -> list[Path]:
    """The parquet files of one config and split in a local copy of the dataset repository."""
    folder = root / config
    if not folder.is_dir():
        present = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        raise TaskDataError(folder, f"config {config!r} not found in the MASBench directory "
                                    f"(configs present: {', '.join(present) or 'none'})", field="configs")
    files = sorted(folder.glob(f"{split}-*.parquet"))
    if not files:
        raise TaskDataError(folder, f"no {split}-*.parquet file for config {config!r}", field="split")
    return files


def read_masbench_dir(path: str, source: TaskSource, base_dir: Path | None) -> Iterator[RowGroup]:
    """Every row (the first ``n`` when set) of each chosen config, one group per config."""
    root = resolve(path, base_dir)
    split = source.split
    if not root.is_dir():
        raise TaskDataError(root, "not a directory (expected a copy of the Salesforce/MASBench repository)")
    chosen = list(source.configs) if source.configs else [c for c in CONFIGS if c != "combine" or split == "train"]
    unknown = [c for c in chosen if c not in CONFIGS]
    if unknown:
        raise TaskDataError(root, f"unknown config(s) {unknown} (published: {', '.join(CONFIGS)})", field="configs")
    for config in chosen:
        files = config_files(root, config, split)
        rows: list[Row] = read_rows(files, source.n)
        yield RowGroup(rows, str(root / config), split, config=config, label_suffix=config, files=files,
                       filetype="parquet", total=total_rows(len(rows), source.n, files))
