"""Run bookkeeping: create, finish and list runs."""

from __future__ import annotations

import json
import socket
import time
import uuid
from typing import Any

from .. import __version__
from .db import Store


def new_run_id(suite: str) -> str:
    return f"{suite}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"


def start_run(store: Store, run_id: str, suite: str, config: dict[str, Any], models: dict[str, str],
              simulated: bool, command: str = "") -> None:
    with store.lock:
        exists = store.con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if exists:
            store.con.execute("UPDATE runs SET status = 'running', finished_at = NULL WHERE run_id = ?", [run_id])
        else:
            store.con.execute(
                "INSERT INTO runs(run_id, suite, status, config, models, simulated, masbench_version, host, command) "
                "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?)",
                [run_id, suite, json.dumps(config, default=str), json.dumps(models), simulated, __version__,
                 socket.gethostname(), command])


def finish_run(store: Store, run_id: str, status: str = "finished", reason: str | None = None) -> None:
    """Mark a run finished / interrupted / failed; ``reason`` says why it failed."""
    with store.lock:
        store.con.execute("UPDATE runs SET status = ?, reason = ?, finished_at = current_timestamp WHERE run_id = ?",
                          [status, reason, run_id])


def list_runs(store: Store):
    return store.df("SELECT * FROM run_summary ORDER BY created_at DESC")


def latest_run(store: Store, suite: str | None = None) -> str | None:
    q = "SELECT run_id FROM runs" + (" WHERE suite = ?" if suite else "") + " ORDER BY created_at DESC LIMIT 1"
    row = store.sql(q, [suite] if suite else [])
    return row[0][0] if row else None


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
               (SELECT count(*) FROM results WHERE run_id = $1 AND status = 'failed')
                 + (SELECT count(DISTINCT (task_id, seed)) FROM pool WHERE run_id = $1 AND error IS NOT NULL)""",
                                [run_id])
    spend = store.sql("SELECT counted_calls, spent_calls, counted_tokens, counted_usd, spent_usd FROM run_spend "
                      "WHERE run_id = ?", [run_id])
    calls, spent_calls, tokens, usd, spent_usd = spend[0] if spend else (0, 0, 0, 0.0, 0.0)
    return {"run_id": run_id, "status": status, "reason": reason, "cells_done": int(done), "cells_total": total,
            "failed_cells": int(failed), "calls": int(calls), "spent_calls": int(spent_calls), "tokens": int(tokens),
            "cost_usd": float(usd), "spent_usd": float(spent_usd), "created_at": created, "finished_at": finished,
            "simulated": bool(simulated)}
