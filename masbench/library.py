"""Find and load declarative files (agents, designs, suites, handbooks, models) by name.

Search order: explicit roots (``--lib DIR``), then ``$MASBENCH_PATH`` (os.pathsep-separated), then
the current directory, then the libraries bundled with masbench. A root is a folder that holds
any of ``agents/``, ``baselines/``, ``orchestrators/``, ``tasks/``, ``skills/``, ``models/``. The
first file that declares a name wins, so a user's ``agents/solver.yaml`` shadows the bundled one.
A model YAML has no ``name`` field: its name is its file stem (``models/local-server.yaml`` is
``local-server``, what ``masbench run SUITE --model default=local-server`` names).

Nothing here executes anything: files are parsed (PyYAML safe loader) and validated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

from pydantic import ValidationError

from .registry import CHECKS, checks_for, load_ref
from .spec import KINDS, AgentSpec, DesignSpec, ProgramSpec, Spec, SuiteSpec, spec_class
from .spec.declared import declared_name, keep
from .spec.problems import Problem, SpecError, problem_at, problems_from_validation
from .spec.yamlpos import Located, YamlSyntaxError, load_yaml_file

if TYPE_CHECKING:
    from .spec.handbook import HandbookSpec

FOLDERS: dict[str, tuple[str, ...]] = {
    "agent": ("agents",),
    "design": ("baselines", "orchestrators", "orchestrators/generated"),
    "suite": ("tasks",),
    "handbook": ("skills",),
    "model": ("models",),
}
"""Kind → folders (relative to a root) that hold files of that kind."""

S = TypeVar("S", bound=Spec)

Check = Callable[[Any, Located, "Library"], list[Problem]]
"""``check(spec, located, library) -> [Problem]``, run after schema validation."""


def register_check(kind: str) -> Callable[[Check], Check]:
    """Decorator: add a semantic check for one kind (kept in :data:`masbench.registry.CHECKS`)."""

    def deco(fn: Check) -> Check:
        CHECKS.add(f"{kind}.{fn.__module__}.{fn.__qualname__}", fn, replace=True)
        return fn

    return deco


def bundled_root() -> Path:
    """Where the bundled libraries live: inside the wheel (``masbench/_library``) or, in a source
    checkout, the repository root."""
    here = Path(__file__).resolve().parent
    packaged = here / "_library"
    return packaged if packaged.is_dir() else here.parent


def detect_kind(path: Path, data: Any) -> str | None:
    """Kind of a file, by its folder, else by its keys."""
    parts = {p.lower() for p in path.resolve().parts[-3:-1]}
    for kind, folders in FOLDERS.items():
        if any(f.split("/")[-1] in parts for f in folders):
            return kind
    if not isinstance(data, dict):
        return None
    if "nodes" in data:
        return "design"
    if "designs" in data and "tasks" in data:
        return "suite"
    if "prompt" in data:
        return "agent"
    if "profiles" in data or "taxonomy" in data:
        return "handbook"
    if "id" in data:
        return "model"
    return None


@dataclass
class Loaded:
    """A validated spec with where it came from."""

    kind: str
    spec: Spec
    located: Located
    checks: str = ""
    """The name its semantic checks are registered under (the kind, or a design form such as
    ``program``; empty: the kind)."""

    @property
    def path(self) -> Path:
        return Path(self.located.file)

    def typed(self, cls: type[S]) -> S:
        """The spec, known to be a ``cls`` (the class :data:`~masbench.spec.KINDS` maps ``kind`` to);
        a TypeError if something else was loaded or registered under that kind."""
        return _as(self.spec, cls, f"{self.located.file}: {self.kind}")


def _as(spec: Any, cls: type[S], what: str) -> S:
    if not isinstance(spec, cls):
        raise TypeError(f"{what} is a {type(spec).__name__}, not a {cls.__name__}")
    return spec


class Library:
    """Loads specs by name from user roots first, then the bundled libraries."""

    def __init__(self, roots: Sequence[str | Path] | None = None, include_cwd: bool = True,
                 include_bundled: bool = True):
        found: list[tuple[Path, str]] = [(Path(r), "library root") for r in (roots or [])]
        env = os.environ.get("MASBENCH_PATH")
        if env:
            found += [(Path(p), "MASBENCH_PATH") for p in env.split(os.pathsep) if p]
        if include_cwd:
            found.append((Path.cwd(), "working directory"))
        if include_bundled:
            found.append((bundled_root(), "bundled"))
        seen: set[Path] = set()
        self.roots: list[Path] = []
        self.origins: dict[Path, str] = {}
        """Root → where it comes from: ``library root`` (``--lib``), ``MASBENCH_PATH``, ``working
        directory`` or ``bundled`` (the bundled root is ``bundled`` even when it is also the cwd)."""
        bundled = bundled_root().resolve()
        for r, origin in found:
            rr = r.resolve()
            if rr not in seen:
                seen.add(rr)
                self.roots.append(rr)
                self.origins[rr] = "bundled" if rr == bundled else origin
        self._cache: dict[Path, Loaded] = {}
        self._unchecked: dict[Path, Loaded] = {}
        self._resolved: dict[Path, Path] = {}
        """Absolute path → its resolved form (a run looks its designs up by name once per cell)."""
        self._overlay: dict[str, dict[str, Loaded]] = {}
        self._indexed: dict[str, dict[str, Path]] = {}

    # ----- discovery -------------------------------------------------------------------------
    def files(self, kind: str) -> list[Path]:
        """Every YAML file of one kind, in search order."""
        out = []
        for root in self.roots:
            for folder in FOLDERS.get(kind, ()):
                d = root / folder
                if d.is_dir():
                    out += sorted(list(d.glob("*.yaml")) + list(d.glob("*.yml")))
        return out

    def _index(self, kind: str) -> dict[str, Path]:
        """Name (declared, and file stem) → file, for one kind: built the first time the kind is
        looked up (a suite that names no handbook never parses the handbooks)."""
        names = self._indexed.get(kind)
        if names is None:
            names = {}
            for f in self.files(kind):
                name = declared_name(f) or f.stem
                names.setdefault(name, f)
                names.setdefault(f.stem, f)
            keep()  # the names parsed for this index, for the next process (masbench.spec.declared)
            self._indexed[kind] = names
        return names

    def names(self, kind: str) -> list[str]:
        """Names available for a kind (user files first)."""
        names = dict.fromkeys(self._overlay.get(kind, {}))
        for f in self.files(kind):
            declared = declared_name(f)
            if declared is not None:
                names.setdefault(declared)
        keep()
        return list(names)

    def entries(self, kind: str) -> list[tuple[str, Path, Path]]:
        """``(name, file, root)`` of every name a kind has, the file that wins (search order; a
        model is named by its file stem, every other kind by the ``name`` it declares)."""
        out: dict[str, tuple[str, Path, Path]] = {}
        for root in self.roots:
            for folder in FOLDERS.get(kind, ()):
                d = root / folder
                if not d.is_dir():
                    continue
                for f in sorted(list(d.glob("*.yaml")) + list(d.glob("*.yml"))):
                    name = f.stem if kind == "model" else declared_name(f)
                    if name is not None and name not in out:
                        out[name] = (name, f, root)
        keep()
        return list(out.values())

    def has(self, kind: str, name: str) -> bool:
        return name in self._overlay.get(kind, {}) or name in self._index(kind)

    def add(self, kind: str, spec: Spec, file: str = "<memory>") -> None:
        """Register an in-memory spec (e.g. a generated design) that shadows files."""
        self._overlay.setdefault(kind, {})[getattr(spec, "name")] = Loaded(
            kind, spec, Located(data=spec.model_dump(by_alias=True), file=file))

    # ----- loading ---------------------------------------------------------------------------
    def load_path(self, path: str | Path, kind: str | None = None, check: bool = True) -> Loaded:
        """Parse, validate and (optionally) check one file. Raises :class:`SpecError`.

        A checked load is cached as checked; an unchecked one (``check=False``: schema only, for a
        checker that walks references itself) is cached apart, so it never passes for checked."""
        p = Path(path)
        key = self._resolve(p)
        for cache in (self._cache,) if check else (self._cache, self._unchecked):
            hit = cache.get(key)
            if hit is not None and (kind is None or hit.kind == kind):
                return hit
        if not p.is_file():
            raise SpecError([Problem(str(p), 1, 1, "<file>", "no such file")])
        try:
            located = load_yaml_file(p)
        except YamlSyntaxError as exc:
            raise SpecError([Problem(exc.file, exc.line, exc.col, "yaml", exc.msg)]) from None
        data = located.data
        kind = kind or detect_kind(p, data)
        if kind is None or kind not in KINDS:
            raise SpecError([problem_at(located, (), "cannot tell what kind of file this is "
                                        "(put it under agents/, baselines/, orchestrators/, tasks/, skills/ or models/)")])
        if not isinstance(data, dict):
            raise SpecError([problem_at(located, (), f"a {kind} file must be a mapping, got "
                                        f"{type(data).__name__ if data is not None else 'an empty document'}")])
        cls, checks = spec_class(kind, data)
        try:
            spec = cls.model_validate(data)
        except ValidationError as exc:
            raise SpecError(problems_from_validation(located, exc)) from None
        loaded = Loaded(kind, spec, located, checks)
        if not check:
            self._unchecked[key] = loaded
            return loaded
        problems = self.check(loaded)
        if problems:
            raise SpecError(problems)
        self._cache[key] = loaded
        return loaded

    def _resolve(self, p: Path) -> Path:
        """``p.resolve()``, remembered for absolute paths (a relative one depends on the cwd)."""
        if not p.is_absolute():
            return p.resolve()
        key = self._resolved.get(p)
        if key is None:
            key = self._resolved[p] = p.resolve()
        return key

    def check(self, loaded: Loaded) -> list[Problem]:
        """Run the registered semantic checks for a loaded spec."""
        problems: list[Problem] = []
        for fn in checks_for(loaded.checks or loaded.kind):
            problems += fn(loaded.spec, loaded.located, self)
        return problems

    def get(self, kind: str, name: str, check: bool = True) -> Loaded:
        """Load a spec by name (or by path, if ``name`` is an existing file); ``check=False``
        validates the schema only (see :meth:`load_path`)."""
        if kind in self._overlay and name in self._overlay[kind]:
            return self._overlay[kind][name]
        path = self._index(kind).get(name)
        if path is None:
            p = Path(name)
            if p.suffix in (".yaml", ".yml") and p.is_file():
                return self.load_path(p, kind, check)
            avail = ", ".join(sorted(self.names(kind))[:30]) or "none"
            raise SpecError([Problem("<library>", 1, 1, kind, f"no {kind} named {name!r} (available: {avail})")])
        return self.load_path(path, kind, check)

    def typed(self, kind: str, name: str, cls: type[S], check: bool = True) -> S:
        """:meth:`get`'s spec as a ``cls`` (see :meth:`Loaded.typed`)."""
        return _as(self.get(kind, name, check).spec, cls, f"{kind} {name!r}")

    def agent(self, name: str) -> AgentSpec:
        return self.typed("agent", name, AgentSpec)

    def design(self, name: str) -> DesignSpec:
        """A design of nodes by name. A program design (``kind: program``) is no graph: a
        :class:`SpecError` saying so (see :meth:`program`)."""
        loaded = self.get("design", name)
        if isinstance(loaded.spec, ProgramSpec):
            raise SpecError([problem_at(loaded.located, ("kind",), f"design {name!r} is a program design "
                                        "(kind: program), not a graph of nodes")])
        return _as(loaded.spec, DesignSpec, f"design {name!r}")

    def program(self, name: str) -> ProgramSpec | None:
        """The program design ``name`` (None if ``name`` is a design of nodes); raises
        :class:`SpecError` if there is no design of that name or it is invalid."""
        spec = self.get("design", name).spec
        return spec if isinstance(spec, ProgramSpec) else None

    def suite(self, name: str) -> SuiteSpec:
        return self.typed("suite", name, SuiteSpec)

    def handbook(self, name: str) -> HandbookSpec:
        from .spec.handbook import HandbookSpec  # deferred: a suite that routes nothing never builds it

        return self.typed("handbook", name, HandbookSpec)


