"""The compile cache: a design is compiled once per (design, params, library) and reused across
tasks; a changed design of the same name is recompiled."""

from __future__ import annotations

import json
from typing import Any

from ..library import Library
from ..spec.design import DesignSpec
from .compiled import CompiledDesign

_CACHE: dict[tuple, tuple[DesignSpec, Library, CompiledDesign]] = {}
_CACHE_MAX = 512


def _params_key(params: dict[str, Any] | None) -> str:
    if not params:  # most runs: what json.dumps({}) gives, without encoding it per run
        return "{}"
    return json.dumps(params, sort_keys=True, default=str)


def compiled(design: DesignSpec, library: Library, params: dict[str, Any] | None,
             stack: tuple[str, ...] = ()) -> CompiledDesign:
    """The cached compiled design (compiling it on a miss; sub-designs go through here too)."""
    key = (design.name, _params_key(params), id(library))
    hit = _CACHE.get(key)
    if hit is not None and hit[1] is library and (hit[0] is design or hit[0] == design):
        return hit[2]
    cd = CompiledDesign(design, library, params, stack, compile_sub=compiled)
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (design, library, cd)
    return cd


def compile_design(design: DesignSpec | str, library: Library, params: dict[str, Any] | None = None) -> CompiledDesign:
    """Validate and compile a design (cached by design name, params and library; a changed design
    of the same name is recompiled). Raises :class:`~masbench.spec.problems.SpecError` if invalid."""
    spec = library.design(design) if isinstance(design, str) else design
    return compiled(spec, library, params)


def clear_cache() -> None:
    """Forget every compiled graph."""
    _CACHE.clear()


__all__ = ["CompiledDesign", "clear_cache", "compile_design", "compiled"]
