"""``masbench export``: the format is looked up by name (an unknown one, or an unknown run, exits 2
naming it); the default is still Parquet."""

from __future__ import annotations

from typer.testing import CliRunner

from masbench.cli import app
from masbench.store import EXPORT_FORMATS, Store


def _store(tmp_path):
    path = tmp_path / "s.duckdb"
    Store(path).close()  # an empty store: the schema, no runs
    return path


def test_export_formats_are_registered_by_name():
    assert {"parquet", "inspect"} <= set(EXPORT_FORMATS)
    assert callable(EXPORT_FORMATS["inspect"])


def test_an_unknown_format_or_run_exits_2_naming_it(tmp_path):
    store = _store(tmp_path)
    r = CliRunner().invoke(app, ["export", "--store", str(store), "--out", str(tmp_path / "o"), "--format", "csv"])
    assert r.exit_code == 2 and "unknown --format 'csv'" in r.output and "inspect" in r.output
    r = CliRunner().invoke(app, ["export", "--store", str(store), "--out", str(tmp_path / "o"), "--format", "inspect",
                                 "--run", "nope"])
    assert r.exit_code == 2 and "no run 'nope'" in r.output


def test_parquet_stays_the_default_and_an_empty_store_exports_no_logs(tmp_path):
    store = _store(tmp_path)
    r = CliRunner().invoke(app, ["export", "--store", str(store), "--out", str(tmp_path / "pq")])
    assert r.exit_code == 0 and (tmp_path / "pq" / "calls.parquet").exists() and "calls.parquet" in r.output
    r = CliRunner().invoke(app, ["export", "--store", str(store), "--out", str(tmp_path / "logs"), "--format", "inspect"])
    assert r.exit_code == 0 and list((tmp_path / "logs").iterdir()) == []
