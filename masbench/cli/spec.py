"""``masbench validate`` and ``masbench schema``: the YAML kinds, checked and documented.

Both print plain lines (``typer.echo``), not through rich: checking files starts without it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..spec import KINDS, json_schema
from ..spec.problems import SpecError
from .common import LibOpt, library, yaml_files


def validate(paths: Annotated[list[Path], typer.Argument(help="YAML files or folders.")],
             lib: LibOpt = None,
             debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False) -> None:
    """Check YAML files: syntax, types, unknown keys, missing fields, references, design graphs.

    Prints one line per problem as FILE:LINE:COL: field: message and exits 2 if there are any."""
    lib_ = library(lib)
    files = yaml_files(paths)
    bad = 0
    for f in files:
        try:
            loaded = lib_.load_path(f)
        except SpecError as exc:
            bad += 1
            for p in exc.problems:
                typer.echo(str(p), err=True)
        except Exception as exc:  # an internal error must still name the file
            bad += 1
            typer.echo(f"{f}:1:1: <internal>: {type(exc).__name__}: {exc}", err=True)
            if debug:
                raise
        else:
            name = getattr(loaded.spec, "name", None) or f.stem  # a model YAML is named by its file
            typer.echo(f"ok  {f} ({loaded.kind} {name})")
    if not files:
        typer.echo("no YAML files given", err=True)
        raise typer.Exit(2)
    if bad:
        raise typer.Exit(2)


def schema(kind: Annotated[Optional[str], typer.Argument(help="agent, design, suite, model, budget, handbook")] = None,
           out: Annotated[Optional[Path], typer.Option("--out", help="Write one <kind>.schema.json per kind here.")] = None) -> None:
    """Print the JSON Schema of a YAML kind (all kinds if none given), for editor autocompletion."""
    kinds = [kind] if kind else list(KINDS)
    for k in kinds:
        if k not in KINDS:
            typer.echo(f"unknown kind {k!r}; kinds: {', '.join(KINDS)}", err=True)
            raise typer.Exit(2)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        for k in kinds:
            (out / f"{k}.schema.json").write_text(json.dumps(json_schema(k), indent=2))
        typer.echo(f"wrote {len(kinds)} schema file(s) to {out}")
        return
    doc = json_schema(kinds[0]) if len(kinds) == 1 else {k: json_schema(k) for k in kinds}
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")


def register(app: typer.Typer) -> None:
    """Mount ``validate`` and ``schema``."""
    app.command()(validate)
    app.command()(schema)
