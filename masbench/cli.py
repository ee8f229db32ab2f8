"""The ``masbench`` command line. Commands parse arguments and call into the package; no logic here."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="masbench: is this multi-agent system worth its cost against CoT-SC at the same budget?")
console = Console()
err = Console(stderr=True)

LibOpt = Annotated[Optional[list[Path]], typer.Option("--lib", help="Extra library root(s), searched first.")]
StoreOpt = Annotated[Path, typer.Option("--store", help="DuckDB store file.")]


def _library(lib: list[Path] | None):
    from .library import Library

    return Library(roots=lib or [])


def _yaml_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(x for x in p.rglob("*") if x.suffix in (".yaml", ".yml") and x.is_file())
        else:
            out.append(p)
    return out


@app.callback()
def _main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log more.")] = False) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


@app.command()
def validate(paths: Annotated[list[Path], typer.Argument(help="YAML files or folders.")],
             lib: LibOpt = None,
             debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False) -> None:
    """Check YAML files: syntax, types, unknown keys, missing fields, references, design graphs.

    Prints one line per problem as FILE:LINE:COL: field: message and exits 2 if there are any."""
    from . import runtime  # noqa: F401 - registers the design graph checks
    from .spec.problems import SpecError

    library = _library(lib)
    files = _yaml_files(paths)
    bad = 0
    for f in files:
        try:
            loaded = library.load_path(f)
        except SpecError as exc:
            bad += 1
            for p in exc.problems:
                err.print(str(p), markup=False, highlight=False, soft_wrap=True)
        except Exception as exc:  # an internal error must still name the file
            bad += 1
            err.print(f"{f}:1:1: <internal>: {type(exc).__name__}: {exc}", markup=False, soft_wrap=True)
            if debug:
                raise
        else:
            console.print(f"ok  {f} ({loaded.kind} {getattr(loaded.spec, 'name', '')})", markup=False, soft_wrap=True)
    if not files:
        err.print("no YAML files given")
        raise typer.Exit(2)
    if bad:
        raise typer.Exit(2)


@app.command()
def schema(kind: Annotated[Optional[str], typer.Argument(help="agent, design, suite, model, budget, handbook")] = None,
           out: Annotated[Optional[Path], typer.Option("--out", help="Write one <kind>.schema.json per kind here.")] = None) -> None:
    """Print the JSON Schema of a YAML kind (all kinds if none given), for editor autocompletion."""
    from . import routing  # noqa: F401 - registers the handbook kind
    from .spec import KINDS, json_schema

    kinds = [kind] if kind else list(KINDS)
    for k in kinds:
        if k not in KINDS:
            err.print(f"unknown kind {k!r}; kinds: {', '.join(KINDS)}")
            raise typer.Exit(2)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        for k in kinds:
            (out / f"{k}.schema.json").write_text(json.dumps(json_schema(k), indent=2))
        console.print(f"wrote {len(kinds)} schema file(s) to {out}")
        return
    doc = json_schema(kinds[0]) if len(kinds) == 1 else {k: json_schema(k) for k in kinds}
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")


@app.command()
def runs(store: StoreOpt = Path("runs/masbench.duckdb")) -> None:
    """List the runs in a store."""
    from rich.table import Table

    from .store import Store, list_runs

    if not store.exists():
        err.print(f"no store at {store}")
        raise typer.Exit(2)
    with Store(store) as st:
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


@app.command()
def export(out: Annotated[Path, typer.Option("--out", help="Folder for the Parquet files.")],
           store: StoreOpt = Path("runs/masbench.duckdb"),
           run: Annotated[Optional[str], typer.Option("--run", help="Only this run.")] = None) -> None:
    """Export the store's tables to Parquet."""
    from .store import Store, export_parquet

    with Store(store) as st:
        files = export_parquet(st, out, run)
    for t, p in files.items():
        console.print(f"{t}: {p}")


def _mount_optional() -> None:
    """Sub-apps owned by other modules; each is optional so a half-built tree still runs."""
    try:
        from .bench.cli import tasks_app
        app.add_typer(tasks_app, name="tasks", help="Show and export benchmark tasks.")
    except ImportError:
        pass
    for mod, name in (("harness.cli", None), ("runtime.cli", None), ("report.cli", None),
                      ("routing.cli", None), ("design.cli", None)):
        try:
            module = __import__(f"masbench.{mod}", fromlist=["register"])
        except ImportError:
            continue
        module.register(app)


_mount_optional()

if __name__ == "__main__":  # pragma: no cover
    app()
