"""The trace viewer: ``masbench view`` serves a store's runs, grids, traces and side-by-side pages
on 127.0.0.1 (read-only, GET only, server-side HTML, no JavaScript), and ``masbench view --export``
writes the same pages as static files.

- :func:`create_app` / :func:`serve` — the live server (:mod:`.app`)
- :func:`export_site` — the static export (:mod:`.export`)
- :mod:`.links` — page references and the one link builder (live and static);
  :func:`trace_href` / :func:`run_href` / :func:`grid_href` for the report to link exported pages
- :data:`FILTERS` — the grid's filters and their rules (:mod:`.filters`)
- :data:`PAGES`, :func:`render` — page kind → what it reads, and the HTML (:mod:`.pages`)

Docs: docs/viewer.md.
"""

from .app import check_host, create_app, serve
from .export import ExportResult, export_site
from .filters import FILTERS, GridFilter
from .links import (Compare, Grid, Links, LiveLinks, Page, Run, Runs, StaticLinks, Trace, filename, grid_href, run_href,
                    trace_href)
from .pages import PAGES, render
from .trace import NotFound

__all__ = ["Compare", "ExportResult", "FILTERS", "Grid", "GridFilter", "Links", "LiveLinks", "NotFound", "PAGES", "Page",
           "Run", "Runs", "StaticLinks", "Trace", "check_host", "create_app", "export_site", "filename", "grid_href",
           "render", "run_href", "serve", "trace_href"]
