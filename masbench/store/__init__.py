"""The DuckDB store: versioned schema, batched writer, SQL views, Parquet export."""

from .db import Store, merge_into
from .export import export_parquet
from .runs import finish_run, latest_run, list_runs, new_run_id, start_run
from .schema import MIGRATIONS, TABLES
from .views import VIEWS, register_view
from .writer import StoreWriter
from . import metrics as _metrics  # noqa: F401 - registers the metric views
from . import paired as _paired  # noqa: F401 - registers the paired-difference views
from ..design import views as _design_views  # noqa: F401,E402 - registers the design-search views

__all__ = ["MIGRATIONS", "Store", "StoreWriter", "TABLES", "VIEWS", "export_parquet", "finish_run", "latest_run",
           "list_runs", "merge_into", "new_run_id", "register_view", "start_run"]
