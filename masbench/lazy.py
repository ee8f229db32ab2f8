"""Package facades that import each public name on first use (PEP 562): a command that needs one
row type or one function does not pay for the rest of the package (DuckDB, pyarrow, numpy, ...)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: ``exports`` maps each public name to the submodule
    that defines it (``"db"`` or ``".db"``); the first lookup imports that submodule and stores the
    value in ``namespace`` (the package's globals), so the next lookup is a plain global."""

    def __getattr__(name: str) -> object:
        mod = exports.get(name)
        if mod is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(mod if mod.startswith(".") else f".{mod}", package), name)
        namespace[name] = value
        return value

    return __getattr__


__all__ = ["lazy_exports"]
