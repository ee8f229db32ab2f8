"""Merging a worker's part file into the store (masbench.store.merge_into): rows per table counted by
hand, texts stored once, the runs table left to the driver, a merge repeated after a simulated driver
death (the part outlived its merge) adds nothing, whichever table the part's first row is in, and a
merge that fails leaves the store as it was."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from masbench.store import Store, StoreWriter, merge_into
from masbench.store import merge as dbmod


def _part(path: Path, *, calls: int = 0, results: int = 0, pool: int = 0, texts: tuple[str, ...] = (),
          run: bool = False) -> Path:
    s = Store(path)
    w = StoreWriter(s)
    for i in range(calls):
        w.add("calls", {"run_id": "r", "call_id": f"{path.stem}-c{i}", "purpose": "design", "design": "cot",
                        "task_id": f"t{i}", "seed": 0})
    for i in range(results):
        w.add("results", {"run_id": "r", "design": "cot", "task_id": f"{path.stem}-t{i}", "seed": 0, "status": "ok"})
    for i in range(pool):
        w.add("pool", {"run_id": "r", "task_id": f"{path.stem}-t{i}", "seed": 0, "sample_index": i})
    w.flush()
    for h in texts:  # content-addressed rows, written as the writer would (one per hash)
        s.con.execute("INSERT INTO texts VALUES (?, ?, ?)", [h, f"text {h}", 6])
    if run:
        s.con.execute("INSERT INTO runs (run_id) VALUES ('r')")
    s.close()
    return path


def _count(store: Store, table: str) -> int:
    return store.sql(f"SELECT count(*) FROM {table}")[0][0]


def test_rows_per_table_and_texts_once(tmp_path):
    target = Store(tmp_path / "main.duckdb")
    target.con.execute("INSERT INTO texts VALUES ('h1', 'text h1', 6)")  # already stored by another part
    a = _part(tmp_path / "a.duckdb", calls=3, results=2, pool=4, texts=("h1", "h2"), run=True)
    got = merge_into(target, a)
    # 3 calls, 2 results, 4 pool samples; texts: h2 only is new (h1 ignored, not counted); no runs row
    assert got["calls"] == 3 and got["results"] == 2 and got["pool"] == 4 and got["texts"] == 1
    assert "runs" not in got and _count(target, "runs") == 0
    assert set(got) == set(dbmod._schema.TABLES) - {"runs"}
    assert sum(got.values()) == 3 + 2 + 4 + 1
    assert sorted(r[0] for r in target.sql("SELECT text_hash FROM texts")) == ["h1", "h2"]
    # a second part with its own rows merges beside the first
    b = _part(tmp_path / "b.duckdb", calls=1, results=1)
    assert merge_into(target, b)["calls"] == 1
    assert (_count(target, "calls"), _count(target, "results"), _count(target, "pool")) == (4, 3, 4)
    target.close()


@pytest.mark.parametrize("rows", [{"calls": 2, "results": 1}, {"results": 2, "pool": 1}, {"pool": 3}],
                         ids=["calls", "results", "pool-only"])
def test_a_merge_repeated_after_the_driver_died_adds_nothing(tmp_path, rows):
    """The driver merged the part, then died before deleting it: the next start merges it again."""
    part = _part(tmp_path / "p.duckdb", **rows)
    target = Store(tmp_path / "main.duckdb")
    first = merge_into(target, part)
    assert {t: first[t] for t in rows} == rows
    before = {t: _count(target, t) for t in ("calls", "results", "pool")}
    target.close()
    target = Store(tmp_path / "main.duckdb")  # the restarted driver opens the store anew
    assert merge_into(target, part) == {}
    assert {t: _count(target, t) for t in ("calls", "results", "pool")} == before
    # the part is detached again and the threads setting restored: a third merge of another part works
    other = _part(tmp_path / "q.duckdb", calls=1)
    assert merge_into(target, other)["calls"] == 1
    assert target.sql("SELECT count(*) FROM duckdb_databases() WHERE database_name = 'part'")[0][0] == 0
    target.close()


def test_only_rows_of_the_parts_first_cell_decide_it_was_merged(tmp_path):
    """Another part's rows for the same run (different call ids and cells) are no sign this part was merged."""
    target = Store(tmp_path / "main.duckdb")
    merge_into(target, _part(tmp_path / "a.duckdb", calls=2, results=2, pool=2))
    got = merge_into(target, _part(tmp_path / "b.duckdb", calls=2, results=2, pool=2))
    assert (got["calls"], got["results"], got["pool"]) == (2, 2, 2)
    # an empty part: nothing to probe, nothing merged, every count 0
    empty = merge_into(target, _part(tmp_path / "e.duckdb"))
    assert empty and set(empty.values()) == {0}
    target.close()


def test_a_result_probe_matches_on_every_key_column(tmp_path):
    """The store holds a result of the same run and task at another seed, design or run: not this part's."""
    target = Store(tmp_path / "main.duckdb")
    w = StoreWriter(target)
    for run, design, seed in (("r", "cot", 1), ("r", "other", 0), ("r2", "cot", 0)):
        w.add("results", {"run_id": run, "design": design, "task_id": "p-t0", "seed": seed, "status": "ok"})
    for run, seed, idx in (("r", 1, 0), ("r", 0, 1), ("r2", 0, 0)):
        w.add("pool", {"run_id": run, "task_id": "q-t0", "seed": seed, "sample_index": idx})
    w.flush()
    assert merge_into(target, _part(tmp_path / "p.duckdb", results=1))["results"] == 1
    assert merge_into(target, _part(tmp_path / "q.duckdb", pool=1))["pool"] == 1
    target.close()


