"""Run bookkeeping: create, finish and list runs; a run's suite config as written once by
:func:`run_config` and read back by :func:`suite_config` (the one reader of ``runs.config``)."""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Mapping
from typing import Any

from ..version import __version__
from ..spec.suite import SuiteSpec
from .db import Store


LATEST = "ORDER BY created_at DESC NULLS LAST, run_id DESC"
"""The newest run first; runs created in the same instant by run id (the one "latest" order)."""


def new_run_id(suite: str) -> str:
    return f"{suite}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"


def start_run(store: Store, run_id: str, suite: str, config: dict[str, Any], models: dict[str, str],
              simulated: bool, command: str = "", transcripts: str | None = None) -> None:
    """Create run ``run_id`` (status ``running``), or mark an existing one running again.
    ``transcripts``: what the run keeps of its calls' transcripts (``full | errors | none``;
    ``runs.transcripts``, the mode it was last started with; None leaves it as it was)."""
    with store.lock:
        exists = store.con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if exists:
            store.con.execute("UPDATE runs SET status = 'running', finished_at = NULL, "
                              "transcripts = coalesce(?, transcripts) WHERE run_id = ?", [transcripts, run_id])
        else:
            store.con.execute(
                "INSERT INTO runs(run_id, suite, status, config, models, simulated, masbench_version, host, command, "
                "transcripts) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                [run_id, suite, json.dumps(config, default=str), json.dumps(models), simulated, __version__,
                 socket.gethostname(), command, transcripts])


def finish_run(store: Store, run_id: str, status: str = "finished", reason: str | None = None) -> None:
    """Mark a run finished / interrupted / failed; ``reason`` says why it failed."""
    with store.lock:
        store.con.execute("UPDATE runs SET status = ?, reason = ?, finished_at = current_timestamp WHERE run_id = ?",
                          [status, reason, run_id])


def set_run_plan(store: Store, run_id: str, config_hash: str, total_cells: int) -> None:
    """Record what a (resumed) run is: its configuration hash and how many cells it has."""
    store.sql("UPDATE runs SET config_hash = ?, total_cells = ?, reason = NULL WHERE run_id = ?",
              [config_hash, total_cells, run_id])


def list_runs(store: Store):
    return store.df(f"SELECT * FROM run_summary {LATEST}")


def latest_run(store: Store, suite: str | None = None, config_hash: str | None = None) -> str | None:
    """The newest run (of ``suite``, with ``config_hash``, when given), or None."""
    where = [(c, v) for c, v in (("suite", suite), ("config_hash", config_hash)) if v is not None]
    q = ("SELECT run_id FROM runs" + (" WHERE " + " AND ".join(f"{c} = ?" for c, _ in where) if where else "")
         + f" {LATEST} LIMIT 1")
    row = store.sql(q, [v for _, v in where])
    return row[0][0] if row else None


def recent_runs(store: Store, n: int = 10) -> list[str]:
    """The ids of the ``n`` newest runs, newest first."""
    return [r[0] for r in store.sql(f"SELECT run_id FROM runs {LATEST} LIMIT ?", [n])]


def has_run(store: Store, run_id: str) -> bool:
    """The store holds a run with this id."""
    return bool(store.sql("SELECT 1 FROM runs WHERE run_id = ?", [run_id]))


def run_config(suite: SuiteSpec, overrides: Mapping[str, str | dict[str, Any]] | None = None,
               limit: int | None = None,
               until_decided: dict[str, Any] | None = None) -> dict[str, Any]:
    """What ``runs.config`` records: the suite as data, plus ``_overrides`` / ``_limit`` when given,
    and ``_until_decided`` (task cap, batch, matching unit) for a sequential run."""
    cfg = suite.model_dump(mode="json", by_alias=True)
    if overrides is not None:
        cfg.update({"_overrides": overrides, "_limit": limit})
    if until_decided is not None:
        cfg["_until_decided"] = until_decided
    return cfg


def suite_config(store: Any, run_id: str) -> tuple[SuiteSpec | None, dict[str, Any]]:
    """A run's suite read back from ``runs.config``, and its ``_``-prefixed extras (``_overrides``,
    ``_limit``). ``(None, extras)`` for a run without a config or with an old/foreign one."""
    rows = store.sql("SELECT config FROM runs WHERE run_id = ?", [run_id])
    if not rows or rows[0][0] is None:
        return None, {}
    cfg = json.loads(rows[0][0]) if isinstance(rows[0][0], str) else dict(rows[0][0])
    extra = {k: v for k, v in cfg.items() if k.startswith("_")}
    try:
        return SuiteSpec.model_validate({k: v for k, v in cfg.items() if not k.startswith("_")}), extra
    except Exception:  # noqa: BLE001 - an old or foreign config: no suite, callers degrade
        return None, extra


def run_progress(store: Store, run_id: str) -> dict[str, Any] | None:
    """A run's progress as the store holds it (live while it runs: rows land at every flush):
    status, reason, cells done of total, failed cells, calls, tokens and USD counted and spent."""
    rows = store.sql("SELECT status, reason, total_cells, created_at, finished_at, simulated FROM runs "
                     "WHERE run_id = ?", [run_id])
    if not rows:
        return None
    status, reason, total, created, finished, simulated = rows[0]
    (done, failed), = store.sql("""
        SELECT (SELECT count(*) FROM results WHERE run_id = $1)
                 + (SELECT count(DISTINCT (task_id, seed)) FROM pool WHERE run_id = $1),
               (SELECT count(*) FROM cell_failures WHERE run_id = $1)""", [run_id])
    spend = store.sql("SELECT counted_calls, spent_calls, counted_tokens, counted_usd, spent_usd FROM run_spend "
                      "WHERE run_id = ?", [run_id])
    calls, spent_calls, tokens, usd, spent_usd = spend[0] if spend else (0, 0, 0, 0.0, 0.0)
    return {"run_id": run_id, "status": status, "reason": reason, "cells_done": int(done), "cells_total": total,
            "failed_cells": int(failed), "calls": int(calls), "spent_calls": int(spent_calls), "tokens": int(tokens),
            "cost_usd": float(usd), "spent_usd": float(spent_usd), "created_at": created, "finished_at": finished,
            "simulated": bool(simulated)}
