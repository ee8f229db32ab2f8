"""The benchmark harness: suites end to end, the CoT-SC curve, equal-budget metrics, resume."""

from ..store import run_config, suite_config
from .cells import Cell, DesignEntry, design_entries
from .curve import CurvePoint, build_curve, compute_curve
from .designers import run_designer_suite
from .paired_tests import compute_paired
from .prepare import Prepared, prepare
from .resolve import resolve_runnable
from .suite_run import RunOptions, RunSummary, run_suite

__all__ = ["Cell", "CurvePoint", "DesignEntry", "Prepared", "RunOptions", "RunSummary", "build_curve", "compute_curve",
           "compute_paired", "design_entries", "prepare", "resolve_runnable", "run_config", "run_designer_suite",
           "run_suite", "suite_config"]
