"""`masbench view` on a store written before transcripts (schema v6): the viewer reads read-only,
so the command brings the schema forward first instead of failing on every trace page."""

from __future__ import annotations

from pathlib import Path

import duckdb
from typer.testing import CliRunner

from masbench.cli import app
from masbench.registry import Registry
from masbench.store import Store, schema, views


def test_view_export_migrates_an_older_store(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "old.duckdb"
    with monkeypatch.context() as m:
        m.setattr(schema, "MIGRATIONS", [mig for mig in schema.MIGRATIONS if mig[0] <= 6])
        # that older code had no views over later tables (retrieval recall and tool usage read migration 8's,
        # the sequential views migration 9's, the judge views migration 10's)
        m.setattr(views, "VIEWS", Registry("view", {k: v for k, v in views.VIEWS.items()
                                                    if not k.startswith(("retrieval_recall", "sequential_", "judge_"))
                                                    and k != "tool_usage"}))
        Store(path).close()
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT max(version) FROM schema_version").fetchall() == [(6,)]
    con.close()
    res = CliRunner().invoke(app, ["view", "--store", str(path), "--export", str(tmp_path / "site")])
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT max(version) FROM schema_version").fetchall() == [(max(v for v, *_ in schema.MIGRATIONS),)]
    assert con.execute("SELECT count(*) FROM call_messages").fetchall() == [(0,)]
    con.close()
    assert (tmp_path / "site" / "index.html").is_file()
