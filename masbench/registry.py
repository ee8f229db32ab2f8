"""One registry type, so YAML can refer to code by name and nothing depends on import order.

A :class:`Registry` maps names to objects. An entry may be the object itself or a lazy
``"package.module:attr"`` string, imported the first time the entry is used — so a registry can
list everything it knows (``masbench validate`` checks suite references against designer names)
without importing the modules that implement them. Registration by decorator stays for user code::

    GENERATORS = Registry("generator", {"masbench.depth": "masbench.bench.axes:depth_generator"})

    @GENERATORS.register("my.generator")
    def mine(values, n, seed, split, **params): ...

(Shaped after inspect_ai's registry decorators; the lazy entries are like entry points.)
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Generic, TypeVar, overload

T = TypeVar("T")

_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
"""What a lazy entry looks like; any other string (a view's SQL, say) is an ordinary value."""


class RegistryError(KeyError):
    """An unknown name, or a lazy entry that cannot be imported."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


def load_ref(ref: str) -> Any:
    """Import ``"package.module:attr"`` (``attr`` may be dotted)."""
    mod, _, attr = ref.partition(":")
    if not mod or not attr:
        raise ValueError(f"a lazy registry entry is 'module:attr', got {ref!r}")
    obj: Any = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Mapping[str, T], Generic[T]):
    """Name → object, with lazy ``"module:attr"`` entries. Read it like a dict."""

    def __init__(self, what: str, entries: Mapping[str, T | str] | None = None):
        self.what = what
        """What the entries are (for error messages): ``generator``, ``view``, …"""
        self._entries: dict[str, Any] = {}
        self._lazy: set[str] = set()
        for name, obj in (entries or {}).items():
            self.add(name, obj)

    def add(self, name: str, obj: T | str, *, replace: bool = False) -> None:
        """Register ``obj`` (or a lazy ``"module:attr"`` string) under ``name``."""
        if not replace and name in self._entries and self._entries[name] is not obj:
            raise ValueError(f"{self.what} {name!r} is already registered")
        self._entries[name] = obj
        if isinstance(obj, str) and _REF.match(obj):
            self._lazy.add(name)
        else:
            self._lazy.discard(name)

    def remove(self, name: str) -> None:
        """Unregister ``name`` (no error if it is not registered)."""
        self._entries.pop(name, None)
        self._lazy.discard(name)

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...
    @overload
    def register(self, name: str, obj: T) -> T: ...

    def register(self, name: str, obj: Any = None) -> Any:
        """Register ``obj`` under ``name``; without ``obj``, a decorator."""
        if obj is not None:
            self.add(name, obj)
            return obj

        def deco(fn: T) -> T:
            self.add(name, fn)
            return fn

        return deco

    def __getitem__(self, name: str) -> T:
        if name not in self._entries:
            known = ", ".join(sorted(self._entries)) or "none"
            raise RegistryError(f"unknown {self.what} {name!r} (known: {known})")
        if name in self._lazy:
            ref = self._entries[name]
            try:
                self._entries[name] = load_ref(ref)
            except (ImportError, AttributeError) as exc:
                raise RegistryError(f"{self.what} {name!r} points at {ref!r}, which cannot be loaded: {exc}") from exc
            self._lazy.discard(name)
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def names(self) -> list[str]:
        """Registered names, in registration order (nothing is imported)."""
        return list(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {self.names()})"



# ----- the registries whose names must be known below the code that implements them ---------------
# (a suite may list a per-task designer by name; `masbench validate` checks that name without
# importing the design package). Lazy entries point up the layer map by *name* only.

DESIGNERS: Registry = Registry("designer", {
    "meta-designer": "masbench.design.per_task:run_meta",
    "holistic-designer": "masbench.design.per_task:run_holistic",
})
"""Per-task designers a suite may list as a design (``designs: [{design: meta-designer}]``): name →
``async runner(task, ctx, params, *, design_sink=None) -> DesignResult``."""

CHECKS: Registry = Registry("check", {
    "design": "masbench.runtime.design_analysis:check_design",
    "suite": "masbench.library:check_suite",
    "suite.sources": "masbench.bench.sources:check_sources",
    "handbook": "masbench.spec.handbook:check_handbook",
})
"""Semantic checks run by the library after schema validation: ``kind`` or ``kind.name`` →
``check(spec, located, library) -> list[Problem]``."""


PAIRED_TESTS: Registry = Registry("paired test", {
    "sign-flip": "masbench.harness.stats.tests.sign_flip:SignFlip",
    "student-t": "masbench.harness.stats.tests.student_t:StudentT",
    "bootstrap-t": "masbench.harness.stats.tests.bootstrap_t:BootstrapT",
    "bootstrap-t-plain": "masbench.harness.stats.tests.bootstrap_t:BootstrapTPlain",
})
"""Fixed-n paired tests a suite may name (``stats.test``): name → a class whose instances meet
:class:`masbench.harness.stats.tests.base.PairedTest`. The spec checks the name without importing."""


ENGINES: Registry = Registry("engine", {
    "local": "masbench.harness.engine_inprocess:LocalEngine",
    "processes": "masbench.harness.engine_processes:ProcessEngine",
    "ray": "masbench.harness.engine_ray:RayEngine",
})
"""What runs a run's cells (``masbench run --engine NAME``): name → a class taking a
:class:`masbench.harness.engine.EngineContext` and meeting :class:`masbench.harness.engine.Engine`."""


def checks_for(kind: str) -> list:
    """Every registered check for one kind (``kind`` and ``kind.*`` entries), loaded."""
    return [CHECKS[n] for n in CHECKS.names() if n == kind or n.startswith(kind + ".")]


__all__ = ["CHECKS", "DESIGNERS", "ENGINES", "PAIRED_TESTS", "Registry", "RegistryError", "checks_for", "load_ref"]
