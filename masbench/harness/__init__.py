"""The benchmark harness: suites end to end, the CoT-SC curve, equal-budget metrics, resume."""

from .cells import Cell, DesignEntry, design_entries
from .curve import CurvePoint, build_curve
from .runner import RunOptions, RunSummary, compute_curve, prepare, run_suite

__all__ = ["Cell", "CurvePoint", "DesignEntry", "RunOptions", "RunSummary", "build_curve", "compute_curve",
           "design_entries", "prepare", "run_suite"]
