"""The run session: lock first, then the store; an own run is marked by how the block ends
(finished / interrupted / failed with the reason); an attached run is never marked; a second
writer is refused before anything is opened."""

from __future__ import annotations

import asyncio

import pytest

from masbench.store import NodeRow, RunFailed, RunSession, Store, StoreBusy, WriterLock


def _run(store_path, exc: BaseException | None = None, *, attach: bool = False) -> RunSession:
    s = RunSession(store_path)
    with pytest.raises(type(exc)) if exc is not None else _nothing():
        with s:
            if attach:
                s.attach("r0")
            else:
                s.start("r1", "suite", {}, {}, True)
            s.writer.put(NodeRow(run_id=s.run_id, design="d", task_id="t", seed=0, node="n"))
            if exc is not None:
                raise exc
    return s


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _status(path, run_id="r1"):
    with Store(path, read_only=True) as st:
        return st.sql("SELECT status, reason, finished_at IS NOT NULL FROM runs WHERE run_id = ?", [run_id])[0]


@pytest.mark.slow
def test_an_own_run_is_marked_by_how_the_block_ends(tmp_path) -> None:
    p = tmp_path / "s.duckdb"
    assert _run(p).status == "finished" and _status(p) == ("finished", None, True)
    _run(p, RuntimeError("backend down"))
    assert _status(p) == ("failed", "RuntimeError: backend down", True)
    _run(p, RunFailed("model 'default' is misconfigured"))
    assert _status(p) == ("failed", "model 'default' is misconfigured", True)  # the message is the reason
    _run(p, KeyboardInterrupt())
    assert _status(p) == ("interrupted", None, True)
    _run(p, asyncio.CancelledError())
    assert _status(p) == ("interrupted", None, True)
    _run(p, ValueError("x" * 2000))
    assert len(_status(p)[1]) == 500
    with Store(p, read_only=True) as st:  # the writer was flushed every time, crash or not
        assert st.sql("SELECT count(*) FROM nodes WHERE run_id = 'r1'")[0][0] == 6


@pytest.mark.slow
def test_an_attached_run_is_written_but_never_marked(tmp_path) -> None:
    p = tmp_path / "s.duckdb"
    with RunSession(p) as s:
        s.start("r0", "suite", {}, {}, True)
    with Store(p) as st:
        st.sql("UPDATE runs SET status = 'finished-earlier' WHERE run_id = 'r0'")
    _run(p, RuntimeError("boom"), attach=True)
    assert _status(p, "r0")[0] == "finished-earlier"
    with Store(p, read_only=True) as st:
        assert st.sql("SELECT count(*) FROM nodes WHERE run_id = 'r0'")[0][0] == 1
    with pytest.raises(ValueError, match="no run 'nope'"):
        with RunSession(p) as s:
            s.attach("nope")


def test_a_second_writer_is_refused_before_the_store_is_opened(tmp_path) -> None:
    p = tmp_path / "s.duckdb"
    with WriterLock(p, what="the test"):
        with pytest.raises(StoreBusy, match="being written by .*the test"):
            RunSession(p).open()
    assert not p.exists()  # refused having touched nothing
    with RunSession(p) as s:  # the lock is free again once the holder let go
        with pytest.raises(StoreBusy):
            RunSession(p).open()
        assert s.store.sql("SELECT 1") == [(1,)]


def test_a_session_over_an_open_store_locks_its_file_and_leaves_it_open(tmp_path) -> None:
    st = Store(tmp_path / "s.duckdb")
    with RunSession(st) as s:
        s.start("r1", "suite", {}, {}, False)
        with pytest.raises(StoreBusy):
            WriterLock(st.path).acquire()
    assert st.sql("SELECT status FROM runs") == [("finished",)]  # still open
    WriterLock(st.path).acquire().release()
    st.close()


def test_a_failed_final_flush_fails_the_run(tmp_path) -> None:
    p = tmp_path / "s.duckdb"
    with pytest.raises(KeyError, match="unknown columns"):
        with RunSession(p) as s:
            s.start("r1", "suite", {}, {}, True)
            s.writer.add("nodes", {"run_id": "r1", "no_such_column": 1})
    status, reason, _ = _status(p)
    assert status == "failed" and "unknown columns" in reason
