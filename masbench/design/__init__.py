"""Automatic MAS design: a one-shot holistic designer (MAS-Orchestra style), a per-task
meta-designer (MAS-Zero style) and the structure of a design (its depth, fan-out, collapse to
CoT-SC). Designs a model writes are data in our schema — parsed with a safe parser, repaired only
in recorded safe ways, validated by the runtime's validator, and never executed as code.
Diagnostics over a run's store live in :mod:`masbench.analysis`; running a designer over a suite
is the harness's (:func:`masbench.harness.run_designer_suite`).

Public API (imported lazily: each name loads only its own module)::

    check_text(text, library, limits) -> DesignCheck        # parse + repair + validate a reply
    HolisticDesigner(gateway, library, HolisticConfig(...)).generate(examples) -> [DesignRecord]
    run_holistic_designer(task, ctx, config, design_sink=...) -> DesignResult   # per task
    run_meta_designer(task, ctx, config, design_sink=...) -> DesignResult       # per task
    resolve_runnable(name, library) -> Runnable             # what a suite entry's name runs (the one rule)
    runnable_kind(name, library) / is_designer(name)        # ... decided without building it
    Runnable / LibraryDesign(name) / Designer(name, runner) # what the harness runs, one protocol
    ProgramDesign(name, spec, root) / Endpoint               # the user's own MAS code (kind: program)
    collapse(spec, library) / structure(spec, library)      # from the spec alone
    export_designs(store, out_dir) / holistic_session(prep, store, config)
    ScriptedDesignerGateway(script) / ExecutionGuard(markers)   # tests and demos
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "DesignCheck": "check", "DesignLimits": "check", "Rejected": "check", "SAFE_PYTHON": "check",
    "check_text": "check", "check_data": "check", "spec_data": "check",
    "DesignRecord": "records", "export_designs": "records", "write_records": "records",
    "HolisticConfig": "holistic", "HolisticDesigner": "holistic", "run_holistic_designer": "holistic",
    "MetaDesignerConfig": "meta", "MetaDesigner": "meta", "run_meta_designer": "meta",
    "is_designer": "runnable", "runnable_kind": "runnable", "resolve_runnable": "runnable",
    "Runnable": "runnable", "LibraryDesign": "runnable", "Designer": "runnable",
    "ProgramDesign": "program", "Endpoint": "program", "AgentAccess": "program",
    "collapse": "topology", "structure": "topology", "top_graph": "topology", "SINGLE_CALL": "topology",
    "ScriptedDesignerGateway": "scripted", "ExecutionGuard": "scripted", "pick_reply": "scripted",
    "holistic_session": "session", "derive_suite": "session",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'masbench.design' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
