"""A durable response cache (SQLite, WAL): reruns hit it, worker processes share it.

The key covers model, api_base, messages, params **and the sample index**, so k
self-consistency samples of one prompt stay k distinct entries (a cache keyed on the request
alone collapses them into one — inspect_ai had that bug). Errors are never cached.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any


def cache_key(model_id: str, api_base: str | None, messages: list[dict[str, Any]], params: dict[str, Any],
              sample_index: int) -> str:
    """Stable SHA-256 over everything that determines a response."""
    blob = json.dumps([model_id, api_base or "", messages, params, sample_index],
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    """SQLite-backed cache. Writes are buffered and flushed in batches (``flush_every``) and on
    ``close()``; an unflushed entry lost in a crash only costs a repeated call."""

    def __init__(self, path: str | Path, flush_every: int = 64):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), timeout=10.0, check_same_thread=False, isolation_level=None)
        self._setup()
        self._pending: dict[str, str] = {}
        self._lock = threading.Lock()
        self.flush_every = flush_every
        self.hits = 0
        self.misses = 0

    def _setup(self, wait_s: float = 10.0) -> None:
        """WAL mode and the table. Worker processes open the shared cache at the same moment, and
        switching a new file to WAL upgrades a lock where SQLite answers "database is locked" at
        once rather than calling its busy handler (deadlock avoidance): retry for a while."""
        deadline = time.monotonic() + wait_s
        delay = 0.005
        while True:
            try:
                self._db.execute("PRAGMA busy_timeout=10000")
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.2)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            raw = self._pending.get(key)
            if raw is None:
                row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
                raw = row[0] if row else None
        if raw is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(raw)

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._pending[key] = json.dumps(value, separators=(",", ":"))
            if len(self._pending) >= self.flush_every:
                self._flush_locked()

    def _flush_locked(self) -> None:
        if not self._pending:
            return
        items = list(self._pending.items())
        self._db.execute("BEGIN")
        self._db.executemany("INSERT OR REPLACE INTO responses(key, value) VALUES (?, ?)", items)
        self._db.execute("COMMIT")
        self._pending.clear()

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def __len__(self) -> int:
        self.flush()
        return self._db.execute("SELECT count(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self.flush()
        self._db.close()
