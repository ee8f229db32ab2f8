"""``masbench report`` and ``masbench compare``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from ..report.build import write_report
from ..report.data import ReportError
from ..report.terminal import compare as _compare
from ..report.terminal import compare_against
from .common import DEFAULT_STORE, RunOpt, StoreOpt


def register(app: typer.Typer) -> None:
    @app.command()
    def report(out: Annotated[Path, typer.Option("--out", help="Folder to write the report into.")],
               store: StoreOpt = DEFAULT_STORE, run: RunOpt = None) -> None:
        """Write cost/accuracy plots, marginal-utility tables (CSV, Markdown) and index.html."""
        console, err = Console(), Console(stderr=True)
        try:
            res = write_report(store, out, run)
        except ReportError as exc:
            err.print(f"error: {exc}", style="red", markup=False)
            raise typer.Exit(2)
        if res.info.label:
            console.print(f"[bold yellow]{res.info.label}[/]")
        console.print(f"report for run {res.info.run_id} ({res.info.suite}) written to {out}/", markup=False,
                      highlight=False)
        for f in res.files:
            console.print(f"  {f}", markup=False, highlight=False)
        for n in res.notes:
            console.print(f"note: {n}", style="dim", markup=False, highlight=False)
        console.print(f"open {out / 'index.html'}", markup=False, highlight=False)

    @app.command()
    def compare(store: StoreOpt = DEFAULT_STORE, run: RunOpt = None,
                axis: Annotated[str, typer.Option("--axis", help="'all', or a task axis (depth, ...) / source: "
                                                  "one table per value.")] = "all",
                against: Annotated[Optional[str], typer.Option("--against", help="Instead: the paired tests "
                                   "against 'curve', 'cot' or a design label (exact McNemar).")] = None) -> None:
        """Print the marginal-utility table against CoT-SC and a verdict per design."""
        try:
            if against:
                compare_against(store, against, run, axis)
            else:
                _compare(store, run, axis)
        except ReportError as exc:
            Console(stderr=True).print(f"error: {exc}", style="red", markup=False)
            raise typer.Exit(2)
