"""``masbench status``: a run's progress read from its store — live while the run writes it
(the running process holds the store only while it flushes, every couple of seconds)."""

from __future__ import annotations

import time
from typing import Annotated, Optional

import typer

from ..store import Store, describe_snapshot, failure_reasons, latest_run, read_live, run_progress
from .common import DEFAULT_STORE, StoreOpt, console, err


def status(run: Annotated[Optional[str], typer.Argument(help="Run id (default: the latest run in the store).")] = None,
           store: StoreOpt = DEFAULT_STORE) -> None:
    """Show a run's progress (cells, calls, tokens, USD, failures), also while it runs."""
    if not store.exists():
        err.print(f"no store at {store}", markup=False)
        raise typer.Exit(2)
    with Store(store, read_only=True) as st:
        run_id = run or latest_run(st)
        p = run_progress(st, run_id) if run_id else None
        reasons = failure_reasons(st, run_id)[1] if p and run_id else []  # the closing summary's reasons, pool cells too
    if p is None:
        err.print(f"no run {run_id!r} in {store}" if run_id else f"no runs in {store}", markup=False)
        raise typer.Exit(2)
    total = p["cells_total"]
    sim = " · SIMULATED" if p["simulated"] else ""
    console.print(f"run {p['run_id']} · {p['status']}{sim}", markup=False, highlight=False)
    console.print(f"cells {p['cells_done']}/{total if total is not None else '?'} · failed {p['failed_cells']} · "
                  f"calls {p['calls']:,} · tokens {p['tokens']:,} · ${p['cost_usd']:.4f} counted, "
                  f"${p['spent_usd']:.4f} spent ({p['spent_calls']:,} calls incl. superseded attempts)",
                  markup=False, highlight=False)
    live = read_live(store, p["run_id"]) if p["status"] == "running" else None
    if live:  # the driver's view of the whole run: every worker's cells, also those not merged yet
        s = live["stats"]
        age = max(0.0, time.time() - live["updated"])
        console.print(f"live ({live['engine']}, {live['workers']} worker(s), updated {age:.0f}s ago): cells "
                      f"{live['done']}/{live['total']} · failed {live['failed']} · calls {int(s.get('calls', 0)):,} · "
                      f"tokens {int(s.get('prompt_tokens', 0) + s.get('completion_tokens', 0)):,}",
                      markup=False, highlight=False, soft_wrap=True)
        if live["limits"]:
            console.print(f"rate limits: {describe_snapshot(live['limits'])}", markup=False, highlight=False,
                          soft_wrap=True)
    if p["reason"]:
        console.print(f"reason: {p['reason']}", markup=False, highlight=False, soft_wrap=True)
    for reason, n in reasons:
        console.print(f"  {n}× {reason}", markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Mount ``status``."""
    app.command()(status)


__all__ = ["register", "status"]
