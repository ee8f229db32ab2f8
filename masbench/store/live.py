"""The live status of a running run, whatever its engine: one small JSON file beside the store
(``<store>.live.json``), rewritten at most once a second by the driver with the whole run's cells
done, failed, the gateway totals summed over every worker and the rate limiter's windows.

``masbench status`` reads it while the run is ``running`` — the store alone lags behind a sharded
run, whose rows reach it only when the parts are merged. Written atomically (a temp file renamed
over it); removed when the run ends.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any



def live_path(store_path: Path) -> Path:
    return Path(str(store_path) + ".live.json")


class LiveBoard:
    """Writes one run's live file (see the module docstring)."""

    def __init__(self, store_path: Path, run_id: str, engine: str, workers: int, interval_s: float = 1.0):
        self.path = live_path(store_path)
        self.run_id, self.engine, self.workers, self.interval_s = run_id, engine, workers, interval_s
        self._last = 0.0

    def write(self, progress: Any, stats: dict[str, Any], limits: dict[str, Any] | None,
              shards: dict[int, dict[str, Any]] | None = None, force: bool = False) -> None:
        """``progress``: the run's counters (total, done, skipped, failed); ``shards``: per worker
        its last report (done, failed, saved: done cells its part has committed, pid)."""
        now = time.monotonic()
        if not force and now - self._last < self.interval_s:
            return
        self._last = now
        doc = {"run_id": self.run_id, "engine": self.engine, "workers": self.workers, "pid": os.getpid(),
               "updated": time.time(), "total": progress.total, "done": progress.done, "skipped": progress.skipped,
               "failed": progress.failed, "stats": {k: v for k, v in stats.items() if isinstance(v, (int, float))},
               "limits": limits or {},
               "shards": {str(i): {k: m.get(k) for k in ("done", "failed", "saved", "pid")} for i, m in (shards or {}).items()}}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def read_live(store_path: Path, run_id: str) -> dict[str, Any] | None:
    """The live file of ``run_id`` beside ``store_path`` (None: none, unreadable, or another run's)."""
    p = live_path(store_path)
    try:
        doc = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    return doc if doc.get("run_id") == run_id else None


def describe_snapshot(snap: dict[str, dict[str, Any]]) -> str:
    """One short text per model of a rate limiter's snapshot (:meth:`masbench.llm.limits.RateLimiter.snapshot`):
    ``sim/x: 540/600 req, 3/4 open, held 2s per 60s``."""
    parts = []
    for key, s in snap.items():
        lim = s["limits"]
        scale = lim["window_s"] / 60.0
        bits = []
        if lim.get("rpm"):
            bits.append(f"{s['requests']}/{lim['rpm'] * scale:g} req")
        if lim.get("tpm"):
            bits.append(f"{s['tokens']:,}/{lim['tpm'] * scale:,.0f} tok")
        if lim.get("max_in_flight"):
            bits.append(f"{s['open']}/{lim['max_in_flight']} open")
        w = f" per {lim['window_s']:g}s" if (lim.get("rpm") or lim.get("tpm")) else ""
        if s.get("paused_s"):
            bits.append(f"held {s['paused_s']:g}s")
        parts.append(f"{key}: {', '.join(bits)}{w}")
    return "; ".join(parts)


__all__ = ["LiveBoard", "describe_snapshot", "live_path", "read_live"]
