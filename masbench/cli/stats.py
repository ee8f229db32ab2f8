"""``masbench plan`` (power planning) and ``masbench stats`` (recompute a run's curve and tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Callable, Optional, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from ..harness.plan import PlanRow, _recorded, plan_formula, plan_pilot, recompute
from ..harness.plan_sequential import DEFAULT_DELTAS, plan_sequential_formula, plan_sequential_pilot
from ..store import Store, has_run, latest_run
from .common import writing
from .plan_seq import print_sequential

_ERR = Console(stderr=True)
R = TypeVar("R")


def _seeds(text: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(f"--seeds takes a comma-separated list of integers, got {text!r}")
    if not out or min(out) < 1:
        raise typer.BadParameter("--seeds: every entry must be ≥ 1")
    return out


def _open(store: Path) -> Store:
    if not store.exists():
        _ERR.print(f"error: no store at {store}", style="red", markup=False)
        raise typer.Exit(2)
    return Store(store)


def _run_id(st: Store, run: str | None) -> str:
    rid = (run if has_run(st, run) else None) if run else latest_run(st)
    if rid is None:
        _ERR.print(f"error: {'no run ' + repr(run) if run else 'no runs'} in {st.path}", style="red", markup=False)
        raise typer.Exit(2)
    return rid


def _pilot(store: Path, run: str | None, plan: Callable[[Store, str], list[R]]) -> tuple[str, list[R]]:
    """A pilot run's plan rows (its id, and the rows); exits 2 when the run has nothing to plan from."""
    with _open(store) as st:
        rid = _run_id(st, run)
        rows = plan(st, rid)
    if not rows:
        _ERR.print(f"error: run {rid} has no paired differences (no curve, or no non-baseline designs)",
                   style="red", markup=False)
        raise typer.Exit(2)
    return rid, rows


def _print(rows: list[PlanRow], title: str, console: Console) -> None:
    t = Table(title=title, title_justify="left")
    for h in ("design", "Δ (pp)", "σ between tasks", "σ within (seeds)", "seeds", "tasks needed", "power now"):
        t.add_column(h, justify="left" if h == "design" else "right")
    for r in rows:
        f = lambda v, d=3: "–" if v is None else f"{v:.{d}f}"  # noqa: E731
        t.add_row(r.design, f"{100 * r.delta:+.1f}", f(r.sd_between), f(r.sd_within), str(r.seeds),
                  "–" if r.n_tasks is None else str(r.n_tasks), "–" if r.power_now is None else f"{r.power_now:.0%}")
    console.print(t)


def _sequential(console: Console, store: Path | None, run: str | None, design: str | None, delta: float | None,
                accuracy: float, rho: float, seeds: int, alpha: float, power: float, designs: int, cap: int,
                batch: int, calls_per_task: float | None) -> None:
    deltas = None if delta is None else [0.0, delta / 100, -delta / 100]
    if store is None:
        rows = plan_sequential_formula(accuracy, rho, deltas or list(DEFAULT_DELTAS), seeds=seeds,
                                       level=alpha / designs, power=power, cap=cap, batch=batch, alpha=alpha,
                                       calls_per_task=calls_per_task)
        print_sequential(rows, f"tasks to a decision under --until-decided at accuracy {accuracy:.2f}, ρ = {rho:.2f}, "
                               f"{seeds} seed(s), α = {alpha / designs:.4g} (formula)", console)
        return
    rid, rows = _pilot(store, run, lambda st, rid: plan_sequential_pilot(
        st, rid, deltas, unit=_recorded(st, rid)[1].match, alpha=alpha, power=power, cap=cap, batch=batch,
        design=design))
    print_sequential(rows, f"from pilot run {rid}: tasks to a decision under --until-decided (its per-task "
                           f"differences, resampled and tilted to each Δ)", console)


