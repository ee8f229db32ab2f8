"""Rows from the Hugging Face hub through the ``datasets`` library (the optional ``hf`` extra).

``hf: Salesforce/MASBench`` with ``configs: [depth]`` and ``split: test`` is
``datasets.load_dataset("Salesforce/MASBench", "depth", split="test")``. A local folder laid out
like a dataset repository (its README's ``configs:`` block naming the data files) goes through the
very same call — which is how the tests exercise this path with no network. The rows then go to
the format ``format:`` names, one group per config (``configs:``, default the dataset's default).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ...spec.suite import TaskSource
from ..errors import TaskDataError
from .base import Row, RowGroup


def hf_rows(name: str, config: str | None, split: str, n: int | None,
            base_dir: Path | None) -> tuple[list[Row], int]:
    """Every row (at most ``n`` when given) of one config and split, each as
    (``hf:NAME[CONFIG:SPLIT]``, row, dict), and the rows the split holds."""
    try:
        import datasets  # optional heavy dependency: imported only for hf: sources
    except ImportError:
        raise TaskDataError(f"hf:{name}", "hf: sources need the `datasets` library: "
                                          "pip install 'masbench-eval[hf]'", field="hf") from None
    datasets.disable_progress_bars()
    local = Path(name).expanduser()
    if not local.is_absolute() and base_dir is not None and (Path(base_dir) / local).exists():
        local = Path(base_dir) / local
    target = str(local) if local.exists() else name
    where = f"hf:{name}[{config or 'default'}:{split}]"
    try:
        ds = datasets.load_dataset(target, name=config, split=split)
    except Exception as exc:  # noqa: BLE001 - datasets raises many types; the message is what matters
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TaskDataError(where, f"could not load ({type(exc).__name__}: {first})", field="hf") from None
    rows: list[Row] = []
    for i, row in enumerate(ds, start=1):
        if n is not None and i > n:
            break
        rows.append((where, i, dict(row)))
    return rows, len(ds)


def read_hf(path: str, source: TaskSource, base_dir: Path | None) -> Iterator[RowGroup]:
    """Reader ``hf``: one group per config of ``source.configs`` (tasks labelled ``<label>-<config>``),
    or the dataset's default config."""
    for config in source.configs or [None]:
        rows, total = hf_rows(path, config, source.split, source.n, base_dir)
        yield RowGroup(rows, f"hf:{path}[{config or 'default'}:{source.split}]", source.split, config=config,
                       label_suffix=config if source.configs else None, total=total)
