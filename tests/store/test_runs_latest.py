""""The latest run" is written once (store/runs.py): newest created_at first, NULLs last, runs of
the same instant by run id — the order `status`, `reprice`, `stats`, `report` and resume all use."""

from __future__ import annotations

from masbench.store import has_run, latest_run, list_runs, recent_runs


def _run(store, run_id, suite="s", created=None, chash=None) -> None:
    store.sql("INSERT INTO runs(run_id, suite, config_hash, created_at) VALUES (?, ?, ?, ?)",
              [run_id, suite, chash, created])


def test_latest_breaks_ties_by_run_id_and_puts_unknown_times_last(store) -> None:
    _run(store, "b", created="2026-01-02 00:00:00", chash="h")
    _run(store, "a", created="2026-01-02 00:00:00", chash="h")
    _run(store, "c", created="2026-01-01 00:00:00", suite="t")
    store.sql("UPDATE runs SET created_at = NULL WHERE run_id = 'c'")
    _run(store, "z", created="2025-01-01 00:00:00", chash="h2")
    assert latest_run(store) == "b"  # same instant as a: the larger run id
    assert latest_run(store, "t") == "c" and latest_run(store, "s", "h2") == "z" and latest_run(store, "u") is None
    assert recent_runs(store, 10) == ["b", "a", "z", "c"]  # NULL created_at last
    assert list(list_runs(store)["run_id"]) == ["b", "a", "z", "c"]
    assert has_run(store, "a") and not has_run(store, "nope")
