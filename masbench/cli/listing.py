"""``masbench list``: what exists (agents, designs, suites, models, ops, formats, backends, scorers,
tools, …) and where each comes from, one line each."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..api import LIST_KINDS, available
from .common import LibOpt, console, err


def list_(kind: Annotated[Optional[str], typer.Argument(
              metavar="[KIND]", help=f"One of {', '.join(LIST_KINDS)} (default: all).")] = None,
          lib: LibOpt = None) -> None:
    """List agents, designs, suites, models, ops, formats, backends, scorers, tools: one line each, with
    where it comes from.

    Columns: kind, name, origin (bundled, working directory, library root, MASBENCH_PATH, plugin DIST),
    and its file or the module:attr it points at. Installed plugins are listed, not imported."""
    if kind is not None and kind not in LIST_KINDS:
        err.print(f"error: cannot list {kind!r}: kinds are {', '.join(LIST_KINDS)}", markup=False, highlight=False)
        raise typer.Exit(2)
    rows = available(kind, lib or [])
    widths = [max([0, *(len(r[i]) for r in rows)]) for i in range(3)]
    for r in rows:
        line = "  ".join(v.ljust(w) for v, w in zip(r[:3], widths)) + "  " + r.where
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Mount ``masbench list``."""
    app.command("list")(list_)
