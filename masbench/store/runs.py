"""Run bookkeeping: create, finish and list runs; a run's suite config as written once by
:func:`run_config` and read back by :func:`suite_config` (the one reader of ``runs.config``)."""

from __future__ import annotations

import json
import socket
import time
import uuid
from typing import Any

from .. import __version__
from ..spec.suite import SuiteSpec
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


def finish_run(store: Store, run_id: str, status: str = "finished") -> None:
    with store.lock:
        store.con.execute("UPDATE runs SET status = ?, finished_at = current_timestamp WHERE run_id = ?",
                          [status, run_id])


def list_runs(store: Store):
    return store.df("SELECT * FROM run_summary ORDER BY created_at DESC")


def latest_run(store: Store, suite: str | None = None) -> str | None:
    q = "SELECT run_id FROM runs" + (" WHERE suite = ?" if suite else "") + " ORDER BY created_at DESC LIMIT 1"
    row = store.sql(q, [suite] if suite else [])
    return row[0][0] if row else None


def run_config(suite: SuiteSpec, overrides: dict[str, str] | None = None, limit: int | None = None) -> dict[str, Any]:
    """What ``runs.config`` records: the suite as data, plus ``_overrides`` / ``_limit`` when given."""
    cfg = suite.model_dump(mode="json", by_alias=True)
    if overrides is not None:
        cfg.update({"_overrides": overrides, "_limit": limit})
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


