"""``masbench reprice``: a finished run's token classes under other price tables."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from ..analysis.reprice import RepriceError, map_table, own_table, put_table, reprice
from ..store import has_run, latest_run
from .common import DEFAULT_STORE, RunOpt, StoreOpt, console, err, writing


def reprice_cmd(store: StoreOpt = DEFAULT_STORE, run: RunOpt = None,
                as_: Annotated[Optional[list[str]], typer.Option(
                    "--as", help="A litellm model id whose bundled prices re-price every call (repeatable).")] = None,
                own: Annotated[bool, typer.Option("--own", help="Also re-price under the run's own prices "
                                                  "(reproduces the recorded cost).")] = False) -> None:
    """Re-price a finished run's token classes under other price tables (counterfactual pricing)."""
    if not store.exists():
        err.print(f"no store at {store}", markup=False)
        raise typer.Exit(2)
    with writing(store) as session:  # writes price tables into the store: the one writer
        st = session.store
        run_id = run or latest_run(st)
        if run_id is None or not has_run(st, run_id):
            err.print(f"{store}: no run {run or '(none in the store)'}", markup=False)
            raise typer.Exit(2)
        try:
            rows = [r for mid in (as_ or []) for r in map_table(mid)]
            if own:
                rows += own_table(st, run_id)
        except (RepriceError, ValueError) as exc:
            err.print(f"error: {exc}", markup=False)
            raise typer.Exit(2)
        if rows:
            put_table(st, rows)
        names = sorted({r["price_table"] for r in rows}) or None
        df = reprice(st, run_id, names)
    t = Table(title=f"run {run_id}: recorded cost vs re-priced (USD)")
    cols = ["price_table", "calls", "fresh_tokens", "cached_read_tokens", "cache_write_tokens", "visible_tokens",
            "reasoning_tokens", "recorded_usd", "repriced_usd", "calls_not_repriced"]
    for c in cols:
        t.add_column(c, justify="left" if c == "price_table" else "right")
    for r in df.to_dict("records"):
        t.add_row(*[f"{r[c]:.6f}" if c.endswith("_usd") and r[c] == r[c] and r[c] is not None
                    else str(r[c]) for c in cols])
    console.print(t)
    if df.empty:
        console.print("no price tables: give --as MODEL_ID (or --own), or fill the store's price_table")


def register(app: typer.Typer) -> None:
    """Mount ``reprice``."""
    app.command("reprice")(reprice_cmd)
