"""New store files are seeded from a template (made once, kept between processes): the same file as
one made the usual way."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import duckdb
import pytest

from masbench.store import VIEWS, Store, register_view
from masbench.store import template as template_mod
from masbench.store.schema import MIGRATIONS
from masbench.store.views import create_views


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    """Each test keeps its templates in its own folder (not in ``tmp_path``, which some tests list),
    and starts with none made in this process."""
    monkeypatch.setenv(template_mod.CACHE_ENV, str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setattr(template_mod, "_templates", {})


def _excluded_in_order(sql: str) -> str:
    """A view's SQL with each ``EXCLUDE (...)`` list sorted: DuckDB keeps the list as a set and writes
    it back in another order when a write makes it save its catalog again (an INSERT into ``runs``
    does, on a store made the usual way too); the view is the same."""
    return re.sub(r"EXCLUDE \(([^()]*)\)", lambda m: f"EXCLUDE ({', '.join(sorted(m.group(1).split(', ')))})", sql)


def _catalog(path) -> tuple[list, list, list]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        cols = con.execute("SELECT table_name, column_name, data_type, column_default, is_nullable "
                           "FROM information_schema.columns WHERE table_schema = 'main' ORDER BY ALL").fetchall()
        views = [(name, _excluded_in_order(sql), comment) for name, sql, comment in con.execute(
            "SELECT view_name, sql, comment FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall()]
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
    assert _excluded_in_order("SELECT * EXCLUDE (b, a) FROM t") == "SELECT * EXCLUDE (a, b) FROM t"


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
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, template_mod.CACHE_ENV: ""}).stdout.split()
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
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, template_mod.CACHE_ENV: ""})
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


_MAKE = """
import json, sys
from masbench.store import Store
from masbench.store import template
Store(sys.argv[1]).close()
print(json.dumps({"built": template._folder is not None, "used": [str(p) for p in template._templates.values()]}))
"""


def _make_store(path, cache) -> dict:
    """A store made at ``path`` by a new process keeping its templates in ``cache``: whether it built
    a template, and the template it copied."""
    import json

    out = subprocess.run([sys.executable, "-c", _MAKE, str(path)], capture_output=True, text=True, check=True,
                         env={**os.environ, template_mod.CACHE_ENV: str(cache)}).stdout
    return json.loads(out)


def _applied(path) -> list:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT applied_at FROM schema_version ORDER BY version").fetchall()]
    finally:
        con.close()


def test_a_kept_template_spares_the_next_process_the_build(tmp_path):
    """The first process builds the template and keeps a copy named by the key and a digest of its
    bytes (worked out here with hashlib); the second builds nothing, copies the kept one, and its store
    holds the same catalog, its schema stamped when that store was made (after the first store's)."""
    import hashlib

    cache = tmp_path / "kept"
    first = _make_store(tmp_path / "a.duckdb", cache)
    assert first["built"]
    kept = sorted((cache / "store-templates").iterdir())
    assert len(kept) == 1
    key, digest = kept[0].stem.split("-")
    assert key == template_mod.template_key()
    assert digest == hashlib.blake2b(kept[0].read_bytes(), digest_size=12).hexdigest()
    second = _make_store(tmp_path / "b.duckdb", cache)
    assert second == {"built": False, "used": [str(kept[0])]}
    assert _catalog(tmp_path / "b.duckdb") == _catalog(tmp_path / "a.duckdb")
    assert min(_applied(tmp_path / "b.duckdb")) > max(_applied(tmp_path / "a.duckdb"))
    assert sorted((cache / "store-templates").iterdir()) == kept  # nothing more kept


def test_a_kept_template_whose_bytes_do_not_match_its_name_is_made_again(tmp_path):
    cache = tmp_path / "kept"
    folder = cache / "store-templates"
    folder.mkdir(parents=True)
    bad = folder / f"{template_mod.template_key()}-{'0' * 24}.duckdb"
    bad.write_bytes(b"not a store")
    made = _make_store(tmp_path / "a.duckdb", cache)
    assert made["built"] and not bad.exists()
    assert [f.name.split("-")[0] for f in folder.iterdir()] == [template_mod.template_key()]
    with Store(tmp_path / "a.duckdb") as st:
        assert st.version() == MIGRATIONS[-1][0]


def test_an_empty_cache_setting_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(template_mod.CACHE_ENV, "")
    assert template_mod.kept_folder() is None
    monkeypatch.delenv(template_mod.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert template_mod.kept_folder() == tmp_path / "xdg" / "masbench" / "store-templates"
    for i in range(2):  # each process builds its own
        assert _make_store(tmp_path / f"s{i}.duckdb", "")["built"]


def test_only_the_newest_templates_are_kept(tmp_path):
    """Other schemas' templates (another checkout, a mutant) beyond KEEP go, oldest first."""
    folder = template_mod.kept_folder()
    assert folder is not None
    folder.mkdir(parents=True)
    old = []
    for i in range(template_mod.KEEP + 2):
        f = folder / f"other{i}-x.duckdb"
        f.write_bytes(b"")
        os.utime(f, (1_000_000 + i, 1_000_000 + i))
        old.append(f)
    Store(tmp_path / "s.duckdb").close()
    left = sorted(folder.iterdir())
    assert len(left) == template_mod.KEEP
    assert [f for f in old if f.exists()] == old[-(template_mod.KEEP - 1):]  # ours is the newest
