"""The ``name`` a YAML file declares, remembered by the file's content within a process and between
processes.

A library finds a design or an agent by the name its file declares, so the first lookup of a kind
reads every file of that kind: parsing the ~80 bundled files with positions took ~30 ms of CPU in
every command (``masbench validate``, the start of ``masbench run``). The names found are kept in a
small JSON table in the cache folder (``$MASBENCH_CACHE_DIR/declared-names``, else
``$XDG_CACHE_HOME`` or ``~/.cache`` ``/masbench/declared-names``; ``MASBENCH_CACHE_DIR=""`` keeps
nothing), keyed by each file's content digest; the table's own file is named by a digest of the code
that decides a name (this module, the YAML reader, its limits, PyYAML's version), so changed code
never reads an old answer. A file is still read and hashed every time: only the parse is saved.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import yaml

from . import limits, yamlpos
from .limits import USER_FILE_LIMITS
from .yamlpos import YamlSyntaxError, parse_yaml

CACHE_ENV = "MASBENCH_CACHE_DIR"
"""A folder for what masbench keeps between processes; empty: keep nothing (as the store templates)."""

KEEP = 4
"""The most tables kept (the newest): one per version of the reading code a machine still runs."""

MAX_ENTRIES = 4096
"""The most names remembered (in memory and in the table); over it, everything is read again."""

_DECLARED: dict[bytes, str | None] = {}
"""Digest of a file's bytes → the ``name`` it declares (None: none). Keyed by content, so an edited
file is parsed again."""

_state: dict[str, object] = {"loaded": False, "added": False}


def kept_file() -> Path | None:
    """The table of this code's declared names, or None when ``$MASBENCH_CACHE_DIR`` is set empty."""
    base = os.environ.get(CACHE_ENV)
    if base is None:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "masbench")
    if not base:
        return None
    h = hashlib.blake2b(f"pyyaml {yaml.__version__}\0".encode(), digest_size=8)
    for mod in (sys.modules[__name__], yamlpos, limits):
        h.update(Path(str(mod.__file__)).read_bytes())
    return Path(base) / "declared-names" / f"{h.hexdigest()}.json"


def _load() -> None:
    """Read the kept table into memory, once per process (a missing or unreadable table: none)."""
    _state["loaded"] = True
    try:
        path = kept_file()
        table = json.loads(path.read_text(encoding="utf-8")) if path is not None else {}
    except (OSError, ValueError):
        return
    if isinstance(table, dict) and len(table) + len(_DECLARED) <= MAX_ENTRIES:
        for digest, name in table.items():
            if isinstance(digest, str) and (name is None or isinstance(name, str)):
                try:
                    _DECLARED.setdefault(bytes.fromhex(digest), name)
                except ValueError:
                    continue


def declared_name(path: Path) -> str | None:
    """The string ``name`` a YAML file declares; None if it declares none, or is not YAML we read
    (over the size limit, not UTF-8, malformed: loading it by path reports why)."""
    try:
        if path.stat().st_size > USER_FILE_LIMITS.max_bytes:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    key = hashlib.blake2b(raw, digest_size=16).digest()
    if key not in _DECLARED and not _state["loaded"]:
        _load()
    if key in _DECLARED:
        return _DECLARED[key]
    try:
        data = parse_yaml(raw.decode("utf-8"), str(path)).data
    except (UnicodeDecodeError, YamlSyntaxError):
        data = None
    declared = data.get("name") if isinstance(data, dict) else None
    name = declared if isinstance(declared, str) else None
    if len(_DECLARED) >= MAX_ENTRIES:
        _DECLARED.clear()
    _DECLARED[key] = name
    _state["added"] = True
    return name


def keep() -> None:
    """Write the names parsed since the last write to the kept table (atomically: a concurrent
    reader sees the old table or the new one); the oldest tables beyond :data:`KEEP` are removed.
    A cache folder that cannot be written is not an error: the names are parsed again next time."""
    if not _state["added"]:
        return
    _state["added"] = False
    try:
        path = kept_file()
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".declared-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({k.hex(): v for k, v in _DECLARED.items()}, fh)
            os.replace(tmp, path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
            return
        tables = sorted(path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in tables[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        return


def forget() -> None:
    """Forget the names remembered in this process (the kept table is read again on next use)."""
    _DECLARED.clear()
    _state.update(loaded=False, added=False)


__all__ = ["CACHE_ENV", "KEEP", "MAX_ENTRIES", "declared_name", "forget", "keep", "kept_file"]
