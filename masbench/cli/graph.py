"""``masbench graph``: render a design as Mermaid text and as a PNG."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from ..library import Library
from ..runtime import render
from ..spec import DesignSpec
from ..spec.problems import SpecError


def _parse_params(items: list[str] | None) -> dict:
    out: dict = {}
    for it in items or []:
        if "=" not in it:
            raise typer.BadParameter(f"--param wants NAME=VALUE, got {it!r}")
        k, v = it.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except ValueError:
            out[k.strip()] = v
    return out


def register(app: typer.Typer) -> None:
    """Add the ``graph`` command to the main CLI."""
    @app.command()
    def graph(design: Annotated[str, typer.Argument(help="Design name (from the libraries) or a YAML file.")],
              png: Annotated[Optional[Path], typer.Option("--png", help="PNG file to write (default: <name>.png).")] = None,
              no_png: Annotated[bool, typer.Option("--no-png", help="Only print the Mermaid text.")] = False,
              mermaid_out: Annotated[Optional[Path], typer.Option("--mermaid", help="Also write the Mermaid text here.")] = None,
              param: Annotated[Optional[list[str]], typer.Option("--param", "-p", help="Design param NAME=VALUE (JSON values allowed).")] = None,
              lib: Annotated[Optional[list[Path]], typer.Option("--lib", help="Extra library root(s), searched first.")] = None) -> None:
        """Render a design: Mermaid text on stdout, and a PNG."""
        err = Console(stderr=True)
        library = Library(roots=lib or [])
        try:
            p = Path(design)
            if p.suffix in (".yaml", ".yml") and p.is_file():
                spec = library.load_path(p, "design").typed(DesignSpec)
            else:
                spec = library.design(design)
            params = _parse_params(param)
            text = render.mermaid(spec, library, params)
        except SpecError as exc:
            for prob in exc.problems:
                err.print(str(prob), markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2)
        sys.stdout.write(text)
        if mermaid_out is not None:
            mermaid_out.write_text(text)
        if not no_png:
            out = render.png(spec, library, png or Path(f"{spec.name}.png"), params)
            err.print(f"wrote {out}", markup=False, highlight=False)
