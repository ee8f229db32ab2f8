"""The benchmark harness: suites end to end, the CoT-SC curve, equal-budget metrics, resume."""

from .cells import Cell, DesignEntry, design_entries
from .curve import CurvePoint, build_curve, compute_curve
from .paired_tests import compute_paired
from .runner import RunOptions, RunSummary, prepare, run_suite

__all__ = ["Cell", "CurvePoint", "DesignEntry", "RunOptions", "RunSummary", "build_curve", "compute_curve", "compute_paired",
           "design_entries", "prepare", "run_suite"]
