"""Looking things up in a run's store: which design a result label ran (name and params, from
the run's suite config) and its spec (the library first, else the ``designs`` table)."""

from __future__ import annotations

import json
from ..harness import design_entries
from ..library import Library
from ..spec import SuiteSpec
from ..spec.design import DesignSpec
from ..spec.problems import SpecError
from ..store import Store, suite_config


def design_spec(store: Store | None, library: Library, name: str) -> DesignSpec | None:
    """A design by name: the library first, else the latest valid row of the ``designs`` table."""
    try:
        if library.has("design", name):
            return library.design(name)
    except SpecError:
        pass
    if store is not None:
        rows = store.sql("SELECT spec FROM designs WHERE name = ? AND valid AND spec IS NOT NULL "
                         "ORDER BY ts DESC LIMIT 1", [name])
        if rows:
            spec = DesignSpec.model_validate(json.loads(rows[0][0]))
            library.add("design", spec)
            return spec
    return None


def entry_params(suite: SuiteSpec | None, label: str) -> tuple[str, dict]:
    """A result label's design name and params in the run's suite (the label itself if unknown)."""
    if suite is not None:
        try:
            for e in design_entries(suite):
                if e.label == label:
                    return e.name, dict(e.params)
        except ValueError:
            pass
    return label, {}


__all__ = ["design_spec", "entry_params", "suite_config"]
