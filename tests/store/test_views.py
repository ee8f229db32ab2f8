"""Views are (re)created on a write-open only when the file's views are not the listed ones."""

from __future__ import annotations

import duckdb

from masbench.store import VIEWS, Store, register_view
from masbench.store.views import views_digest


def _views(path) -> dict[str, tuple[str | None, str]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute("SELECT view_name, comment, sql FROM duckdb_views() WHERE NOT internal").fetchall()
    finally:
        con.close()
    return {name: (comment, sql) for name, comment, sql in rows}


def test_a_fresh_store_holds_every_view_stamped_with_the_lists_digest(tmp_path):
    p = tmp_path / "s.duckdb"
    Store(p).close()
    held = _views(p)
    assert set(VIEWS) <= set(held)
    assert {held[name][0] for name in VIEWS} == {f"masbench views {views_digest()}"}


def test_a_foreign_view_is_made_again_on_the_next_write_open(tmp_path):
    # every listed view present, one of them as an older masbench (another digest) left it
    p = tmp_path / "s.duckdb"
    Store(p).close()
    con = duckdb.connect(str(p))
    con.execute("CREATE OR REPLACE VIEW run_summary AS SELECT 1 AS x")
    con.execute("COMMENT ON VIEW run_summary IS 'masbench views 0123456789abcdef01234567'")
    con.close()
    with Store(p, read_only=True) as st:  # a read-only open changes nothing
        assert [c for c, in st.sql("SELECT column_name FROM (DESCRIBE run_summary)")] == ["x"]
    with Store(p) as st:
        assert "results" in [c for c, in st.sql("SELECT column_name FROM (DESCRIBE run_summary)")]
    assert _views(p)["run_summary"][0] == f"masbench views {views_digest()}"


def test_a_dropped_view_is_made_again_on_the_next_write_open(tmp_path):
    p = tmp_path / "s.duckdb"
    Store(p).close()
    con = duckdb.connect(str(p))
    con.execute("DROP VIEW paired_summary")
    con.close()
    with Store(p) as st:
        assert st.sql("SELECT count(*) FROM paired_summary") == [(0,)]


def test_views_stamped_with_the_current_digest_are_left_as_they_are(tmp_path):
    p = tmp_path / "s.duckdb"
    Store(p).close()
    stamp = f"masbench views {views_digest()}"
    con = duckdb.connect(str(p))
    con.execute("CREATE OR REPLACE VIEW run_summary AS SELECT 1 AS x")
    con.execute(f"COMMENT ON VIEW run_summary IS '{stamp}'")
    con.close()
    with Store(p) as st:  # the stamp says these are the listed views: nothing is recreated
        assert [c for c, in st.sql("SELECT column_name FROM (DESCRIBE run_summary)")] == ["x"]


def test_a_newly_registered_view_changes_the_digest_and_is_created_on_reopen(tmp_path):
    p = tmp_path / "s.duckdb"
    Store(p).close()
    before = views_digest()
    try:
        register_view("zz_test_run_ids", "SELECT run_id FROM runs")
        assert views_digest() != before
        with Store(p) as st:
            assert st.sql("SELECT count(*) FROM zz_test_run_ids") == [(0,)]
        assert _views(p)["run_summary"][0] == f"masbench views {views_digest()}"
    finally:
        VIEWS.remove("zz_test_run_ids")
    assert views_digest() == before
