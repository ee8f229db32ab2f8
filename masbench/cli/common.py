"""What every command group shares: consoles, option types, library and file helpers, and the one
parser of the model flags (``--model ALIAS=NAME``, ``--free ALIAS``, ``--api-base ALIAS=URL``)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Iterator, NoReturn, Optional, TypedDict

import typer

from ..library import Library

if TYPE_CHECKING:  # types only: a command that writes no store starts without DuckDB, pyarrow or the gateway
    from rich.console import Console

    from ..llm import ModelOverride
    from ..store import RunSession, StoreBusy

    console: Console
    """The rich console on stdout, made on first use (see :func:`__getattr__`)."""
    err: Console
    """The rich console on stderr, made on first use."""


def __getattr__(name: str) -> Console:
    """``console`` and ``err``, made (and rich imported, ~45 modules) the first time a command asks
    for one: ``masbench validate`` prints plain lines and starts without rich."""
    if name not in ("console", "err"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    made = globals().get(name)
    if made is None:
        from rich.console import Console

        made = globals()[name] = Console(stderr=name == "err")
    return made

LibOpt = Annotated[Optional[list[Path]], typer.Option("--lib", help="Extra library root(s), searched first.")]
StoreOpt = Annotated[Path, typer.Option("--store", help="DuckDB store file.")]
RunOpt = Annotated[Optional[str], typer.Option("--run", help="Run id (default: the latest run in the store).")]
DEFAULT_STORE = Path("runs/masbench.duckdb")


def refuse_busy(exc: StoreBusy, console: Console | None = None) -> NoReturn:
    """A second writer: the one line naming the store and its holder (nothing touched), exit 2 —
    the same for every command that writes a store."""
    (console or __getattr__("err")).print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


@contextmanager
def writing(store: Path, what: str | None = None) -> Iterator[RunSession]:
    """``with writing(path) as session:`` — a :class:`~masbench.store.RunSession` for a command
    that writes the store; a second writer gets :func:`refuse_busy`'s line and exit 2."""
    from ..store import RunSession, StoreBusy  # deferred: DuckDB and pyarrow, only for commands that write

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


ModelOpt = Annotated[Optional[list[str]], typer.Option(
    "--model", metavar="ALIAS=NAME",
    help="Replace a suite model (repeatable). NAME: a model YAML by name (models/NAME.yaml here or bundled: "
         "local-server, smollm2) or by path (…/x.yaml), taken whole; else a litellm id (e.g. openai/gpt-4o-mini).")]
FreeOpt = Annotated[Optional[list[str]], typer.Option(
    "--free", metavar="ALIAS",
    help="This alias's model is free (price: 0), e.g. a local server (repeatable).")]
ApiBaseOpt = Annotated[Optional[list[str]], typer.Option(
    "--api-base", metavar="ALIAS=URL",
    help="This alias's model is served at URL, an OpenAI-compatible server, e.g. "
         "default=http://127.0.0.1:8080/v1 (repeatable).")]


def _pairs(flag: str, values: list[str] | None, what: str) -> dict[str, str]:
    out = {}
    for v in values or []:
        alias, sep, rest = v.partition("=")
        if not sep or not alias.strip() or not rest.strip():
            raise typer.BadParameter(f"{flag} takes ALIAS={what}, got {v!r}")
        out[alias.strip()] = rest.strip()
    return out


def parse_model_overrides(values: list[str] | None) -> dict[str, str]:
    """``--model ALIAS=NAME`` (repeatable) → {alias: name}."""
    return _pairs("--model", values, "NAME")


class ModelFlags(TypedDict):
    """The model flags as :class:`~masbench.harness.RunOptions` fields: ``RunOptions(**flags, …)``."""

    overrides: dict[str, ModelOverride]
    free: list[str]
    api_base: dict[str, str]


def model_flags(model: list[str] | None, free: list[str] | None = None,
                api_base: list[str] | None = None) -> ModelFlags:
    """``--model``/``--free``/``--api-base`` as :class:`~masbench.harness.RunOptions` fields."""
    return ModelFlags(overrides={**parse_model_overrides(model)}, free=[a.strip() for a in free or []],
                      api_base=_pairs("--api-base", api_base, "URL"))
