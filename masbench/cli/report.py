"""``masbench report`` and ``masbench compare``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Callable, Optional

import typer
from rich.console import Console

from ..report.data import ReportError, TraceLinks
from ..store import Store
from ..report.terminal import compare as _compare
from ..report.terminal import by_agent, compare_against
from .common import DEFAULT_STORE, RunOpt, StoreOpt


VIEWER_URL = "http://127.0.0.1:8765"
"""Where ``masbench view`` serves by default."""
TRACE_MODES = ("live", "export", "none")
TRACES_DIR = "traces"
"""The folder of the report (``--traces export``) that holds the viewer's exported pages."""


def trace_links(mode: str, store: Path, out: Path, viewer_url: str) -> Callable[[str], TraceLinks] | None:
    """Run id → the report's links to its traces, for ``--traces MODE`` (``export`` writes the
    viewer's pages of the run into ``out/traces`` first)."""
    if mode == "none":
        return None
    # deferred: the viewer (jinja2, its SVG graphs, networkx: ~0.2 s of imports) is for `report`'s
    # links only, and `compare` imports this module too
    from ..view import Grid, LiveLinks, Run, export_site, grid_href, run_href

    def live(run_id: str) -> TraceLinks:
        links = LiveLinks(viewer_url)
        designs = _designs(store, run_id)
        return TraceLinks({d: links.href(Grid(run_id, "all", d, 1)) for d in designs}, links.href(Run(run_id)),
                          f"they open in the trace viewer: run `masbench view --store {store}`")

    def exported(run_id: str) -> TraceLinks:
        export_site(store, out / TRACES_DIR, run_id)
        base = TRACES_DIR + "/"
        return TraceLinks({d: grid_href(run_id, "all", d, base) for d in _designs(store, run_id)},
                          run_href(run_id, base), f"the viewer's pages of this run, exported into {TRACES_DIR}/")

    return live if mode == "live" else exported


def _designs(store: Path, run_id: str) -> list[str]:
    """The design labels of a run's results."""
    with Store(store, read_only=True) as st:
        return [str(d) for (d,) in st.sql("SELECT DISTINCT design FROM results WHERE run_id = ? ORDER BY 1", [run_id])]


def register(app: typer.Typer) -> None:
    @app.command()
    def report(out: Annotated[Path, typer.Option("--out", help="Folder to write the report into.")],
               store: StoreOpt = DEFAULT_STORE, run: RunOpt = None,
               traces: Annotated[str, typer.Option("--traces", help="Where design names and plotted points link: "
                                                   "'live' (the trace viewer, `masbench view`, at --viewer-url), "
                                                   "'export' (write the viewer's pages of this run into OUT/traces "
                                                   "and link there: works offline, can be shared) or 'none'.")]
               = "live",
               viewer_url: Annotated[str, typer.Option("--viewer-url", help="The live viewer's address "
                                                       "(--traces live).")] = VIEWER_URL) -> None:
        """Write cost/accuracy plots, marginal-utility tables (CSV, Markdown) and index.html."""
        console, err = Console(), Console(stderr=True)
        if traces not in TRACE_MODES:
            err.print(f"error: --traces {traces!r}: use one of {', '.join(TRACE_MODES)}", style="red", markup=False)
            raise typer.Exit(2)
        from ..report.build import write_report  # deferred: matplotlib (~0.3 s), which `compare` never needs

        try:
            res = write_report(store, out, run, links=trace_links(traces, store, out, viewer_url))
        except ReportError as exc:
            err.print(f"error: {exc}", style="red", markup=False)
            raise typer.Exit(2)
        if res.info.label:
            console.print(f"[bold yellow]{res.info.label}[/]")
        console.print(f"report for run {res.info.run_id} ({res.info.suite}) written to {out}/", markup=False,
                      highlight=False)
        for f in res.files:
            console.print(f"  {f}", markup=False, highlight=False)
        for n in res.notes:
            console.print(f"note: {n}", style="dim", markup=False, highlight=False)
        if traces == "export":
            console.print(f"traces: the viewer's pages of this run in {out / TRACES_DIR}/", markup=False,
                          highlight=False)
        elif traces == "live":
            console.print(f"traces: its links open in the viewer — masbench view --store {store}", markup=False,
                          highlight=False)
        console.print(f"open {out / 'index.html'}", markup=False, highlight=False)

    @app.command()
    def compare(store: StoreOpt = DEFAULT_STORE, run: RunOpt = None,
                axis: Annotated[Optional[list[str]], typer.Option(
                    "--axis", help="'all' (the default: every task pooled), or a task axis (depth, ...) / source: "
                    "one table per value. Repeatable: the run's header is printed once.")] = None,
                against: Annotated[Optional[str], typer.Option("--against", help="Instead: the paired tests "
                                   "against 'curve', 'cot' or a design label (exact McNemar).")] = None,
                a: Annotated[Optional[list[str]], typer.Option("--a", help="Instead: runs against runs. A = "
                             "RUN[:DESIGN] in --store, the reference; repeatable (paired with --b in order).")] = None,
                b: Annotated[Optional[list[str]], typer.Option("--b", help="RUN[:DESIGN] judged against --a (in "
                             "--b-store if given); no design on either side: every design both runs have.")] = None,
                b_store: Annotated[Optional[Path], typer.Option("--b-store", help="The store file of --b (default: "
                                   "--store), attached read-only.")] = None,
                unit: Annotated[Optional[str], typer.Option("--unit", help="Runs against runs: cost unit of the "
                                "ratio and verdict (tokens, calls, usd, budget; default: the suite's stats.match).")]
                = None,
                agents: Annotated[bool, typer.Option("--by-agent", help="Also: what each agent of each design "
                                  "spent (a program design's agents as its calls named them).")] = False) -> None:
        """Print the marginal-utility table against CoT-SC and a verdict per design."""
        try:
            if a or b:
                # deferred: the run-pairing modules are for this mode only; plain `compare` stays as lean
                from ..report.run_compare import Asked, compare_runs_command
                from ..store.run_pairs import UNITS  # deferred with the line above

                if against:
                    raise ReportError("--against is the within-run test; --a/--b compare runs: give one or the other")
                if unit is not None and unit not in UNITS:
                    raise ReportError(f"--unit {unit!r}: use one of {', '.join(UNITS)}")
                compare_runs_command(Asked(Path(store), b_store, list(a or []), list(b or []), unit))
            elif against:
                compare_against(store, against, run, axis or ["all"])
            else:
                _compare(store, run, axis or ["all"])
            if agents:
                by_agent(store, run)
        except ReportError as exc:
            Console(stderr=True).print(f"error: {exc}", style="red", markup=False)
            raise typer.Exit(2)
