"""``masbench runs`` and ``masbench export``: what a store holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ..registry import RegistryError
from ..store import EXPORT_FORMATS, Store, list_runs
from .common import DEFAULT_STORE, StoreOpt, console, err


def runs(store: StoreOpt = DEFAULT_STORE) -> None:
    """List the runs in a store."""
    if not store.exists():
        err.print(f"no store at {store}")
        raise typer.Exit(2)
    with Store(store, read_only=True) as st:  # read-only: works while a run writes the store
        df = list_runs(st)
    cols = ["run_id", "suite", "status", "created_at", "results", "calls", "tokens", "cost_usd", "failed_calls",
            "simulated"]
    t = Table(title=f"runs in {store}")
    for c in cols:
        t.add_column(c, no_wrap=c in ("run_id", "status"))

    def cell(r, c: str) -> str:
        if c == "simulated":
            return "SIMULATED" if r[c] else ""
        if c == "created_at":
            return str(r[c])[:16]
        return f"{r[c]:.4f}" if c == "cost_usd" else str(r[c])

    for _, r in df.iterrows():
        t.add_row(*[cell(r, c) for c in cols])
    console.print(t)


def export(out: Annotated[Path, typer.Option("--out", help="Folder for the exported files.")],
           store: StoreOpt = DEFAULT_STORE,
           run: Annotated[Optional[str], typer.Option("--run", help="Only this run.")] = None,
           fmt: Annotated[str, typer.Option("--format", help="parquet (one file per table) or inspect (one "
                                                             "inspect_ai eval log per run x design, and the "
                                                             "CoT-SC pool's: `inspect view --log-dir OUT`).")]
           = "parquet") -> None:
    """Export the store: its tables to Parquet, or its runs as inspect_ai eval logs."""
    try:
        exporter = EXPORT_FORMATS[fmt]
    except RegistryError:
        err.print(f"unknown --format {fmt!r}: one of {', '.join(EXPORT_FORMATS)}")
        raise typer.Exit(2) from None
    if not store.exists():
        err.print(f"no store at {store}")
        raise typer.Exit(2)
    with Store(store, read_only=True) as st:  # reads only (files out): works while a run writes
        try:
            files = exporter(st, out, run)
        except KeyError as exc:  # an unknown --run
            err.print(str(exc.args[0]) if exc.args else str(exc))
            raise typer.Exit(2) from None
    for p in files:
        console.print(str(p), soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Mount ``runs`` and ``export``."""
    app.command()(runs)
    app.command()(export)
