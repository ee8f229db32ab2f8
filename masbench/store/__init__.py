"""The DuckDB store (and the live file beside it): versioned schema, one record type per row-written table, batched writer, SQL
views, the per-cell table list (resume and supersede), the run session, exports (Parquet, inspect_ai eval logs).

Each name is imported on first use (its module only): a command that only needs a row type or the
lock does not start DuckDB, pyarrow or numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .cells import (CELL_TABLES, DESIGN_KEY, POOL_DESIGN, POOL_KEY, CellRows, CellTable, clean_unfinished, done_keys,
                        drop_orphans, failure_reasons, supersede_failed)
    from .db import Store
    from .merge import merge_into
    from .design_views import designer_summary
    from .export import EXPORT_FORMATS, Exporter, export_parquet
    from .live import LiveBoard, describe_snapshot, live_path, read_live
    from .lock import StoreBusy, WriterLock
    from .outcomes import fill_outcomes
    from .rows import (ROWS, CallRow, CurveRow, DesignRow, MessageRow, NodeRow, PairedTestRow, PoolRow, ResultRow,
                       RoutingDecisionRow, Row, SequentialLookRow, TaskCurveRow, TextRow, ToolCallRow)
    from .runs import (LATEST, finish_run, has_run, latest_run, list_runs, new_run_id, recent_runs, run_config,
                       run_progress, set_run_plan, start_run, suite_config)
    from .schema import CONTENT_TABLES, MIGRATIONS, TABLES
    from .texts import text_hash
    from .session import RunFailed, RunSession, end_status, failure_reason
    from .views import VIEWS, ensure_views, register_view
    from .writer import StoreWriter

_EXPORTS = {
    "CELL_TABLES": "cells", "DESIGN_KEY": "cells", "POOL_DESIGN": "cells", "POOL_KEY": "cells", "CellRows": "cells",
    "CellTable": "cells", "clean_unfinished": "cells", "done_keys": "cells", "drop_orphans": "cells",
    "failure_reasons": "cells", "supersede_failed": "cells", "Store": "db", "merge_into": "merge",
    "designer_summary": "design_views", "EXPORT_FORMATS": "export", "Exporter": "export",
    "export_parquet": "export", "LiveBoard": "live", "describe_snapshot": "live",
    "live_path": "live", "read_live": "live", "StoreBusy": "lock", "WriterLock": "lock", "fill_outcomes": "outcomes",
    "ROWS": "rows", "CallRow": "rows", "DesignRow": "rows", "MessageRow": "rows", "NodeRow": "rows",
    "PoolRow": "rows", "ResultRow": "rows", "RoutingDecisionRow": "rows", "Row": "rows", "TextRow": "rows",
    "ToolCallRow": "rows", "CurveRow": "rows", "TaskCurveRow": "rows", "PairedTestRow": "rows",
    "SequentialLookRow": "rows", "LATEST": "runs", "finish_run": "runs", "has_run": "runs", "latest_run": "runs",
    "list_runs": "runs", "new_run_id": "runs", "recent_runs": "runs", "run_config": "runs", "run_progress": "runs",
    "set_run_plan": "runs", "start_run": "runs", "suite_config": "runs", "CONTENT_TABLES": "schema",
    "MIGRATIONS": "schema", "TABLES": "schema", "text_hash": "texts", "RunFailed": "session", "RunSession": "session",
    "end_status": "session", "failure_reason": "session", "VIEWS": "views", "ensure_views": "views",
    "register_view": "views", "StoreWriter": "writer",
}
"""Each public name → the module (of this package) that defines it."""


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = ["CELL_TABLES", "CONTENT_TABLES", "CallRow", "CellRows", "CellTable", "CurveRow", "DESIGN_KEY", "DesignRow", "EXPORT_FORMATS",
           "Exporter", "LATEST",
           "LiveBoard", "MIGRATIONS", "MessageRow", "NodeRow", "POOL_DESIGN", "POOL_KEY", "PairedTestRow", "PoolRow", "ROWS", "ResultRow",
           "RoutingDecisionRow", "Row", "RunFailed", "RunSession", "SequentialLookRow", "Store", "StoreBusy", "StoreWriter", "TABLES",
           "TaskCurveRow", "TextRow", "ToolCallRow",
           "VIEWS", "WriterLock", "clean_unfinished", "describe_snapshot", "designer_summary", "done_keys", "drop_orphans", "end_status",
           "ensure_views", "export_parquet", "failure_reason", "failure_reasons", "fill_outcomes", "finish_run", "has_run",
           "latest_run", "list_runs", "live_path", "read_live", "merge_into", "new_run_id", "recent_runs", "register_view", "run_config", "run_progress",
           "set_run_plan", "start_run", "suite_config", "supersede_failed", "text_hash"]
