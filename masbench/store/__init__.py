"""The DuckDB store: versioned schema, batched writer, SQL views, Parquet export."""

from .db import Store, merge_into
from .export import export_parquet
from .lock import StoreBusy, WriterLock
from .runs import finish_run, latest_run, list_runs, new_run_id, run_config, run_progress, start_run, suite_config
from .schema import MIGRATIONS, TABLES
from .views import VIEWS, ensure_views, register_view
from .rows import ROWS, CallRow, DesignRow, NodeRow, PoolRow, ResultRow, RoutingDecisionRow, Row
from .writer import StoreWriter

__all__ = ["MIGRATIONS", "ROWS", "CallRow", "DesignRow", "NodeRow", "PoolRow", "ResultRow", "RoutingDecisionRow", "Row",
           "Store", "StoreBusy", "StoreWriter", "TABLES", "VIEWS", "WriterLock", "ensure_views",
           "export_parquet", "finish_run", "latest_run", "list_runs", "merge_into", "new_run_id", "register_view",
           "run_config", "run_progress", "start_run", "suite_config"]
