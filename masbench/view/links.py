"""Where the viewer's pages live: one page reference type per page kind, and one link builder with
a live (the server's URLs) and a static (the exported files') implementation. Every template
builds its links through :class:`Links`, so the live pages and the exported ones link alike.

Page references (frozen dataclasses, each with a ``KIND`` and its parameters):
:class:`Runs` (the runs list), :class:`Run` (a run's overview), :class:`Grid` (the design × task
grid: run, filter, design, page), :class:`Trace` (one cell: run, design, task, seed) and
:class:`Compare` (two designs on one task and seed, of one run or two) and :class:`Versus` (the
A-vs-B grid: where one design is right and the other wrong).

- :class:`LiveLinks` — ``/grid?run=…&filter=wrong&page=2``: the page kind is the path, the
  parameters the query string (URL-encoded: any run, design or task id works).
- :class:`StaticLinks` — ``grid-wrong-debate-3f2a9c01d4.html``: one flat folder, every link a bare
  file name, so the folder can be zipped or opened from ``file://``. A file name is a short slug of
  the page's parameters (``[a-z0-9.-]``, for reading) plus a hash of all of them (for uniqueness),
  safe on every file system for any task id. It remembers every page it linked to, which is how
  the export finds every page a user can reach by clicking (:mod:`.export`).

For the report (linking its rows and points to the exported traces)::

    from masbench.view.links import trace_href, run_href
    trace_href(run_id, design, task_id, seed, base="viewer/")  # → "viewer/trace-…-<hash>.html"
    run_href(run_id, base="viewer/")                            # → the run's overview page

``base`` is the export folder relative to the page that holds the link (with a trailing ``/``),
e.g. ``masbench view --export report/viewer --run R`` next to ``report/index.html`` is
``base="viewer/"``. The names depend only on the parameters, so a report written before or after
the export links to the same files.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, fields
from typing import ClassVar, Mapping
from urllib.parse import urlencode


@dataclass(frozen=True)
class Runs:
    """The runs list (the viewer's start page)."""

    KIND: ClassVar[str] = "runs"
    only: str | None = None
    """List only this run (an export of one run); None: every run."""

    def label(self) -> str:
        """The readable part of the page's static file name."""
        return "runs"


@dataclass(frozen=True)
class Run:
    """A run's overview: header, marginal-utility and verdict tables, the CoT-SC curve."""

    KIND: ClassVar[str] = "run"
    run: str
    """Run id."""

    def label(self) -> str:
        """The readable part of the page's static file name."""
        return self.run


@dataclass(frozen=True)
class Grid:
    """One page of the design × task grid of a run, under a filter (:mod:`.filters`)."""

    KIND: ClassVar[str] = "grid"
    run: str
    """Run id."""
    filter: str = "all"
    """A :data:`~masbench.view.filters.FILTERS` name."""
    design: str | None = None
    """Only this design's cells decide which tasks match (None: any design's)."""
    page: int = 1
    """1-based page number."""

    def label(self) -> str:
        """The readable part of the page's static file name."""
        return "-".join(x for x in (self.filter, self.design, f"p{self.page}") if x)


@dataclass(frozen=True)
class Trace:
    """One cell: a design run on one task and seed, with the CoT-SC pool of the same task and seed."""

    KIND: ClassVar[str] = "trace"
    run: str
    """Run id."""
    design: str
    """Design label (``results.design``)."""
    task: str
    """Task id."""
    seed: int
    """Seed."""

    def label(self) -> str:
        """The readable part of the page's static file name."""
        return f"{self.design}-{self.task}-s{self.seed}"


@dataclass(frozen=True)
class Compare:
    """Two designs side by side on one task and seed."""

    KIND: ClassVar[str] = "compare"
    run: str
    """Run id."""
    a: str
    """Left design label."""
    b: str
    """Right design label."""
    task: str
    """Task id."""
    seed: int
    """Seed."""
    run_b: str | None = None
    """The right design's run (None: ``run``): the same task in two runs."""

    def label(self) -> str:
        """The readable part of the page's static file name."""
        return f"{self.a}-vs-{self.b}-{self.task}-s{self.seed}"


@dataclass(frozen=True)
class Versus:
    """The A-vs-B grid: the tasks (and seeds) where design A of ``run`` is right and design B of
    ``run_b`` wrong (``side = 'a'``), or the reverse (``side = 'b'``) (:mod:`.versus`)."""

    KIND: ClassVar[str] = "versus"
    run: str
    """A's run id."""
    a: str
    """A's design label."""
    b: str
    """B's design label."""
    run_b: str | None = None
    """B's run id (None: ``run``, two designs of one run)."""
    side: str = "a"
    """``a``: A right, B wrong; ``b``: B right, A wrong."""
    page: int = 1
    """1-based page number."""

    def label(self) -> str:
        """The readable part of the page's static file name."""
        return f"{self.a}-vs-{self.b}-{self.side}-p{self.page}"


Page = Runs | Run | Grid | Trace | Compare | Versus
"""Any page reference."""

PAGE_TYPES: dict[str, type[Page]] = {t.KIND: t for t in (Runs, Run, Grid, Trace, Compare, Versus)}
"""Page kind → its reference type (the live server's routes)."""

_INT_FIELDS = {"page", "seed"}
_OPTIONAL = {"design", "run_b"}
"""Text parameters for which an empty value means None."""


def params(page: Page) -> dict[str, str]:
    """The page's parameters as strings (None left out): a query string's or a file name's input."""
    return {k: str(v) for k, v in asdict(page).items() if v is not None}


def parse(kind: str, query: Mapping[str, str]) -> Page:
    """The page reference of ``kind`` from query parameters; ``ValueError`` for a missing or malformed one."""
    cls = PAGE_TYPES.get(kind)
    if cls is None:
        raise ValueError(f"no page kind {kind!r}")
    kw: dict[str, str | int | None] = {}
    for f in fields(cls):
        if f.name not in query:
            continue
        raw = query[f.name]
        kw[f.name] = int(raw) if f.name in _INT_FIELDS else (raw or None if f.name in _OPTIONAL else raw)
    try:
        return cls(**kw)  # type: ignore[arg-type]  # checked field by field above; missing → TypeError
    except TypeError as exc:
        raise ValueError(f"{kind}: {exc}") from exc


class Links:
    """Builds the href of a page reference (see the module docstring)."""

    def href(self, page: Page) -> str:
        """The link to ``page`` from any page of the viewer."""
        raise NotImplementedError


class LiveLinks(Links):
    """The running server's URLs: ``/<kind>?<parameters>``; the runs list is ``/``."""

    def __init__(self, root: str = ""):
        self.root = root.rstrip("/")
        """A prefix when the app is mounted below ``/``."""

    def href(self, page: Page) -> str:
        if isinstance(page, Runs):
            return self.root + "/"
        return f"{self.root}/{page.KIND}?{urlencode(params(page))}"


_SLUG = re.compile(r"[^a-z0-9.]+")
SLUG_CHARS = 48
"""At most this many readable characters in a static file name (before the hash)."""
HASH_CHARS = 10
"""Hex characters of the hash that makes a static file name unique."""


def slug(text: str) -> str:
    """Lower-case ``[a-z0-9.-]`` reading aid of ``text`` (never empty; not unique by itself)."""
    s = _SLUG.sub("-", text.lower()).strip("-.")
    return s[:SLUG_CHARS].strip("-.") or "x"


def filename(page: Page) -> str:
    """The static file name of ``page``: ``index.html`` for the runs list, else
    ``<kind>-<slug>-<hash>.html`` (the hash over the kind and every parameter)."""
    if isinstance(page, Runs):
        return "index.html"
    p = params(page)
    key = "\x1f".join([page.KIND, *(f"{k}={v}" for k, v in sorted(p.items()))])
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=HASH_CHARS // 2).hexdigest()
    return f"{page.KIND}-{slug(page.label())}-{digest}.html"


class StaticLinks(Links):
    """The exported files: every page a bare file name in one folder (``base`` prefixed), and a
    record of every page linked (:attr:`linked`), in the order first linked."""

    def __init__(self, base: str = ""):
        self.base = base
        """Prefix of every href (the export folder relative to the linking page; '' inside it)."""
        self.linked: dict[Page, None] = {}
        """Every page an href was built for (an ordered set)."""
        self._new: list[Page] = []

    def href(self, page: Page) -> str:
        if page not in self.linked:
            self.linked[page] = None
            self._new.append(page)
        return self.base + filename(page)

    def drain(self) -> list[Page]:
        """The pages first linked since the last call."""
        new, self._new = self._new, []
        return new


def trace_href(run: str, design: str, task: str, seed: int, base: str = "") -> str:
    """The exported trace page of a cell, relative to a page for which the export folder is ``base``."""
    return base + filename(Trace(run, design, task, int(seed)))


def run_href(run: str, base: str = "") -> str:
    """The exported overview page of a run (see :func:`trace_href` for ``base``)."""
    return base + filename(Run(run))


def grid_href(run: str, filter: str = "all", design: str | None = None, base: str = "") -> str:
    """The first exported grid page of a run under ``filter`` (and one design's cells)."""
    return base + filename(Grid(run, filter, design, 1))


__all__ = ["Compare", "Versus", "Grid", "Links", "LiveLinks", "PAGE_TYPES", "Page", "Run", "Runs", "StaticLinks", "Trace",
           "filename", "grid_href", "params", "parse", "run_href", "slug", "trace_href"]
