"""What the sharding engines (``processes``, ``ray``) share: cells split into shards by a stable
hash, the options a worker is started with, the DuckDB part file each shard writes, the merge of
those parts into the store, and the one progress of the whole run summed from the shards' reports.

A part is named ``<run_id>-w<i>.duckdb`` in the parts directory (``parts/`` beside the store
unless ``--parts`` says otherwise). A worker that restarts on its shard (a retried Ray task)
resumes *in its part*: cells already done there are skipped, unfinished ones cleaned. The driver
merges a part once — when its shard ends, or at the next start for a killed run's — and a part
whose rows are already in the store (a driver killed between the merge and the delete) is deleted
without being merged again (:func:`~masbench.store.merge_into` checks).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import duckdb

from .. import telemetry
from ..llm import overrides_json
from ..store import Store, merge_into
from .cells import Cell
from .failures import RunAborted

STAT_KEYS = ("calls", "errors", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd", "breakers_open",
             "retry_after_waits")
"""The gateway totals summed over shards."""


def parts_dir(store_path: Path, parts: Path | None = None) -> Path:
    """Where a run's parts go: ``parts`` if given, else ``parts/`` beside the store."""
    return Path(parts) if parts else Path(store_path).parent / "parts"


def merge_parts(store: Store, run_id: str, store_path: Path, parts: Path | None = None) -> int:
    """Merge and delete every leftover part file of this run. Returns parts merged."""
    d = parts_dir(store_path, parts)
    n = 0
    if not d.is_dir():
        return 0
    for part in sorted(d.glob(f"{run_id}-w*.duckdb")):
        _merge_when_free(store, part)
        for f in (part, Path(str(part) + ".wal")):  # the part and its write-ahead log
            if f.exists():
                f.unlink()
        n += 1
    for f in d.glob(f"{run_id}-w*.cells.json"):
        f.unlink()
    return n


def _merge_when_free(store: Store, part: Path, wait_s: float = 30.0) -> None:
    """Merge one part, waiting up to ``wait_s`` for a worker still holding it (a stopped shard's
    process on its way out); past that, an error naming the part and what to do."""
    end = time.monotonic() + wait_s
    while True:
        try:
            merge_into(store, part)
            return
        except duckdb.IOException as exc:
            if "lock" not in str(exc) or time.monotonic() > end:
                raise RuntimeError(f"cannot merge the part {part}: {exc}. A worker of an earlier run may still be "
                                   "writing it: wait for it to end (or stop it) and rerun the same command") from exc
            time.sleep(0.5)


def shard(cells: list[Cell], n: int) -> list[list[str]]:
    """The cells' keys split over ``n`` shards by their stable hash."""
    shards: list[list[str]] = [[] for _ in range(n)]
    for c in cells:
        shards[c.shard(n)].append(c.key)
    return shards


def worker_options(ctx: Any, i: int, keys_file: Path, part: Path) -> dict[str, Any]:
    """What worker ``i`` is started with (JSON-able): the suite as the driver prepared it, its cells
    file and its part (``ctx`` is the run's :class:`~.engine.EngineContext`)."""
    opts, prep = ctx.opts, ctx.prep
    return {
        "suite": str(prep.suite_path), "lib": [str(p) for p in opts.lib],
        "overrides": overrides_json(prep.overrides),  # resolved: a worker never re-reads a model YAML
        "limit": opts.limit, "cache": opts.cache, "concurrency": ctx.concurrency, "run_id": ctx.run_id,
        "transcripts": prep.transcripts, "part": str(part), "cells": str(keys_file), "shard": i,
        "cache_path": str(ctx.cache_path),
        "otel": telemetry.carrier(),  # None when off; else the run span's traceparent (workers nest under it)
    }


class ShardTotals:
    """The whole run's progress from its shards' latest reports (``{"done", "failed", "stats"}``
    per shard, cumulative), written into the run's counters and totals."""

    def __init__(self, ctx: Any):
        self.ctx = ctx
        self.base_done = ctx.progress.done
        self.base_failed = ctx.progress.failed
        self.base_stats = {k: ctx.stats.get(k, 0) for k in STAT_KEYS}
        self.latest: dict[int, dict[str, Any]] = {}
        self.stats: dict[str, Any] = dict(self.base_stats)
        ctx.stats = self.stats
        if ctx.display:
            ctx.display.attach(self.stats)

    def report(self, i: int, msg: dict[str, Any]) -> None:
        self.latest[i] = msg
        self.ctx.shards[i] = msg
        for k in STAT_KEYS:
            self.stats[k] = self.base_stats[k] + sum(t.get("stats", {}).get(k, 0) for t in self.latest.values())
        self.ctx.progress.done = self.base_done + sum(t.get("done", 0) for t in self.latest.values())
        self.ctx.progress.failed = self.base_failed + sum(t.get("failed", 0) for t in self.latest.values())
        self.ctx.tick()


def end_shards(ctx: Any, totals: ShardTotals, fatal: list[str], errors: list[str]) -> dict[str, Any]:
    """The shards of one list of cells have ended: merge their parts, then stop the run if one met
    a misconfigured model (``fatal``) or a worker failed (``errors``); else the list's gateway totals."""
    merge_parts(ctx.session.store, ctx.run_id, ctx.store_path, ctx.opts.parts)
    if fatal:
        raise RunAborted(fatal[0])
    if errors:
        raise RuntimeError("; ".join(errors))
    return {k: totals.stats[k] - totals.base_stats[k] for k in STAT_KEYS}


__all__ = ["STAT_KEYS", "ShardTotals", "end_shards", "merge_parts", "parts_dir", "shard", "worker_options"]
