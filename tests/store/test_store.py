"""The DuckDB store: migrations, batched writer durability, Parquet export, `masbench runs`."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import duckdb
import pytest
from typer.testing import CliRunner

from masbench.cli import app
from masbench.store import MIGRATIONS, Store, StoreWriter, export_parquet, finish_run, start_run
from masbench.store import schema as schema_mod


def test_fresh_store_is_at_latest_version_and_reopen_applies_nothing(tmp_path):
    p = tmp_path / "s.duckdb"
    with Store(p) as st:
        assert st.version() == MIGRATIONS[-1][0]
    with Store(p) as st:
        assert st.migrate() == []


def test_version_reads_a_read_only_store(tmp_path):
    p = tmp_path / "s.duckdb"
    Store(p).close()
    with Store(p, read_only=True) as st:  # no CREATE on a read-only connection
        assert st.version() == MIGRATIONS[-1][0]
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with Store(empty, read_only=True) as st:
        assert st.version() == 0


def test_forward_migration_applies_once(tmp_path, monkeypatch):
    p = tmp_path / "s.duckdb"
    with Store(p) as st:
        st.sql("INSERT INTO runs(run_id, suite) VALUES ('keep', 'x')")
    extra = (MIGRATIONS[-1][0] + 1, "test column", "ALTER TABLE runs ADD COLUMN note VARCHAR;")
    monkeypatch.setattr(schema_mod, "MIGRATIONS", MIGRATIONS + [extra])
    with Store(p) as st:
        assert st.version() == extra[0]
        assert "note" in st.columns("runs")
        assert st.sql("SELECT run_id FROM runs") == [("keep",)]  # data survives
        assert st.migrate() == []


def test_writer_batches_and_rejects_unknown_columns(store):
    w = StoreWriter(store, flush_rows=1000)
    for i in range(2500):
        w.add("calls", {"call_id": str(i), "run_id": "r", "prompt_tokens": i})
    assert w.written["calls"] == 2000  # two automatic flushes of 1000
    w.flush()
    assert store.sql("SELECT count(*), sum(prompt_tokens) FROM calls")[0] == (2500, sum(range(2500)))
    w.add("calls", {"call_id": "x", "no_such_column": 1})
    try:
        w.flush()
        raise AssertionError("expected KeyError")
    except KeyError as exc:
        assert "no_such_column" in str(exc)
    assert store.sql("SELECT count(*) FROM calls")[0][0] == 2500


@pytest.mark.slow
def test_acknowledged_rows_survive_sigkill(tmp_path):
    p = tmp_path / "crash.duckdb"
    script = textwrap.dedent(f"""
        import os, signal, sys
        from masbench.store import Store, StoreWriter
        st = Store({str(p)!r}); w = StoreWriter(st, flush_rows=10**9)
        acked = 0
        for batch in range(5):
            for i in range(1000):
                w.add("calls", {{"call_id": f"{{batch}}-{{i}}", "run_id": "r"}})
            w.flush(); acked += 1000
            print("ACK", acked, flush=True)
        for i in range(777):  # buffered, never acknowledged
            w.add("calls", {{"call_id": f"late-{{i}}", "run_id": "r"}})
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    acked = int([ln for ln in proc.stdout.splitlines() if ln.startswith("ACK")][-1].split()[1])
    con = duckdb.connect(str(p))
    n, distinct = con.execute("SELECT count(*), count(DISTINCT call_id) FROM calls").fetchone()
    con.close()
    assert acked == 5000 and n == acked and distinct == n


def test_parquet_export_round_trips(store, tmp_path):
    start_run(store, "r1", "suite", {"a": 1}, {"default": "sim/weak"}, simulated=True)
    w = StoreWriter(store)
    for i in range(10):
        w.add("calls", {"call_id": str(i), "run_id": "r1", "cost_usd": 0.5})
        w.add("calls", {"call_id": f"o{i}", "run_id": "other", "cost_usd": 1.0})
    w.flush()
    files = export_parquet(store, tmp_path / "pq", run_id="r1")
    got = duckdb.sql(f"SELECT count(*), sum(cost_usd) FROM '{files['calls']}'").fetchall()[0]
    assert got == (10, 5.0)


def test_runs_command_lists_runs(tmp_path, monkeypatch):
    # the CLI's console takes its width from COLUMNS when masbench.cli.common is first imported,
    # which under xdist is often an earlier test's doing: set it here, as COLUMNS=250 would
    from masbench.cli import common
    monkeypatch.setattr(common.console, "width", 250)
    p = tmp_path / "s.duckdb"
    with Store(p) as st:
        start_run(st, "run-abc", "quick", {}, {"default": "sim/weak"}, simulated=True)
        finish_run(st, "run-abc")
    res = CliRunner().invoke(app, ["runs", "--store", str(p)], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "run-abc" in res.output and "finished" in res.output and "SIMULATED" in res.output
    res = CliRunner().invoke(app, ["runs", "--store", str(tmp_path / "missing.duckdb")])
    assert res.exit_code == 2


def test_a_transaction_commits_its_block_and_rolls_back_a_block_that_raises(tmp_path):
    st = Store(tmp_path / "t.duckdb")
    with st.transaction() as con:
        con.execute("INSERT INTO runs (run_id, suite) VALUES ('kept', 's')")
    with pytest.raises(ValueError, match="not a DuckDB error"):
        with st.transaction() as con:
            con.execute("INSERT INTO runs (run_id, suite) VALUES ('dropped', 's')")
            raise ValueError("not a DuckDB error")  # DuckDB would abort the transaction itself on its own errors
    assert st.sql("SELECT run_id FROM runs ORDER BY run_id") == [("kept",)]


def test_every_connection_has_a_memory_limit_and_the_variable_overrides_it(tmp_path, monkeypatch):
    """DuckDB's working memory is bounded on every connection a Store opens (new, reopened after a
    release, read-only) so a driver's memory does not grow with the store; a malformed override is
    an error naming the variable."""
    from masbench.store.db import MEMORY_LIMIT_ENV

    def limit(st):
        return st.sql("SELECT current_setting('memory_limit')")[0][0]

    monkeypatch.delenv(MEMORY_LIMIT_ENV, raising=False)
    st = Store(tmp_path / "m.duckdb")
    assert limit(st) == "488.2 MiB"  # 512MB, as DuckDB prints it
    st.brief = True
    st.release()
    assert limit(st) == "488.2 MiB" and st.reconnects == 1
    st.close()
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "2GB")
    ro = Store(tmp_path / "m.duckdb", read_only=True)
    assert limit(ro) == "1.8 GiB"
    ro.close()
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "1GB'; DROP TABLE runs; --")
    with pytest.raises(ValueError, match=MEMORY_LIMIT_ENV):
        Store(tmp_path / "m.duckdb")