_default: Library | None = None


def default_library() -> Library:
    """A process-wide library over cwd + bundled roots."""
    global _default
    if _default is None:
        _default = Library()
    return _default


# ----- reference checks (unknown names are errors, pinned to where they are used) ----------------
_at = problem_at


def check_suite(suite: SuiteSpec, located: Located, lib: Library) -> list[Problem]:
    """Suite check (``CHECKS["suite"]``): the pool's agent exists and the models define ``default``
    (the ``designs:`` entries are ``CHECKS["suite.designs"]``, beside what decides what they run)."""
    problems = []
    aliases = set(suite.models)
    if suite.cot_sc.enabled and not lib.has("agent", suite.cot_sc.agent):
        problems.append(_at(located, ("cot_sc", "agent"), f"unknown agent {suite.cot_sc.agent!r}"))
    if "default" not in aliases:
        problems.append(_at(located, ("models",), "models must define the alias 'default'"))
    return problems


def check_suite_sources(suite: SuiteSpec, located: Located, lib: Library) -> list[Problem]:
    """Suite check (``CHECKS["suite.sources"]``): each data source's reader and format is registered
    (:func:`masbench.bench.sources.check_sources`). The bench, which registers them, is imported
    only for a suite that reads data: generated tasks name no reader (``masbench validate`` of such
    a suite starts without it)."""
    if all(source.route() is None for source in suite.tasks):
        return []
    return load_ref("masbench.bench.sources:check_sources")(suite, located, lib)


def check_suite_judge(suite: SuiteSpec, located: Located, lib: Library) -> list[Problem]:
    """Suite check (``CHECKS["suite.judge"]``): the ``judge:`` agent exists and runs on a fixed model
    the suite defines (a judge is never routed)."""
    if suite.judge is None:
        return []
    name = suite.judge.agent
    if not lib.has("agent", name):
        return [_at(located, ("judge", "agent"), f"unknown agent {name!r}")]
    agent = lib.agent(name)
    if not isinstance(agent.model, str):
        return [_at(located, ("judge", "agent"), f"judge agent {name!r} routes its model; a judge needs a fixed one")]
    if agent.model not in suite.models and "/" not in agent.model:
        return [_at(located, ("judge", "agent"), f"judge agent {name!r} uses model alias {agent.model!r}, which "
                                                 "this suite's models do not define")]
    return []
