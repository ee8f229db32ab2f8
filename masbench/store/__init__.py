"""The DuckDB store: versioned schema, batched writer, SQL views, Parquet export."""

from .db import Store, merge_into
from .export import export_parquet
from .runs import finish_run, latest_run, list_runs, new_run_id, run_config, start_run, suite_config
from .schema import MIGRATIONS, TABLES
from .views import VIEWS, ensure_views, register_view
from .writer import StoreWriter

__all__ = ["MIGRATIONS", "Store", "StoreWriter", "TABLES", "VIEWS", "export_parquet", "finish_run", "latest_run",
           "ensure_views", "list_runs", "merge_into", "new_run_id", "register_view", "run_config", "start_run", "suite_config"]
