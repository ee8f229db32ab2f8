"""New store files are seeded from a per-process template: the same file as one made the usual way."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import duckdb

from masbench.store import VIEWS, Store, register_view
from masbench.store import template as template_mod
from masbench.store.schema import MIGRATIONS
from masbench.store.views import create_views


def _catalog(path) -> tuple[list, list, list]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        cols = con.execute("SELECT table_name, column_name, data_type, column_default, is_nullable "
                           "FROM information_schema.columns WHERE table_schema = 'main' ORDER BY ALL").fetchall()
        views = con.execute("SELECT view_name, sql, comment FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall()
        versions = con.execute("SELECT version, summary FROM schema_version ORDER BY 1").fetchall()
    finally:
        con.close()
    return cols, views, versions


def test_a_seeded_store_holds_what_the_migrations_and_views_make(tmp_path):
    by_hand = tmp_path / "by_hand.duckdb"
    con = duckdb.connect(str(by_hand))
    con.execute("CREATE TABLE schema_version (version INTEGER, summary VARCHAR, applied_at TIMESTAMP DEFAULT current_timestamp)")
    for version, summary, sql in MIGRATIONS:
        con.execute(sql)
        con.execute("INSERT INTO schema_version(version, summary) VALUES (?, ?)", [version, summary])
    create_views(con)
    con.close()
    Store(tmp_path / "first.duckdb").close()  # makes the template if this process has none yet
    seeded = tmp_path / "seeded.duckdb"
    assert template_mod.seed_from_template(seeded, lambda p: Store(p).close())
    Store(seeded).close()
    assert _catalog(seeded) == _catalog(by_hand)
    assert _catalog(tmp_path / "first.duckdb") == _catalog(by_hand)


def test_an_existing_store_or_its_wal_is_never_replaced(tmp_path):
    p = tmp_path / "s.duckdb"
    with Store(p) as st:
        st.sql("INSERT INTO runs(run_id, suite) VALUES ('keep', 'x')")
    assert not template_mod.seed_from_template(p, lambda q: Store(q).close())
    with Store(p) as st:
        assert st.sql("SELECT run_id FROM runs") == [("keep",)]
    lone = tmp_path / "lone.duckdb"
    (tmp_path / "lone.duckdb.wal").write_bytes(b"")
    assert not template_mod.seed_from_template(lone, lambda q: Store(q).close())
    assert not lone.exists()


def test_a_changed_view_list_makes_a_new_template(tmp_path):
    before = template_mod.template_key()
    try:
        register_view("zz_template_probe", "SELECT 42 AS answer")
        assert template_mod.template_key() != before
        with Store(tmp_path / "new.duckdb") as st:
            assert st.sql("SELECT answer FROM zz_template_probe") == [(42,)]
    finally:
        VIEWS.remove("zz_template_probe")
    assert template_mod.template_key() == before
    with Store(tmp_path / "after.duckdb") as st:
        assert not st.sql("SELECT 1 FROM duckdb_views() WHERE view_name = 'zz_template_probe'")


def test_a_filesystem_that_refuses_the_link_gets_a_store_made_the_usual_way(tmp_path, monkeypatch):
    def refuse(src, dst):
        raise PermissionError("hard links not supported here")

    monkeypatch.setattr(template_mod.os, "link", refuse)
    p = tmp_path / "s.duckdb"
    assert not template_mod.seed_from_template(p, lambda q: Store(q).close())
    with Store(p) as st:
        assert st.version() == MIGRATIONS[-1][0]
        assert st.sql("SELECT count(*) FROM run_summary") == [(0,)]
    assert sorted(os.listdir(tmp_path)) == ["s.duckdb"]  # no copy left behind


def test_the_template_folder_goes_when_its_process_ends(tmp_path):
    code = textwrap.dedent(f"""
        from masbench.store import Store
        from masbench.store import template
        Store({str(tmp_path / "a.duckdb")!r}).close()
        Store({str(tmp_path / "b.duckdb")!r}).close()
        print(template._folder[1])
        print(len(list(template._folder[1].iterdir())))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[1] == "1"  # one template for both stores
    assert os.path.basename(out[0]).startswith(template_mod.PREFIX)
    assert not os.path.exists(out[0])


def test_a_killed_process_leaves_its_template_folder_and_the_next_one_removes_it(tmp_path):
    code = textwrap.dedent(f"""
        import os, signal
        from masbench.store import Store
        from masbench.store import template
        Store({str(tmp_path / "a.duckdb")!r}).close()
        print(template._folder[1], flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no exit handler runs
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    left = proc.communicate()[0].strip()
    assert proc.returncode == -9
    assert os.path.basename(left).startswith(f"{template_mod.PREFIX}{proc.pid}-") and os.path.isdir(left)
    root = tmp_path / "tmp"
    root.mkdir()
    dead = root / os.path.basename(left)
    os.rename(left, dead)
    mine = root / f"{template_mod.PREFIX}{os.getpid()}-x"  # a live process's folder stays
    mine.mkdir()
    odd = root / f"{template_mod.PREFIX}notapid-x"
    odd.mkdir()
    assert template_mod.sweep_stale(root) == 1
    assert sorted(p.name for p in root.iterdir()) == sorted([mine.name, odd.name])
