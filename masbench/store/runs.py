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
