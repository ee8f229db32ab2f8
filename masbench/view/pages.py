"""The viewer's pages: :data:`PAGES` maps a page kind to the function that reads what the page
shows from an open (read-only) store, and :func:`render` turns a page reference into HTML with a
:class:`~.links.Links` (live or static) — the one path the server and the export share.

Templates are Jinja2 with autoescape on for every template (model and data text is untrusted:
nothing from the store is ever marked safe); CSS is inline in ``base.html``; no JavaScript.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, Callable

import jinja2

from ..registry import Registry
from ..report.tables import num, pct, usd
from ..store import Store
from ..store.run_pairs import Side
from . import graph_svg, grid, overview, trace, versus
from .filters import FILTERS, SC_RULE
from .links import Compare, Grid, Links, Page, Run, Runs, Trace, Versus
from .trace import TOKEN_CLASSES, NotFound


@dataclass
class View:
    """A page's template and the values it shows."""

    template: str
    """Template file name."""
    context: dict[str, Any]
    """Template values (the links builder is added by :func:`render`)."""


def _run_exists(store: Store, run: str) -> None:
    if not store.sql("SELECT 1 FROM runs WHERE run_id = ?", [run]):
        raise NotFound(f"no run {run!r} in this store")


def runs_page(store: Store, page: Runs) -> View:
    """The runs list."""
    rows = overview.runs(store, page.only)
    if page.only is not None and not rows:
        raise NotFound(f"no run {page.only!r} in this store")
    return View("runs.html", {"runs": rows, "limit": overview.RUNS_PAGE})


def run_page(store: Store, page: Run) -> View:
    """A run's overview."""
    ov = overview.overview(store, page.run)
    designs = grid.designs(store, page.run)
    return View("run.html", {"page": page, "ov": ov, "filters": FILTERS, "designs": designs,
                             "pairs": versus.design_pairs(designs), "other_runs": versus.other_runs(store, page.run)})


def grid_view(store: Store, page: Grid) -> View:
    """A page of the design × task grid."""
    _run_exists(store, page.run)
    if page.filter not in FILTERS:
        raise NotFound(f"no grid filter {page.filter!r} (filters: {', '.join(FILTERS)})")
    designs = grid.designs(store, page.run)
    if page.design is not None and page.design not in designs:
        raise NotFound(f"run {page.run!r} has no design {page.design!r} (designs: {', '.join(designs)})")
    g = grid.grid_page(store, page.run, page.filter, page.design, page.page)
    if page.page > g.pages:
        raise NotFound(f"page {page.page} is past the last page ({g.pages}) of this grid")
    first = page.design or (designs[0] if designs else None)
    other = next((d for d in designs if d != first), None)
    return View("grid.html", {"page": page, "grid": g, "designs": designs, "filters": FILTERS,
                              "filter": FILTERS[page.filter], "size": grid.PAGE_SIZE,
                              "matched": grid.matched_k(store, page.run) if "sc_acc" in FILTERS[page.filter].where
                              else [], "pair": (first, other) if first and other else None, "sc_rule": SC_RULE})


def _ordered_pair(designs: list[str], a: str, b: str) -> tuple[str, str]:
    order = {d: i for i, d in enumerate(designs)}
    return (a, b) if order.get(a, 0) <= order.get(b, 0) else (b, a)


def trace_page(store: Store, page: Trace) -> View:
    """One cell's trace with the pool beside it."""
    data = trace.trace(store, page.run, page.design, page.task, page.seed)
    layout = graph_svg.design_layout(store, page.run, page.design)
    designs = grid.designs(store, page.run)
    others = [d for d in designs if d != page.design]
    return View("trace.html", {"page": page, "t": data, "classes": TOKEN_CLASSES,
                               "graph": graph_svg.svg(layout, data.nodes) if layout else None,
                               "compare": [Compare(page.run, *_ordered_pair(designs, page.design, d), page.task,
                                                   page.seed) for d in others],
                               "others": others})


def compare_page(store: Store, page: Compare) -> View:
    """Two designs side by side on one task and seed."""
    run_b = page.run_b or page.run
    a = trace.trace(store, page.run, page.a, page.task, page.seed)
    b = trace.trace(store, run_b, page.b, page.task, page.seed)
    return View("compare.html", {"page": page, "a": a, "b": b, "classes": TOKEN_CLASSES,
                                 "sides": [(page.run, page.a, a), (run_b, page.b, b)]})


def versus_view(store: Store, page: Versus) -> View:
    """The A-vs-B grid (:mod:`.versus`)."""
    run_b = page.run_b or page.run
    if page.side not in versus.SIDES:
        raise NotFound(f"no side {page.side!r} (sides: {', '.join(versus.SIDES)})")
    known: dict[str, list[str]] = {}
    for run, design in ((page.run, page.a), (run_b, page.b)):
        _run_exists(store, run)
        known[run] = grid.designs(store, run)
        if design not in known[run]:
            raise NotFound(f"run {run!r} has no design {design!r} (designs: {', '.join(known[run])})")
    v = versus.versus_page(store, Side(page.run, page.a), Side(run_b, page.b), page.side, page.page)
    if page.page > v.pages:
        raise NotFound(f"page {page.page} is past the last page ({v.pages}) of this grid")
    return View("versus.html", {"page": page, "v": v, "run_b": run_b, "designs_a": known[page.run],
                                "designs_b": known[run_b], "sides": versus.SIDES, "rule": versus.RULE,
                                "size": grid.PAGE_SIZE})


PAGES: Registry[Callable[[Store, Any], View]] = Registry("viewer page", {
    Runs.KIND: runs_page, Run.KIND: run_page, Grid.KIND: grid_view, Trace.KIND: trace_page,
    Compare.KIND: compare_page, Versus.KIND: versus_view})
"""Page kind → the function that reads its view from a store."""


def _when(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, (int, float)):
        return _dt.datetime.fromtimestamp(float(v), _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
    return str(v)[:19]


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("masbench.view", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(usd=usd, pct=pct, num=num, when=_when,
                       secs=lambda v: "–" if v is None else (f"{float(v) * 1000:.1f} ms" if float(v) < 1
                                                             else f"{float(v):.2f} s"))
    return env


ENV = _env()
"""The template environment (autoescape on for every template)."""


def render(store: Store, page: Page, links: Links, live: bool = False) -> str:
    """The HTML of ``page`` (:class:`~.trace.NotFound` if the store does not hold it)."""
    view = PAGES[page.KIND](store, page)
    return ENV.get_template(view.template).render(**view.context, links=links, live=live,
                                                  Runs=Runs, Run=Run, Grid=Grid, Trace=Trace, Compare=Compare,
                                                  Versus=Versus)


def render_error(message: str, links: Links, status: int = 404) -> str:
    """An error page (an unknown run, cell or filter) that says what was not found."""
    return ENV.get_template("error.html").render(message=message, status=status, links=links, live=True,
                                                 Runs=Runs)


__all__ = ["ENV", "PAGES", "View", "compare_page", "grid_view", "render", "render_error", "run_page", "runs_page",
           "trace_page", "versus_view"]
