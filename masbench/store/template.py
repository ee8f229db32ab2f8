"""A new store file starts as a copy of a template: the schema and views, made once per process.

Creating a store's schema (the migrations) and its views takes ~110 ms, nearly all of it DuckDB
binding the views' SQL; copying a closed file that already holds them takes under 1 ms, and opening
the copy ~30 ms (it is checked like any store: its version is the latest, its views carry the
current stamp). A process that makes many stores (a test session makes hundreds, a driver one per
worker part) pays the binding once. The template is keyed by the digest of the migrations and the
views, so a changed list makes a new one. It lives in a temporary folder named by the process's pid,
removed when the process exits; one left by a process that was killed is removed by the next
process that makes a template.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Callable

import duckdb

from . import schema as _schema
from .views import views_digest

_lock = threading.Lock()
_local = threading.local()
_templates: dict[str, Path] = {}
_folder: tuple[int, Path] | None = None
"""(pid of the process that made it, the folder): a forked child makes its own."""


def template_key() -> str:
    """Digest of every migration and every view: the schema a template holds."""
    h = hashlib.blake2b(digest_size=12)
    for version, _summary, sql in _schema.MIGRATIONS:
        h.update(f"{version}\0{sql}\0".encode())
    h.update(views_digest().encode())
    return h.hexdigest()


PREFIX = "masbench-store-template-"
"""A template folder is ``PREFIX + PID + "-" + random`` in the temporary directory."""


def _remove(folder: Path, owner: int) -> None:
    if os.getpid() == owner:  # not from a forked child that inherited the handler
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def sweep_stale(root: Path | None = None) -> int:
    """Remove the template folders of processes that are gone (a killed process runs no exit
    handler: a run stopped by SIGKILL, a worker ended with ``os._exit``). Returns how many."""
    removed = 0
    for folder in Path(root or tempfile.gettempdir()).glob(PREFIX + "*-*"):
        pid = folder.name[len(PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def _template(build: Callable[[Path], None]) -> Path:
    global _folder
    key = template_key()
    with _lock:
        if _folder is None or _folder[0] != os.getpid():
            _templates.clear()
            sweep_stale()
            _folder = (os.getpid(), Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")))
            atexit.register(_remove, _folder[1], _folder[0])
        made = _templates.get(key)
        if made is not None and made.is_file():
            return made
        made = _folder[1] / f"{key}.duckdb"
        made.unlink(missing_ok=True)
        _local.building = True
        try:
            build(made)
        finally:
            _local.building = False
        _templates[key] = made
        return made


def seed_from_template(path: Path, build: Callable[[Path], None]) -> bool:
    """Put a copy of the template at ``path`` if no store is there yet (no file, no WAL beside it).
    ``build(p)`` makes a complete store at ``p`` (the template, made on first use; opening a store
    there must not seed it again, which the thread's building flag prevents). The copy is linked into
    place only if ``path`` is still free, so a store another process made meanwhile is kept. Returns
    whether the copy was placed; on any filesystem error nothing is placed, and the store is made the
    usual way."""
    if getattr(_local, "building", False) or path.exists() or Path(f"{path}.wal").exists():
        return False
    try:
        made = _template(build)
        part = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.seed")
        try:
            shutil.copyfile(made, part)
            os.link(part, path)
        finally:
            part.unlink(missing_ok=True)
    except (OSError, duckdb.Error):  # FileExistsError (another process made it first) included
        return False
    return True