def test_a_failed_merge_rolls_back_and_restores_the_threads(tmp_path, monkeypatch):
    part = _part(tmp_path / "p.duckdb", calls=2, results=1)
    target = Store(tmp_path / "main.duckdb")
    target.con.execute("SET threads = 2")
    monkeypatch.setattr(dbmod._schema, "TABLES", ("runs", "calls", "results", "no_such_table"))
    with pytest.raises(duckdb.Error):
        merge_into(target, part)
    assert _count(target, "calls") == 0 and _count(target, "results") == 0  # rolled back whole
    assert target.sql("SELECT current_setting('threads')")[0][0] == 2
    assert target.sql("SELECT count(*) FROM duckdb_databases() WHERE database_name = 'part'")[0][0] == 0
    monkeypatch.undo()
    assert merge_into(target, part)["calls"] == 2  # and the same part merges afterwards
    target.close()


def test_the_merge_runs_on_one_thread(tmp_path, monkeypatch):
    seen = []
    real = dbmod._merged_already

    def spy(con):
        out = real(con)
        seen.append(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
        return out

    monkeypatch.setattr(dbmod, "_merged_already", spy)
    target = Store(tmp_path / "main.duckdb")
    target.con.execute("SET threads = 2")
    threads_during = []
    orig_tables = dbmod._schema.TABLES

    class Probe(tuple):
        def __iter__(self):
            threads_during.append(target.con.execute("SELECT current_setting('threads')").fetchall()[0][0])
            return super().__iter__()

    monkeypatch.setattr(dbmod._schema, "TABLES", Probe(orig_tables))
    merge_into(target, _part(tmp_path / "p.duckdb", calls=1))
    assert seen == [2] and threads_during == [dbmod.MERGE_THREADS] == [1]
    assert target.sql("SELECT current_setting('threads')")[0][0] == 2
    target.close()


def test_a_failure_before_the_transaction_is_raised_as_it_is(tmp_path, monkeypatch):
    """The probe fails before BEGIN: nothing to roll back, the probe's own error comes out, the part is detached."""
    part = _part(tmp_path / "p.duckdb", calls=1)
    target = Store(tmp_path / "main.duckdb")

    def probe(con):
        raise RuntimeError("probe failed")

    monkeypatch.setattr(dbmod, "_merged_already", probe)
    with pytest.raises(RuntimeError, match="^probe failed$"):
        merge_into(target, part)
    assert target.sql("SELECT count(*) FROM duckdb_databases() WHERE database_name = 'part'")[0][0] == 0
    target.close()


def test_a_part_with_more_texts_than_an_index_fits_merges_under_a_small_limit(tmp_path):
    """The texts have no primary key (migration 11): a part of 400,000 texts, 100,000 of them stored
    already, merges into a store at a 32 MB DuckDB limit — with the key, the same merge ran out of
    memory (its index must fit in memory: measured, 400,000 hashes at 32 MB on one thread; how a
    10M-call run's driver failed at its first merge at 128 MB) — and each hash is stored once
    (300,000 new; the part's duplicate rows too)."""
    part = tmp_path / "p.duckdb"
    _part(part)
    con = duckdb.connect(str(part))
    con.execute("INSERT INTO texts SELECT md5(i::VARCHAR), 'x', 1 FROM range(400000) r(i)")
    con.execute("INSERT INTO texts SELECT md5(i::VARCHAR), 'x', 1 FROM range(10) r(i)")  # the same hash twice
    con.close()
    target = Store(tmp_path / "main.duckdb", memory_limit_default="32MB")
    target.con.execute("INSERT INTO texts SELECT md5(i::VARCHAR), 'x', 1 FROM range(300000, 400000) r(i)")
    assert merge_into(target, part)["texts"] == 300_000
    assert target.sql("SELECT count(*), count(DISTINCT text_hash) FROM texts")[0] == (400_000, 400_000)
    target.close()


def test_migration_11_keeps_every_text_once_and_drops_the_key(tmp_path):
    """A store made by migrations 1–10 (texts keyed by hash) opened now: its texts are kept, and
    the table takes a hash twice (no key: the writer's and the merge's SQL keep them once)."""
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_version (version INTEGER, summary VARCHAR, applied_at TIMESTAMP DEFAULT current_timestamp)")
    for version, summary, sql in dbmod._schema.MIGRATIONS:
        if version > 10:
            break
        con.execute(sql)
        con.execute("INSERT INTO schema_version (version, summary) VALUES (?, ?)", [version, summary])
    con.execute("INSERT INTO texts VALUES ('h1', 'one', 3), ('h2', 'two', 3)")
    with pytest.raises(duckdb.ConstraintException):
        con.execute("INSERT INTO texts VALUES ('h1', 'one', 3)")
    con.close()
    st = Store(path)
    assert st.version() >= 11
    assert st.sql("SELECT * FROM texts ORDER BY ALL") == [("h1", "one", 3), ("h2", "two", 3)]
    st.con.execute("INSERT INTO texts VALUES ('h1', 'one', 3)")  # no key any more
    assert st.sql("SELECT count(*) FROM texts")[0][0] == 3
    st.close()
