"""``masbench view``: the trace viewer on 127.0.0.1, or ``--export DIR`` for static pages."""

from __future__ import annotations

import threading
import time
import webbrowser
from pathlib import Path
from typing import Annotated, Optional

import duckdb
import typer

from ..store import Store
from ..view import NotFound, check_host, export_site, serve
from .common import DEFAULT_STORE, StoreOpt, console, err


def view(store: StoreOpt = DEFAULT_STORE,
         port: Annotated[int, typer.Option("--port", help="Port to serve on.")] = 8765,
         host: Annotated[str, typer.Option("--host", help="Loopback address to bind (127.0.0.1 or ::1 only).")]
         = "127.0.0.1",
         open_browser: Annotated[bool, typer.Option("--open/--no-open", help="Open the start page in a browser.")]
         = False,
         export: Annotated[Optional[Path], typer.Option("--export", help="Instead of serving: write the pages as "
                                                         "static HTML into this folder.")] = None,
         run: Annotated[Optional[str], typer.Option("--run", help="With --export: only this run's pages.")] = None
         ) -> None:
    """Browse a store's runs, task grids, traces and CoT-SC pools in a local web viewer (read-only)."""
    if not store.exists():
        err.print(f"error: no store at {store}", markup=False, highlight=False)
        raise typer.Exit(2)
    migrate(store)
    if export is not None:
        try:
            res = export_site(store, export, run, progress=_progress())
        except NotFound as exc:
            err.print(f"error: {exc}", markup=False, highlight=False)
            raise typer.Exit(2)
        console.print(f"wrote {res.pages} pages to {export}/ — open {export / 'index.html'}", markup=False,
                      highlight=False)
        for m in res.missing:
            console.print(f"note: {m}", markup=False, highlight=False)
        return
    if run is not None:
        err.print("error: --run goes with --export (the live viewer lists every run)", markup=False)
        raise typer.Exit(2)
    try:
        host = check_host(host)
    except ValueError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2)
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    console.print(f"masbench view: {url} (store {store}, read-only; Ctrl-C stops)", markup=False, highlight=False)
    if open_browser:
        threading.Timer(0.8, webbrowser.open, [url]).start()
    serve(store, host, port)


def _progress(every_s: float = 2.0):
    """A progress callback printing one line to stderr at most every ``every_s`` seconds (an
    export of a large run writes tens of thousands of pages)."""
    last = [time.monotonic()]

    def report(written: int, known: int) -> None:
        now = time.monotonic()
        if now - last[0] >= every_s:
            last[0] = now
            err.print(f"exporting: {written} of {known} pages found so far", markup=False, highlight=False)
    return report


def migrate(store: Path) -> None:
    """Bring an older store's schema forward (a store written before transcripts has no
    ``call_messages``; the viewer reads read-only and cannot migrate it). A no-op on a current
    store; skipped when a run holds the file (that run has migrated it)."""
    try:
        Store(store, lock_timeout_s=2.0).close()
    except duckdb.IOException:
        pass


def register(app: typer.Typer) -> None:
    """Mount ``view``."""
    app.command()(view)


__all__ = ["register", "view"]
