"""The one check of a design's graph and references (the library runs it when it loads a design;
the designers run it on generated designs; the planner refuses what it rejects)."""

from __future__ import annotations

from typing import Any

from ..library import Library
from ..spec.design import DesignSpec
from ..spec.problems import Problem
from ..spec.yamlpos import Located
from .design_analysis import Analysis


def check_design(design: DesignSpec, located: Located | None, library: Library) -> list[Problem]:
    """Every problem with a design's graph and references — unknown agents and sub-designs
    included — each at its place in the YAML (``FILE:LINE:COL: nodes.<node>: message``). Empty
    when the design can run. The library's load-time check for kind ``design``."""
    return Analysis(design, located, library).problems


"""The same check under its historical name."""

__all__ = ["check_design"]
