"""Reports over a run: cost/accuracy plots, the marginal-utility table, verdicts.

Every number is read from the store's SQL views (``design_comparison``, ``design_metrics``) and
``cot_sc_curve``; this package formats and draws, it does not recompute metrics.

- :func:`write_report` — files for ``masbench report`` (PNG/SVG, CSV, Markdown, index.html)
- :func:`compare` — the terminal table for ``masbench compare``
- :func:`comparison`, :func:`run_info` — the data, as pandas frames, for notebooks
- :func:`verdict` — the one-line verdict rule (docs/metrics.md)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

# ``verdict`` is also a submodule's name: imported here (no pandas), the function is the attribute
from .verdict import Verdict, verdict, verdicts

if TYPE_CHECKING:
    from .build import ReportResult, write_report
    from .data import BASELINES, ReportError, RunInfo, TraceLinks, comparison, curve, open_store, run_info
    from .terminal import compare

_EXPORTS = {
    "BASELINES": "data", "ReportError": "data", "RunInfo": "data", "TraceLinks": "data", "comparison": "data",
    "curve": "data", "open_store": "data", "run_info": "data", "compare": "terminal",
    "write_report": "build", "ReportResult": "build",
}
"""Each public name → its module. Imported on first use: the data and the terminal table read pandas
frames (~0.3 s of import) and the report's files draw with matplotlib (~0.3 s), which ``run``'s
verdict lines (:mod:`.verdict`) never need."""


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = ["TraceLinks", "BASELINES", "ReportError", "ReportResult", "RunInfo", "Verdict", "compare", "comparison", "curve",
           "open_store", "run_info", "verdict", "verdicts", "write_report"]
