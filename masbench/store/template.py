"""A new store file starts as a copy of a template: the schema and views, made once and kept.

Creating a store's schema (the migrations) and its views takes ~0.3 s of CPU, nearly all of it
DuckDB binding the views' SQL; copying a closed file that already holds them takes under 1 ms, and
opening the copy ~30 ms (it is checked like any store: its version is the latest, its views carry the
current stamp). The template is keyed by the digest of the migrations, the views and DuckDB's
version, so a changed list (or another DuckDB) makes a new one.

A process makes its template in a temporary folder named by its pid, removed when it exits (one
left by a process that was killed is removed by the next process that makes a template), and keeps
a copy in the cache folder (:func:`kept_folder`: ``$MASBENCH_CACHE_DIR/store-templates``, else
``$XDG_CACHE_HOME`` or ``~/.cache`` ``/masbench/store-templates``; ``MASBENCH_CACHE_DIR=""`` keeps
none), named by its key and the digest of its bytes: the next process copies that one (its bytes
checked against the name) instead of binding the views again — a command's first store costs ~30 ms,
not ~0.3 s. A kept copy is placed whole (written aside, then linked), so a reader never sees half a
file; one whose bytes do not match its name is removed and made again; the newest :data:`KEEP` are
kept.
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
    """Digest of every migration, every view and DuckDB's version: the schema a template holds (in
    the file format of the DuckDB that wrote it)."""
    h = hashlib.blake2b(digest_size=12)
    h.update(f"duckdb {duckdb.__version__}\0".encode())
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


CACHE_ENV = "MASBENCH_CACHE_DIR"
"""A folder for what masbench keeps between processes (the store templates); empty: keep nothing."""


KEEP = 8
"""The most templates kept (the newest): one per schema a machine still runs, not one per mutant."""


def kept_folder() -> Path | None:
    """Where templates are kept between processes: ``$MASBENCH_CACHE_DIR/store-templates``, else
    ``$XDG_CACHE_HOME/masbench/store-templates`` (``~/.cache`` without it); None if
    ``$MASBENCH_CACHE_DIR`` is set empty."""
    base = os.environ.get(CACHE_ENV)
    if base is None:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "masbench")
    return Path(base) / "store-templates" if base else None


def _digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=12)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _kept(key: str) -> Path | None:
    """The kept template of ``key`` whose bytes match its name, if any (a mismatch is removed)."""
    folder = kept_folder()
    if folder is None:
        return None
    for found in folder.glob(f"{key}-*.duckdb"):
        if found.name == f"{key}-{_digest(found)}.duckdb":
            return found
        found.unlink(missing_ok=True)
    return None


def _keep(made: Path, key: str) -> None:
    """Place a copy of the template ``made`` in the kept folder (written aside, then linked into
    place: never half a file under the final name). A folder that cannot be written keeps nothing."""
    folder = kept_folder()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"{key}-{_digest(made)}.duckdb"
        part = folder / f".{final.name}.{os.getpid()}.{threading.get_ident()}.part"
        try:
            shutil.copyfile(made, part)
            os.link(part, final)
        finally:
            part.unlink(missing_ok=True)
        kept = sorted(folder.glob("*.duckdb"), key=lambda f: f.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:  # other schemas (another checkout, a mutation run's mutants)
            old.unlink(missing_ok=True)
    except OSError:  # FileExistsError: another process kept the same template first
        pass


def _template(build: Callable[[Path], None]) -> Path:
    global _folder
    key = template_key()
    with _lock:
        if _folder is not None and _folder[0] != os.getpid():
            _templates.clear()
            _folder = None
        made = _templates.get(key)
        if made is not None and made.is_file():
            return made
        try:
            kept = _kept(key)
        except OSError:
            kept = None
        if kept is not None:
            _templates[key] = kept
            return kept
        if _folder is None:
            sweep_stale()
            _folder = (os.getpid(), Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")))
            atexit.register(_remove, _folder[1], _folder[0])
        made = _folder[1] / f"{key}.duckdb"
        made.unlink(missing_ok=True)
        _local.building = True
        try:
            build(made)
        finally:
            _local.building = False
        _templates[key] = made
        _keep(made, key)
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
