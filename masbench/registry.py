"""One registry type, so YAML can refer to code by name and nothing depends on import order.

A :class:`Registry` maps names to objects. An entry may be the object itself or a lazy
``"package.module:attr"`` string, imported the first time the entry is used — so a registry can
list everything it knows (``masbench validate`` checks suite references against designer names)
without importing the modules that implement them. Registration by decorator stays for user code::

    GENERATORS = Registry("generator", {"masbench.depth": "masbench.bench.axes:depth_generator"})

    @GENERATORS.register("my.generator")
    def mine(values, n, seed, split, **params): ...

A module that a lazy entry points at may register that entry itself as it is imported (a bundled
generator declared here by name and defined under ``@generator(...)`` there): the decorator's object
fills the entry (:meth:`Registry.add` accepts it from that module only), which keeps its ``module:attr``.

A registry made with ``plugins="masbench.ops"`` also holds the entry points of that group that
installed distributions declare (``[project.entry-points."masbench.ops"] mine = "pkg.mod:OP"``), read
the first time the registry is consulted and imported only when the name is used: installing a
plugin is enough, nothing imports it by hand. A plugin name that is already taken (a bundled entry,
one registered by code, another plugin's) is a :class:`PluginConflict` naming both.

(Shaped after inspect_ai's registry decorators and its entry-point plugins.)
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar, overload

T = TypeVar("T")

_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
"""What a lazy entry looks like; any other string (a view's SQL, say) is an ordinary value."""


class RegistryError(KeyError):
    """An unknown name, or a lazy entry that cannot be imported."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class PluginConflict(ValueError):
    """An installed plugin declares a name that is already taken (the message names both), or an
    entry point that is not ``module:attr``. Not a ``KeyError``: ``Mapping.get`` and the callers
    that treat an unknown name as absent must not swallow it."""


@dataclass(frozen=True)
class Plugin:
    """One entry point of an installed distribution, in a masbench group."""

    name: str
    """The entry point's name: the name YAML uses (``kind: mine``, ``format: mine``, …)."""
    ref: str
    """``"package.module:attr"``: what it points at (imported on first use)."""
    dist: str
    """The distribution that declares it (``pip install`` name)."""

    @property
    def origin(self) -> str:
        return f"plugin {self.dist}"


_INSTALLED: tuple[tuple[str, ...], Any] | None = None
"""``(sys.path, every entry point installed)`` as last read: one read of the installed metadata serves
every registry, as each read walks every installed distribution whatever group it is asked for."""


def entry_points_of(group: str) -> list[Plugin]:
    """The entry points installed distributions declare in ``group`` (nothing is imported). The
    installed metadata is read once per ``sys.path`` (:func:`forget_installed` reads it again)."""
    global _INSTALLED
    if _INSTALLED is None or _INSTALLED[0] != tuple(sys.path):
        from importlib.metadata import entry_points  # ~80 ms to import: only when a registry is consulted

        _INSTALLED = (tuple(sys.path), entry_points())
    out = []
    for ep in _INSTALLED[1].select(group=group):
        dist = ep.dist.name if ep.dist is not None else "?"
        ref = f"{ep.module}:{ep.attr}" if ep.attr else ep.value
        if not _REF.match(ref):
            raise PluginConflict(f"plugin {dist}: entry point {ep.name!r} of group {group!r} is {ep.value!r}; "
                                 "it must point at 'package.module:attr'")
        out.append(Plugin(ep.name, ref, dist))
    return out


def forget_installed() -> None:
    """Read the installed distributions' metadata again on the next :func:`entry_points_of`."""
    global _INSTALLED
    _INSTALLED = None


def _origin(obj: Any) -> str:
    """Where a non-plugin entry comes from: ``bundled`` (masbench's own) or the module of the code
    that registered it."""
    mod = obj.partition(":")[0] if isinstance(obj, str) and _REF.match(obj) else getattr(obj, "__module__", None)
    if not isinstance(mod, str):
        return "code"
    return "bundled" if mod == "masbench" or mod.startswith("masbench.") else f"code ({mod})"


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

    def __init__(self, what: str, entries: Mapping[str, T | str] | None = None, *, plugins: str | None = None,
                 adapt: Callable[[str, Any], T] | None = None):
        self.what = what
        """What the entries are (for error messages): ``generator``, ``view``, …"""
        self.plugins = plugins
        """The entry-point group whose entries this registry also holds (``masbench.ops``), or None."""
        self._adapt = adapt
        self._entries: dict[str, Any] = {}
        self._lazy: set[str] = set()
        self._refs: dict[str, str] = {}
        """Name → the ``"module:attr"`` a lazy entry was given as (kept once it is loaded)."""
        self._origins: dict[str, str] = {}
        self._from_plugin: dict[str, Plugin] = {}
        self._scanned = plugins is None
        self._conflict: PluginConflict | None = None
        self._loading: str | None = None
        """The plugin entry being imported (its module may register itself by decorator too)."""
        for name, obj in (entries or {}).items():
            self.add(name, obj)

    def _scan(self) -> None:
        """Read the plugin group once (the first time the registry is consulted); a conflict is
        raised now and on every later use."""
        if not self._scanned:
            self._scanned = True
            assert self.plugins is not None
            try:
                found = entry_points_of(self.plugins)
            except PluginConflict as exc:
                self._conflict, found = exc, []
            for p in found:
                if p.name in self._entries:
                    self._conflict = self._conflict or PluginConflict(
                        f"{self.what} {p.name!r} of {p.origin} ({p.ref}) conflicts with the "
                        f"{self._described(p.name)}: uninstall one, or rename the plugin's entry point")
                    continue
                self._entries[p.name] = self._refs[p.name] = p.ref
                self._lazy.add(p.name)
                self._origins[p.name] = p.origin
                self._from_plugin[p.name] = p
        if self._conflict is not None:
            raise self._conflict

    def rescan(self) -> None:
        """Forget the plugins read and read the group again on next use (a distribution installed
        or removed while the process runs)."""
        for name in list(self._from_plugin):
            self.remove(name)
        self._scanned, self._conflict = self.plugins is None, None
        forget_installed()

    def _described(self, name: str) -> str:
        """``bundled task format 'x' (masbench.bench…:f)``: an entry, for a conflict message."""
        obj = self._entries[name]
        where = self._refs.get(name) or getattr(obj, "__qualname__", type(obj).__qualname__)
        return f"{self._origins.get(name, 'bundled')} {self.what} {name!r} ({where})"

    def add(self, name: str, obj: T | str, *, replace: bool = False) -> None:
        """Register ``obj`` (or a lazy ``"module:attr"`` string) under ``name``. Replacing a
        plugin's entry is a :class:`PluginConflict`, ``replace`` or not."""
        if name == self._loading:
            return  # a plugin's module registering its own entry as it is imported: the entry point wins
        if name in self._from_plugin:
            p = self._from_plugin[name]
            raise PluginConflict(f"{self.what} {name!r} of {p.origin} ({p.ref}) conflicts with the {_origin(obj)} "
                                 f"{self.what} {name!r} being registered: uninstall one, or rename one of them")
        if not replace and self._fulfils(name, obj):
            self._entries[name] = obj  # the module a lazy entry points at, registering it as it loads
            self._lazy.discard(name)
            return
        if not replace and name in self._entries and self._entries[name] is not obj:
            raise ValueError(f"{self.what} {name!r} is already registered")
        self._entries[name] = obj
        self._origins[name] = _origin(obj)
        if isinstance(obj, str) and _REF.match(obj):
            self._lazy.add(name)
            self._refs[name] = obj
        else:
            self._lazy.discard(name)
            self._refs.pop(name, None)

    def _fulfils(self, name: str, obj: Any) -> bool:
        """``obj`` is what the lazy entry ``name`` (not a plugin's) stands for: registered by the
        module that entry points at, as that module is imported (a bundled generator declared by name
        here and registered by decorator there). The entry keeps its ``module:attr``."""
        ref = self._refs.get(name) if name in self._lazy and name not in self._from_plugin else None
        return ref is not None and ref.partition(":")[0] == getattr(obj, "__module__", None)

    def remove(self, name: str) -> None:
        """Unregister ``name`` (no error if it is not registered)."""
        self._entries.pop(name, None)
        self._lazy.discard(name)
        self._refs.pop(name, None)
        self._origins.pop(name, None)
        self._from_plugin.pop(name, None)

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
        self._scan()
        if name not in self._entries:
            known = ", ".join(sorted(self._entries)) or "none"
            raise RegistryError(f"unknown {self.what} {name!r} (known: {known})")
        if name in self._lazy:
            ref = self._entries[name]
            plugin = self._from_plugin.get(name)
            try:
                self._loading = name if plugin else None
                obj = load_ref(ref)
            except (ImportError, AttributeError) as exc:
                whose = f" ({plugin.origin})" if plugin else ""
                raise RegistryError(f"{self.what} {name!r}{whose} points at {ref!r}, which cannot be loaded: "
                                    f"{exc}") from exc
            finally:
                self._loading = None
            if name in self._lazy:  # else its module registered it as it loaded (a decorator): that object
                self._entries[name] = self._adapt(name, obj) if plugin and self._adapt else obj
                self._lazy.discard(name)
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        self._scan()
        return iter(self._entries)

    def __len__(self) -> int:
        self._scan()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        self._scan()
        return name in self._entries

    def names(self) -> list[str]:
        """Registered names, in registration order, then the plugins' (nothing is imported)."""
        self._scan()
        return list(self._entries)

    def where(self, name: str) -> str:
        """What an entry points at, ``module:attr``, without importing it (an entry registered as
        an object: its module and name)."""
        self._scan()
        if name in self._refs:
            return self._refs[name]
        obj = self._entries[name]
        mod = getattr(obj, "__module__", None)
        qual = getattr(obj, "__qualname__", None) or type(obj).__qualname__
        if "<locals>" in qual or not isinstance(mod, str):
            return mod if isinstance(mod, str) else qual
        return f"{mod}:{qual}"

    def origin(self, name: str) -> str:
        """Where ``name`` comes from: ``bundled``, ``plugin DIST`` or ``code (module)``."""
        self._scan()
        if name not in self._entries:
            raise RegistryError(f"unknown {self.what} {name!r}")
        return self._origins.get(name, "bundled")

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {self.names()})"



# ----- the registries whose names must be known below the code that implements them ---------------
# (a suite may list a per-task designer by name; `masbench validate` checks that name without
# importing the design package). Lazy entries point up the layer map by *name* only.

DESIGNERS: Registry = Registry("designer", {
    "meta-designer": "masbench.design.meta:run_meta_designer",
    "holistic-designer": "masbench.design.holistic:run_holistic_designer",
})
"""Per-task designers a suite may list as a design (``designs: [{design: meta-designer}]``): name →
``async runner(task, ctx, params, *, design_sink=None) -> DesignResult``."""

CHECKS: Registry = Registry("check", {
    "design": "masbench.runtime.design_analysis:check_design",
    "suite": "masbench.library:check_suite",
    "suite.designs": "masbench.design.runnable:check_suite_designs",
    "suite.sources": "masbench.library:check_suite_sources",
    "suite.judge": "masbench.library:check_suite_judge",
    "handbook": "masbench.spec.handbook:check_handbook",
    "program": "masbench.design.program_entry:check_program",
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


__all__ = ["CHECKS", "DESIGNERS", "ENGINES", "PAIRED_TESTS", "Plugin", "PluginConflict", "Registry", "RegistryError",
           "checks_for", "entry_points_of", "load_ref"]
