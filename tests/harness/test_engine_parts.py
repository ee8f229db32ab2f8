"""What the sharding engines share (masbench.harness.engine_parts), on hand-made parts and reports: a
run's leftover parts merged once and deleted (a part the driver merged before it died is deleted without
a second merge), shards by the cells' stable hash, and the run's totals summed from the shards' reports."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from masbench.harness import engine_parts as ep
from masbench.harness.failures import RunAborted
from masbench.store import Store, StoreWriter, merge_into


def _part(path: Path, n_calls: int) -> Path:
    s = Store(path)
    w = StoreWriter(s)
    for i in range(n_calls):
        w.add("calls", {"run_id": "r", "call_id": f"{path.stem}-{i}", "purpose": "design", "design": "d",
                        "task_id": f"t{i}", "seed": 0})
    w.flush()
    s.close()
    return path


def test_parts_dir_is_beside_the_store_unless_given(tmp_path):
    assert ep.parts_dir(tmp_path / "runs" / "s.duckdb") == tmp_path / "runs" / "parts"
    assert ep.parts_dir(tmp_path / "s.duckdb", tmp_path / "elsewhere") == tmp_path / "elsewhere"


def test_leftover_parts_of_the_run_are_merged_once_and_deleted(tmp_path):
    store_path = tmp_path / "s.duckdb"
    store = Store(store_path)
    parts = tmp_path / "parts"
    parts.mkdir()
    _part(parts / "r-w0.duckdb", 2)
    _part(parts / "r-w1.duckdb", 3)
    (parts / "r-w1.duckdb.wal").write_text("")
    (parts / "r-w0.cells.json").write_text("[]")
    _part(parts / "other-w0.duckdb", 4)  # another run's part: left alone
    (parts / "other-w0.cells.json").write_text("[]")
    # the driver merged w1 earlier and died before deleting it: it is deleted, not merged again
    merge_into(store, parts / "r-w1.duckdb")
    assert ep.merge_parts(store, "r", store_path) == 2
    assert store.sql("SELECT count(*) FROM calls")[0][0] == 5
    assert sorted(p.name for p in parts.iterdir()) == ["other-w0.cells.json", "other-w0.duckdb"]
    assert ep.merge_parts(store, "r", store_path) == 0  # nothing left
    assert ep.merge_parts(store, "r", store_path, tmp_path / "missing") == 0
    store.close()


def test_a_part_still_locked_is_an_error_naming_it(tmp_path, monkeypatch):
    def locked(store, part):
        raise duckdb.IOException("Could not set lock on file")

    monkeypatch.setattr(ep, "merge_into", locked)
    with pytest.raises(RuntimeError, match=r"cannot merge the part .*p\.duckdb: Could not set lock.* rerun the same"):
        ep._merge_when_free(None, tmp_path / "p.duckdb", wait_s=0.0)  # type: ignore[arg-type]

    calls = []

    def other(store, part):
        calls.append(part)
        raise duckdb.IOException("disk full")

    monkeypatch.setattr(ep, "merge_into", other)
    with pytest.raises(RuntimeError, match="disk full"):
        ep._merge_when_free(None, tmp_path / "p.duckdb", wait_s=30.0)  # type: ignore[arg-type]
    assert len(calls) == 1  # not a lock: no waiting


def test_a_lock_released_within_the_wait_is_merged(tmp_path, monkeypatch):
    tries = []

    def flaky(store, part):
        tries.append(part)
        if len(tries) < 2:
            raise duckdb.IOException("Could not set lock on file")

    monkeypatch.setattr(ep, "merge_into", flaky)
    monkeypatch.setattr(ep.time, "sleep", lambda s: None)
    ep._merge_when_free(None, tmp_path / "p.duckdb", wait_s=30.0)  # type: ignore[arg-type]
    assert len(tries) == 2


def test_shards_follow_the_cells_stable_hash():
    cells = [SimpleNamespace(key=f"k{i}", shard=lambda n, i=i: (i * 7) % n) for i in range(6)]
    # (i·7) mod 3: 0, 1, 2, 0, 1, 2
    assert ep.shard(cells, 3) == [["k0", "k3"], ["k1", "k4"], ["k2", "k5"]]  # type: ignore[arg-type]
    assert ep.shard([], 2) == [[], []]


class _Progress:
    def __init__(self, done: int, failed: int):
        self.done, self.failed = done, failed


def _ctx(done=5, failed=1, stats=None):
    ticks = []
    ctx = SimpleNamespace(progress=_Progress(done, failed), stats=dict(stats or {"calls": 10, "cost_usd": 0.5}),
                          shards={}, display=None, tick=lambda: ticks.append(1))
    return ctx, ticks


def test_shard_totals_add_each_shards_latest_report_to_the_base():
    ctx, ticks = _ctx()
    t = ep.ShardTotals(ctx)
    assert ctx.stats is t.stats and t.base_stats["calls"] == 10 and t.base_stats["errors"] == 0
    t.report(0, {"done": 2, "failed": 0, "stats": {"calls": 4, "cost_usd": 0.25}})
    t.report(1, {"done": 3, "failed": 1, "stats": {"calls": 6}})
    t.report(0, {"done": 4, "failed": 1, "stats": {"calls": 9, "cost_usd": 0.5}})  # cumulative: replaces shard 0's
    # base + latest of each shard: done 5 + 4 + 3, failed 1 + 1 + 1, calls 10 + 9 + 6, cost 0.5 + 0.5 + 0
    assert (ctx.progress.done, ctx.progress.failed) == (12, 3)
    assert ctx.stats["calls"] == 25 and ctx.stats["cost_usd"] == pytest.approx(1.0) and ctx.stats["errors"] == 0
    assert ctx.shards[0]["done"] == 4 and len(ticks) == 3


def test_shard_totals_attach_to_the_display():
    attached = []
    ctx, _ = _ctx()
    ctx.display = SimpleNamespace(attach=attached.append)
    t = ep.ShardTotals(ctx)
    assert attached == [t.stats]


def test_end_shards_merges_then_raises_or_returns_the_lists_totals(tmp_path, monkeypatch):
    merged = []
    monkeypatch.setattr(ep, "merge_parts", lambda store, run, path, parts: merged.append((store, run, path, parts)))
    ctx, _ = _ctx()
    ctx.session = SimpleNamespace(store="S")
    ctx.run_id, ctx.store_path, ctx.opts = "r", tmp_path / "s.duckdb", SimpleNamespace(parts=tmp_path / "p")
    t = ep.ShardTotals(ctx)
    t.report(0, {"done": 1, "stats": {"calls": 3, "cost_usd": 0.2}})
    out = ep.end_shards(ctx, t, [], [])
    assert out["calls"] == 3 and out["cost_usd"] == pytest.approx(0.2) and out["errors"] == 0
    assert set(out) == set(ep.STAT_KEYS) and merged == [("S", "r", tmp_path / "s.duckdb", tmp_path / "p")]
    with pytest.raises(RunAborted, match="model m is misconfigured"):
        ep.end_shards(ctx, t, ["model m is misconfigured", "second"], ["worker died"])
    with pytest.raises(RuntimeError, match="^w0 died; w1 died$"):
        ep.end_shards(ctx, t, [], ["w0 died", "w1 died"])
    assert len(merged) == 3  # merged before raising, every time


def test_parts_in_a_given_folder_are_merged_from_there(tmp_path):
    store_path = tmp_path / "s.duckdb"
    store = Store(store_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _part(elsewhere / "r-w0.duckdb", 2)
    (tmp_path / "parts").mkdir()
    _part(tmp_path / "parts" / "r-w0.duckdb", 5)  # beside the store, but not where the run put them
    assert ep.merge_parts(store, "r", store_path, elsewhere) == 1
    assert store.sql("SELECT count(*) FROM calls")[0][0] == 2 and not list(elsewhere.iterdir())
    store.close()


def test_a_locked_part_is_retried_every_half_second_for_the_wait(tmp_path, monkeypatch):
    """A lock that never goes: tries at t = 0, 0.5, …, 30.0 and 30.5 (62 tries, 61 sleeps of 0.5 s),
    then the error: past the 30 s default wait means strictly after it."""
    clock = {"t": 0.0}
    tries, sleeps = [], []
    monkeypatch.setattr(ep.time, "monotonic", lambda: clock["t"])

    def sleep(s):
        sleeps.append(s)
        clock["t"] += s

    monkeypatch.setattr(ep.time, "sleep", sleep)

    def locked(store, part):
        tries.append(clock["t"])
        raise duckdb.IOException("Could not set lock on file")

    monkeypatch.setattr(ep, "merge_into", locked)
    with pytest.raises(RuntimeError) as err:
        ep._merge_when_free(None, tmp_path / "p.duckdb")  # type: ignore[arg-type]
    assert len(tries) == 62 and tries[-1] == 30.5 and set(sleeps) == {0.5} and len(sleeps) == 61
    assert str(err.value).endswith("A worker of an earlier run may still be writing it: wait for it to end "
                                   "(or stop it) and rerun the same command")


def test_reports_without_counts_add_nothing():
    ctx, _ = _ctx(done=2, failed=1)
    t = ep.ShardTotals(ctx)
    t.report(0, {})
    t.report(1, {"failed": 2})
    assert (ctx.progress.done, ctx.progress.failed) == (2, 3) and ctx.stats["calls"] == 10


def test_worker_options_carry_the_prepared_suite_its_cells_and_its_part(tmp_path, monkeypatch):
    from masbench.spec.model import ModelSpec
    monkeypatch.setattr(ep.telemetry, "carrier", lambda: {"traceparent": "00-ab-cd-01"})
    prep = SimpleNamespace(suite_path=tmp_path / "tasks" / "s.yaml", transcripts="errors",
                           overrides={"default": "sim/x", "big": ModelSpec(id="openai/m", api_base="http://h/v1")})
    opts = SimpleNamespace(lib=[tmp_path / "lib", Path("rel")], limit=7, cache=False)
    ctx = SimpleNamespace(opts=opts, prep=prep, concurrency=3, run_id="r1", cache_path=tmp_path / "runs" / "c.sqlite")
    got = ep.worker_options(ctx, 2, tmp_path / "r1-w2.cells.json", tmp_path / "parts" / "r1-w2.duckdb")
    assert got == {
        "suite": str(tmp_path / "tasks" / "s.yaml"), "lib": [str(tmp_path / "lib"), "rel"],
        "overrides": {"default": "sim/x", "big": {"id": "openai/m", "api_base": "http://h/v1"}},
        "limit": 7, "cache": False, "concurrency": 3, "run_id": "r1", "transcripts": "errors",
        "part": str(tmp_path / "parts" / "r1-w2.duckdb"), "cells": str(tmp_path / "r1-w2.cells.json"), "shard": 2,
        "cache_path": str(tmp_path / "runs" / "c.sqlite"), "otel": {"traceparent": "00-ab-cd-01"}}
