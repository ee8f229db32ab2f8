"""Where a program design's code is, and the check ``masbench validate`` runs on it.

An ``entry: module:function`` is imported from the working directory, else from the library root
the design file is in (the folder above ``orchestrators/`` or ``baselines/``); it must be callable
with two positional arguments, ``(task, endpoint)``. A ``command:``'s executable must exist (a
path, relative to that root, or a name on ``PATH``); ``{python}`` stands for this interpreter.
Every problem is pinned to the YAML line of the field it is about."""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

from ..spec.problems import Problem, problem_at
from ..spec.program import ProgramSpec
from ..spec.yamlpos import Located

PYTHON = "{python}"
"""The placeholder a ``command:`` argument may hold for this Python interpreter."""

_DESIGN_FOLDERS = {"baselines", "orchestrators", "generated"}


class EntryError(Exception):
    """An entry or command that cannot be used: the message says why."""


def program_root(design_file: str | Path) -> Path:
    """The library root of a design file (its folder's parent when that folder is a design
    folder), where its relative paths and modules are looked for."""
    p = Path(design_file).resolve().parent
    while p.name in _DESIGN_FOLDERS and p.parent != p:
        p = p.parent
    return p


def load_entry(entry: str, root: Path | None = None) -> Callable[..., Any]:
    """The function ``module:function`` names, imported from the working directory or ``root``.
    Raises :class:`EntryError` naming what is missing or wrong."""
    mod_name, _, attr = entry.partition(":")
    for d in (Path.cwd(), root):
        if d is not None and str(d) not in sys.path:
            sys.path.append(str(d))
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        if exc.name and mod_name.startswith(exc.name):
            raise EntryError(f"module {mod_name!r} not found (looked on the working directory"
                             f"{f' and {root}' if root else ''} and sys.path)") from None
        raise EntryError(f"module {mod_name!r} could not be imported: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed while importing
        raise EntryError(f"module {mod_name!r} could not be imported: {type(exc).__name__}: {exc}") from None
    fn = getattr(mod, attr, None)
    if fn is None:
        raise EntryError(f"module {mod_name!r} has no attribute {attr!r}")
    if not callable(fn):
        raise EntryError(f"{entry} is a {type(fn).__name__}, not a function")
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        raise EntryError(f"{entry} must take two positional arguments (task, endpoint); "
                         f"its signature is {attr}{inspect.signature(fn)}") from None
    except ValueError:  # no signature to read (a builtin): trust it
        pass
    return fn


def command_argv(command: list[str], root: Path) -> list[str]:
    """A ``command:`` as the argv to run: ``{python}`` replaced, the executable resolved (a path
    against ``root``, a bare name on ``PATH``). Raises :class:`EntryError` if it is not found."""
    argv = [a.replace(PYTHON, sys.executable) for a in command]
    exe = argv[0]
    if os.sep in exe or (os.altsep and os.altsep in exe):
        p = Path(exe) if Path(exe).is_absolute() else root / exe
        if not p.is_file():
            raise EntryError(f"command {exe!r} not found (looked at {p})")
        if not os.access(p, os.X_OK):
            raise EntryError(f"command {exe!r} is not executable (chmod +x {p})")
        argv[0] = str(p)
    else:
        found = shutil.which(exe)
        if found is None:
            raise EntryError(f"command {exe!r} not found on PATH")
        argv[0] = found
    return argv


def check_program(spec: ProgramSpec, located: Located, library: Any) -> list[Problem]:
    """The library's check of a program design: its entry loads and takes (task, endpoint), or
    its command's executable exists."""
    root = program_root(located.file)
    try:
        if spec.entry is not None:
            load_entry(spec.entry, root)
        elif spec.command is not None:
            command_argv(spec.command, root)
    except EntryError as exc:
        return [problem_at(located, ("entry",) if spec.entry is not None else ("command", 0), str(exc))]
    return []


__all__ = ["EntryError", "PYTHON", "check_program", "command_argv", "load_entry", "program_root"]