def register(app: typer.Typer) -> None:
    @app.command()
    def plan(delta: Annotated[Optional[float], typer.Option("--delta", help="Gap to detect, in accuracy points "
                                                             "(pilot mode default: each design's observed gap).")] = None,
             accuracy: Annotated[float, typer.Option("--accuracy", min=0, max=1, help="Reference accuracy (formula).")] = 0.6,
             rho: Annotated[float, typer.Option("--rho", min=-1, max=1, help="Correlation of design and reference "
                                                "outcomes on a cell (formula; 0 = unpaired worst case).")] = 0.0,
             between: Annotated[float, typer.Option("--between", min=0, max=1, help="Share of the cell variance "
                                                    "that is between tasks (formula; seeds do not reduce it).")] = 0.0,
             seeds: Annotated[str, typer.Option("--seeds", help="Seeds per task to plan for, e.g. 1,2,4.")] = "1,2,4",
             alpha: Annotated[float, typer.Option("--alpha", min=0.0001, max=0.5)] = 0.05,
             power: Annotated[float, typer.Option("--power", min=0.05, max=0.999)] = 0.8,
             designs: Annotated[int, typer.Option("--designs", min=1, help="Designs compared (formula: α/designs, "
                                                  "Holm's first step).")] = 1,
             store: Annotated[Optional[Path], typer.Option("--store", help="A finished pilot run's store: plan "
                                                            "from its per-task variance.")] = None,
             run: Annotated[Optional[str], typer.Option("--run", help="Pilot run id (default: the latest).")] = None,
             design: Annotated[Optional[str], typer.Option("--design", help="Only this design (pilot mode).")] = None,
             sequential: Annotated[bool, typer.Option("--sequential", help="Tasks and calls to a decision under "
                                                      "`run --until-decided`, by simulation, per true Δ "
                                                      "(0, ±5, ±10, ±20 pp, or 0 and ±--delta).")] = False,
             max_tasks: Annotated[int, typer.Option("--max-tasks", min=1, help="Sequential: the task cap.")] = 400,
             batch: Annotated[int, typer.Option("--batch", min=1, help="Sequential: tasks per look.")] = 20,
             calls_per_task: Annotated[Optional[float], typer.Option("--calls-per-task", min=0,
                                        help="Sequential, formula: the design's calls per task plus the "
                                             "pool's (to show calls).")] = None) -> None:
        """How many tasks (and seeds) detect a Δ-point gap against CoT-SC at 80% power."""
        console = Console()
        s = _seeds(seeds)
        if sequential:
            _sequential(console, store, run, design, delta, accuracy, rho, s[0], alpha, power, designs,
                        max_tasks, batch, calls_per_task)
            return
        if store is None:
            if delta is None:
                raise typer.BadParameter("--delta is required without --store")
            rows = plan_formula(accuracy, delta / 100, rho, s, alpha / designs, power, between)
            _print(rows, f"tasks to detect {delta:+.1f} pp at accuracy {accuracy:.2f}, ρ = {rho:.2f}, "
                         f"α = {alpha / designs:.4g}, power {power:.0%} (formula, docs/metrics.md)", console)
            return
        rid, rows = _pilot(store, run, lambda st, rid: plan_pilot(
            st, rid, None if delta is None else delta / 100, s, alpha, power, design=design))
        _print(rows, f"from pilot run {rid}: tasks to detect Δ at power {power:.0%}, α = {alpha:g} split over "
                     f"{len({r.design for r in rows})} designs", console)

    @app.command()
    def stats(store: Annotated[Path, typer.Option("--store", help="DuckDB store file.")],
              run: Annotated[Optional[str], typer.Option("--run", help="Run id (default: the latest).")] = None) -> None:
        """Recompute a stored run's exact CoT-SC curve and paired tests (its recorded settings)."""
        if not store.exists():
            _ERR.print(f"error: no store at {store}", style="red", markup=False)
            raise typer.Exit(2)
        with writing(store) as session:  # rewrites the run's curve and tests: the one writer
            rid = _run_id(session.store, run)
            session.attach(rid)
            n_curve, n_tests = recompute(session.store, rid)
        Console().print(f"run {rid}: {n_curve} curve points, {n_tests} paired tests written", markup=False,
                        highlight=False)
