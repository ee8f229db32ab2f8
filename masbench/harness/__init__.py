"""The benchmark harness: suites end to end, the CoT-SC curve, equal-budget metrics, resume.

Each name is imported on first use (its module only): a command that needs one part of the harness
(an engine, the failure types) does not import the curve's numpy, the store or the runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

# ``prepare`` is also a submodule's name: imported here, the function (not the module) is the
# package's attribute whatever is imported later
from .prepare import Prepared, prepare

if TYPE_CHECKING:
    from ..store import run_config, suite_config
    from .cells import Cell, DesignEntry, design_entries
    from .curve import CurvePoint, build_curve, compute_curve
    from .designers import run_designer_suite
    from .paired_tests import compute_paired
    from .suite_run import RunOptions, RunSummary, run_suite

_EXPORTS = {
    "run_config": "..store", "suite_config": "..store", "Cell": ".cells", "DesignEntry": ".cells",
    "design_entries": ".cells", "CurvePoint": ".curve", "build_curve": ".curve", "compute_curve": ".curve",
    "run_designer_suite": ".designers", "compute_paired": ".paired_tests",
"RunOptions": ".suite_run", "RunSummary": ".suite_run",
    "run_suite": ".suite_run",
}
"""Each public name → the module that defines it (relative to this package)."""


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = ["Cell", "CurvePoint", "DesignEntry", "Prepared", "RunOptions", "RunSummary", "build_curve", "compute_curve",
           "compute_paired", "design_entries", "prepare", "run_config", "run_designer_suite",
           "run_suite", "suite_config"]
