"""What every command group shares: consoles, option types, library and file helpers, and the one
``--model ALIAS=ID`` parser."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Iterator, NoReturn, Optional

import typer
from rich.console import Console

from ..library import Library
from ..store import RunSession, StoreBusy

console = Console()
err = Console(stderr=True)

LibOpt = Annotated[Optional[list[Path]], typer.Option("--lib", help="Extra library root(s), searched first.")]
StoreOpt = Annotated[Path, typer.Option("--store", help="DuckDB store file.")]
RunOpt = Annotated[Optional[str], typer.Option("--run", help="Run id (default: the latest run in the store).")]
DEFAULT_STORE = Path("runs/masbench.duckdb")


def refuse_busy(exc: StoreBusy, console: Console | None = None) -> NoReturn:
    """A second writer: the one line naming the store and its holder (nothing touched), exit 2 —
    the same for every command that writes a store."""
    (console or err).print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


@contextmanager
def writing(store: Path, what: str | None = None) -> Iterator[RunSession]:
    """``with writing(path) as session:`` — a :class:`~masbench.store.RunSession` for a command
    that writes the store; a second writer gets :func:`refuse_busy`'s line and exit 2."""
    session = RunSession(store, what=what)
    try:
        session.open()
    except StoreBusy as exc:
        refuse_busy(exc)
    try:
        yield session
    except BaseException as exc:
        session.close(exc)
        raise
    session.close()


def library(lib: list[Path] | None) -> Library:
    """The library over ``--lib`` roots, then ``$MASBENCH_PATH``, cwd and the bundled folders."""
    return Library(roots=lib or [])


def yaml_files(paths: list[Path]) -> list[Path]:
    """The YAML files named, folders expanded recursively (sorted)."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(x for x in p.rglob("*") if x.suffix in (".yaml", ".yml") and x.is_file())
        else:
            out.append(p)
    return out


def parse_model_overrides(values: list[str] | None) -> dict[str, str]:
    """``--model ALIAS=LITELLM_ID`` (repeatable) → {alias: id}."""
    out = {}
    for v in values or []:
        if "=" not in v:
            raise typer.BadParameter(f"--model takes ALIAS=LITELLM_ID, got {v!r}")
        a, m = v.split("=", 1)
        out[a.strip()] = m.strip()
    return out
