"""The DuckDB store (and the live file beside it): versioned schema, one record type per row-written table, batched writer, SQL
views, the per-cell table list (resume and supersede), the run session, Parquet export."""

from .cells import (CELL_TABLES, DESIGN_KEY, POOL_DESIGN, POOL_KEY, CellRows, CellTable, clean_unfinished, done_keys,
                    drop_orphans, failure_reasons, supersede_failed)
from .db import Store
from .merge import merge_into
from .design_views import designer_summary
from .export import export_parquet
from .live import LiveBoard, describe_snapshot, live_path, read_live
from .lock import StoreBusy, WriterLock
from .outcomes import fill_outcomes
from .rows import (ROWS, CallRow, DesignRow, MessageRow, NodeRow, PoolRow, ResultRow, RoutingDecisionRow, Row, TextRow,
                   ToolCallRow)
from .runs import (LATEST, finish_run, has_run, latest_run, list_runs, new_run_id, recent_runs, run_config,
                   run_progress, set_run_plan, start_run, suite_config)
from .schema import CONTENT_TABLES, MIGRATIONS, TABLES
from .texts import text_hash
from .session import RunFailed, RunSession, end_status, failure_reason
from .views import VIEWS, ensure_views, register_view
from .writer import StoreWriter

__all__ = ["CELL_TABLES", "CONTENT_TABLES", "CallRow", "CellRows", "CellTable", "DESIGN_KEY", "DesignRow", "LATEST",
           "LiveBoard", "MIGRATIONS", "MessageRow", "NodeRow", "POOL_DESIGN", "POOL_KEY", "PoolRow", "ROWS", "ResultRow",
           "RoutingDecisionRow", "Row", "RunFailed", "RunSession", "Store", "StoreBusy", "StoreWriter", "TABLES", "TextRow", "ToolCallRow",
           "VIEWS", "WriterLock", "clean_unfinished", "describe_snapshot", "designer_summary", "done_keys", "drop_orphans", "end_status",
           "ensure_views", "export_parquet", "failure_reason", "failure_reasons", "fill_outcomes", "finish_run", "has_run",
           "latest_run", "list_runs", "live_path", "read_live", "merge_into", "new_run_id", "recent_runs", "register_view", "run_config", "run_progress",
           "set_run_plan", "start_run", "suite_config", "supersede_failed", "text_hash"]
