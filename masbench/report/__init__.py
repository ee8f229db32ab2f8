"""Reports over a run: cost/accuracy plots, the marginal-utility table, verdicts.

Every number is read from the store's SQL views (``design_comparison``, ``design_metrics``) and
``cot_sc_curve``; this package formats and draws, it does not recompute metrics.

- :func:`write_report` — files for ``masbench report`` (PNG/SVG, CSV, Markdown, index.html)
- :func:`compare` — the terminal table for ``masbench compare``
- :func:`comparison`, :func:`run_info` — the data, as pandas frames, for notebooks
- :func:`verdict` — the one-line verdict rule (docs/metrics.md)
"""

from typing import TYPE_CHECKING

from .data import BASELINES, ReportError, RunInfo, TraceLinks, comparison, curve, open_store, run_info
from .terminal import compare
from .verdict import Verdict, verdict, verdicts

if TYPE_CHECKING:
    from .build import ReportResult, write_report


def __getattr__(name: str) -> object:
    """``write_report`` and ``ReportResult`` are imported on first use: they draw with matplotlib
    (~0.3 s of import), which the commands that only print (``run``'s verdict lines, ``compare``)
    never need."""
    if name in ("write_report", "ReportResult"):
        from . import build  # deferred: matplotlib, only for what writes the report's files

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["TraceLinks", "BASELINES", "ReportError", "ReportResult", "RunInfo", "Verdict", "compare", "comparison", "curve",
           "open_store", "run_info", "verdict", "verdicts", "write_report"]
