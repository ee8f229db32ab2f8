"""``masbench view --export DIR``: the viewer's pages as static HTML files in one folder.

The export renders the runs list (or one run's entry), then every page a rendered page links to,
until none is left: :class:`~.links.StaticLinks` records each page an href was built for, so what
is written is exactly what a user can reach by clicking (every grid page under every filter and
design, every trace, the side-by-side pages linked from the grid and the traces) and no link is
dead. Links are bare file names (:func:`~.links.filename`), so the folder works from ``file://``
and can be zipped. The store is opened read-only and released every :data:`RELEASE_S` seconds so a
run writing it keeps going.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..store import Store
from .links import Page, Runs, StaticLinks, filename
from .pages import render, render_error
from .trace import NotFound
from .trace import memo as trace_memo

RELEASE_S = 0.5
"""Seconds between read-only reconnects while exporting (lets a writer in)."""


@dataclass
class ExportResult:
    """What an export wrote."""

    out: Path
    """The folder."""
    pages: int = 0
    """Pages written."""
    missing: list[str] = field(default_factory=list)
    """Pages linked but not in the store (written as a not-found page), with why."""


def _in_scope(page: Page, run: str | None) -> bool:
    """A page to write: not the runs list (written first, as ``index.html``), and of ``run`` if given."""
    return not isinstance(page, Runs) and (run is None or getattr(page, "run", run) == run)


def export_site(store_path: str | Path, out: str | Path, run: str | None = None,
                progress: Callable[[int, int], None] | None = None) -> ExportResult:
    """Write the static viewer of ``store_path`` (only ``run`` if given) into ``out``.
    ``progress(written, known)`` is called after every page (pages written, pages found so far)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    res = ExportResult(out)
    links = StaticLinks()
    start: Page = Runs(run)
    todo: deque[Page] = deque([start])
    seen: set[Page] = {start}
    with Store(store_path, read_only=True) as st, trace_memo():
        if run is not None and not st.sql("SELECT 1 FROM runs WHERE run_id = ?", [run]):
            raise NotFound(f"no run {run!r} in {store_path}")
        last = time.monotonic()
        while todo:
            page = todo.popleft()
            try:
                html = render(st, page, links)
            except NotFound as exc:
                res.missing.append(f"{filename(page)}: {exc}")
                html = render_error(str(exc), links)
            (out / filename(page)).write_text(html, encoding="utf-8")
            res.pages += 1
            if progress is not None:
                progress(res.pages, res.pages + len(todo))
            for p in links.drain():
                if p not in seen and _in_scope(p, run):
                    seen.add(p)
                    todo.append(p)
            if time.monotonic() - last > RELEASE_S:
                st.release()
                last = time.monotonic()
    return res


__all__ = ["ExportResult", "RELEASE_S", "export_site"]
