"""Sharding a run over worker processes (``--workers N``): the parent side (the child is
:mod:`.worker_main`).

One asyncio process tops out at ~200 litellm calls/s per core (measured), so past that we scale
with processes. The parent splits the remaining cells by a stable hash, starts N workers
(``python -m masbench.harness.worker_main``), each writing its own DuckDB part file, reads their
progress lines, and merges the parts into the main store when they finish. Parts left by a
killed run are merged at the next start (their acknowledged rows are kept; unfinished cells are
cleaned and rerun). A worker exits if its parent dies.

This is the seam where Ray fits later: a Ray executor would take the same shard files and part
paths, run ``worker_main.run_shard`` as remote tasks, and hand back part files to merge.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from .. import telemetry
from ..llm import overrides_json
from ..store import Store, merge_into
from .cells import Cell
from .failures import RunAborted
from .prepare import Prepared, RunOptions
from .progress import Counters, RunDisplay


def parts_dir(store_path: Path) -> Path:
    return Path(store_path).parent / "parts"


def merge_parts(store: Store, run_id: str, store_path: Path) -> int:
    """Merge and delete every leftover part file of this run. Returns parts merged."""
    d = parts_dir(store_path)
    n = 0
    if not d.is_dir():
        return 0
    for part in sorted(d.glob(f"{run_id}-w*.duckdb")):
        merge_into(store, part)
        for f in (part, part.with_suffix(".duckdb.wal"), Path(str(part) + ".wal")):
            if f.exists():
                f.unlink()
        n += 1
    for f in d.glob(f"{run_id}-w*.cells.json"):
        f.unlink()
    return n


async def run_sharded(opts: RunOptions, prep: Prepared, run_id: str, store: Store, store_path: Path, todo: list[Cell],
                      concurrency: int, progress: Counters, display: RunDisplay | None) -> dict[str, Any]:
    """Run ``todo`` cells on ``opts.workers`` processes; merge their parts into ``store``."""
    n = opts.workers
    d = parts_dir(store_path)
    d.mkdir(parents=True, exist_ok=True)
    shards: list[list[str]] = [[] for _ in range(n)]
    for c in todo:
        shards[c.shard(n)].append(c.key)
    procs = []
    totals: dict[int, dict[str, Any]] = {}
    agg: dict[str, Any] = {"calls": 0, "errors": 0, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0,
                           "cost_usd": 0.0, "breakers_open": 0, "retry_after_waits": 0}
    if display:
        display.attach(agg)
    base_done = progress.done
    fatal: list[str] = []
    for i, keys in enumerate(shards):
        if not keys:
            continue
        cells_file = d / f"{run_id}-w{i}.cells.json"
        cells_file.write_text(json.dumps(keys))
        worker_opts = {
            "suite": str(prep.suite_path), "lib": [str(p) for p in opts.lib],
            "overrides": overrides_json(prep.overrides),  # resolved: a worker never re-reads a model YAML
            "limit": opts.limit, "cache": opts.cache, "concurrency": concurrency, "run_id": run_id,
            "transcripts": prep.transcripts,
            "part": str(d / f"{run_id}-w{i}.duckdb"), "cells": str(cells_file), "cache_path": str(
                Path(store_path).with_suffix(".cache.sqlite")),
            "otel": telemetry.carrier(),  # None when off; else the run span's traceparent (workers nest under it)
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "masbench.harness.worker_main", json.dumps(worker_opts),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        procs.append((i, proc))

    async def read(i: int, proc) -> None:
        assert proc.stdout is not None
        async for line in proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "fatal" in msg:  # a worker met a misconfigured model: stop them all
                fatal.append(msg["fatal"])
                for _, p in procs:
                    if p.returncode is None:
                        p.terminate()
                continue
            totals[i] = msg
            for k in agg:
                agg[k] = sum(t.get("stats", {}).get(k, 0) for t in totals.values())
            progress.done = base_done + sum(t.get("done", 0) for t in totals.values())
            progress.failed = sum(t.get("failed", 0) for t in totals.values())
            if display:
                display.update()

    errors = []
    try:
        await asyncio.gather(*[read(i, p) for i, p in procs])
        for i, p in procs:
            rc = await p.wait()
            if rc != 0:
                err = (await p.stderr.read()).decode(errors="replace")[-2000:] if p.stderr else ""
                errors.append(f"worker {i} exited {rc}: {err}")
    except BaseException:
        for _, p in procs:
            if p.returncode is None:
                p.terminate()
        await asyncio.gather(*[p.wait() for _, p in procs], return_exceptions=True)
        merge_parts(store, run_id, store_path)
        raise
    merge_parts(store, run_id, store_path)
    if fatal:
        raise RunAborted(fatal[0])
    if errors:
        raise RuntimeError("; ".join(errors))
    return dict(agg)
