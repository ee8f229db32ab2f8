"""The driver's memory between a run's phases (masbench.harness.memory)."""

from __future__ import annotations

import pytest

from masbench.harness.memory import under_limits
from masbench.store import Store


async def test_a_runs_driver_bounds_duckdb_by_the_driver_limit(tmp_path, monkeypatch):
    """The driver's store is opened with DuckDB's memory limit at the driver's (128MB, printed by
    DuckDB as 122.0 MiB = 128·10⁶ B / 2²⁰), whatever it writes and computes; the variable still
    overrides it; every other Store keeps 512MB (488.2 MiB)."""
    import masbench.harness.suite_run as suite_run
    from masbench.harness import RunOptions, run_suite
    from masbench.store import Store
    from masbench.store.db import MEMORY_LIMIT_ENV

    seen: list[str] = []

    class Spy(suite_run.RunSession):
        def open(self):
            out = super().open()
            seen.append(out.store.sql("SELECT current_setting('memory_limit')")[0][0])
            return out

    monkeypatch.setattr(suite_run, "RunSession", Spy)
    monkeypatch.delenv(MEMORY_LIMIT_ENV, raising=False)
    (tmp_path / "tasks").mkdir()
    suite = tmp_path / "tasks" / "m.yaml"
    store = tmp_path / "s.duckdb"
    suite.write_text(f"name: m\nmodels: {{default: sim/medium}}\ntasks:\n  - {{generator: masbench.depth, values: [1], "
                     f"n: 2, seed: 0}}\ndesigns: [cot]\ncot_sc: {{k_max: 2, bootstrap: 10}}\nstore: {store}\n")
    await run_suite(RunOptions(suite=str(suite), store=store, cache=False))
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "256MB")
    await run_suite(RunOptions(suite=str(suite), store=store, cache=False, new=True))
    assert seen == ["122.0 MiB", "244.1 MiB"]
    monkeypatch.delenv(MEMORY_LIMIT_ENV)
    with Store(store, read_only=True) as st:
        assert st.sql("SELECT current_setting('memory_limit')")[0][0] == "488.2 MiB"


def test_the_mmap_threshold_is_fixed_through_mallopt(monkeypatch):
    """``mallopt(M_MMAP_THRESHOLD = -3, 128 KiB)`` (glibc's malloc.h), its 1 read as taken; no libc:
    a no-op that says so."""
    import masbench.harness.memory as memory

    calls: list[tuple[int, int]] = []

    class Fn:  # a foreign function: takes argtypes and restype, returns what glibc would
        def __init__(self, ok: int):
            self.ok = ok

        def __call__(self, param, value):
            calls.append((param, value))
            return self.ok

    class Libc:
        ok = 1

        def __init__(self, name):
            assert name == "libc.so.6"
            self.mallopt = Fn(Libc.ok)

    monkeypatch.setattr(memory.ctypes, "CDLL", Libc)
    monkeypatch.setattr(memory.ctypes.util, "find_library", lambda name: "libc.so.6")
    assert memory.fixed_mmap_threshold() is True and calls == [(-3, 131072)]
    Libc.ok = 0  # glibc refused the value
    assert memory.fixed_mmap_threshold() is False
    monkeypatch.setattr(memory.ctypes.util, "find_library", lambda name: None)
    assert memory.fixed_mmap_threshold() is False


async def test_a_run_fixes_the_drivers_mmap_threshold_first(tmp_path, monkeypatch):
    """run_suite fixes the threshold before it prepares anything (a spy counts the calls)."""
    import masbench.harness.suite_run as suite_run
    from masbench.harness import RunOptions, run_suite

    calls: list[str] = []
    monkeypatch.setattr(suite_run, "fixed_mmap_threshold", lambda: calls.append("fixed") or True)
    real = suite_run.prepare
    monkeypatch.setattr(suite_run, "prepare", lambda *a, **k: (calls.append("prepare"), real(*a, **k))[1])
    (tmp_path / "tasks").mkdir()
    suite = tmp_path / "tasks" / "m.yaml"
    suite.write_text(f"name: m\nmodels: {{default: sim/medium}}\ntasks:\n  - {{generator: masbench.depth, values: [1], "
                     f"n: 2, seed: 0}}\ndesigns: [cot]\ncot_sc: {{k_max: 2, bootstrap: 10}}\nstore: {tmp_path / 's.duckdb'}\n")
    await run_suite(RunOptions(suite=str(suite), cache=False))
    assert calls[:2] == ["fixed", "prepare"]


async def test_a_sharding_resume_with_every_cell_done_loads_no_task(tmp_path, monkeypatch):
    """A sharding driver resuming a run whose cells are all done prepares the suite once, without
    its tasks (it loaded every task to run none of them: 4.6 GB for the 850,000 tasks of a
    10M-call run); the first run's driver did the same, its workers prepared theirs."""
    import masbench.harness.suite_run as suite_run
    from masbench.harness import RunOptions, run_suite

    asked: list[bool] = []
    real = suite_run.prepare

    def spy(opts, **kw):
        asked.append(kw.get("tasks", True))
        return real(opts, **kw)

    monkeypatch.setattr(suite_run, "prepare", spy)
    (tmp_path / "tasks").mkdir()
    suite = tmp_path / "tasks" / "m.yaml"
    suite.write_text(f"name: m\nmodels: {{default: sim/medium}}\ntasks:\n  - {{generator: masbench.depth, values: [1], "
                     f"n: 3, seed: 0}}\ndesigns: [cot]\ncot_sc: {{k_max: 2, bootstrap: 10}}\nstore: {tmp_path / 's.duckdb'}\n")
    first = await run_suite(RunOptions(suite=str(suite), cache=False, workers=2))
    assert asked == [False]
    again = await run_suite(RunOptions(suite=str(suite), cache=False, workers=2))
    assert asked == [False, False] and again.run_id == first.run_id


HUNGRY = "SELECT len(list(i)) FROM range(3000000) t(i)"
"""A query DuckDB cannot spill (a list aggregate of 3M values): out of memory at a few MB."""


def test_under_limits_runs_again_under_the_next_limit_when_duckdb_runs_out(tmp_path, monkeypatch):
    monkeypatch.delenv("MASBENCH_DUCKDB_MEMORY", raising=False)
    store = Store(tmp_path / "s.duckdb")
    tried, notes = [], []

    def fn() -> int:
        tried.append(store.sql("SELECT current_setting('memory_limit')")[0][0])
        return store.sql(HUNGRY)[0][0]

    assert under_limits(store, fn, ["4MB", "8MB", "512MB"], notes.append) == 3_000_000
    assert len(tried) == 3 and notes == ["DuckDB ran out of memory at 4MB; again at 8MB",
                                         "DuckDB ran out of memory at 8MB; again at 512MB"]
    assert store.memory_limit_default == "512MB"  # connections opened later keep the limit it ran under
    store.close()


def test_under_limits_raises_the_last_limits_error_and_other_errors_at_once(tmp_path, monkeypatch):
    monkeypatch.delenv("MASBENCH_DUCKDB_MEMORY", raising=False)
    store = Store(tmp_path / "s.duckdb")
    with pytest.raises(Exception) as err:
        under_limits(store, lambda: store.sql(HUNGRY), ["4MB", "6MB"])
    assert Store.out_of_memory(err.value)
    calls = []

    def broken() -> None:
        calls.append(1)
        raise ValueError("not memory")

    with pytest.raises(ValueError):
        under_limits(store, broken, ["4MB", "512MB"])
    assert calls == [1]  # another error is not retried
    store.close()


def test_under_limits_tries_only_the_environments_limit(tmp_path, monkeypatch):
    monkeypatch.delenv("MASBENCH_DUCKDB_MEMORY", raising=False)
    store = Store(tmp_path / "s.duckdb")
    monkeypatch.setenv("MASBENCH_DUCKDB_MEMORY", "4MB")
    calls = []

    def fn() -> None:
        calls.append(store.sql("SELECT current_setting('memory_limit')")[0][0])
        store.sql(HUNGRY)

    with pytest.raises(Exception) as err:
        under_limits(store, fn, ["64MB", "512MB"])
    assert Store.out_of_memory(err.value) and calls == ["3.8 MiB"]
    store.close()


async def test_a_runs_statistics_run_under_the_smaller_limit_and_the_driver_limit_comes_back(tmp_path, monkeypatch):
    """The curve and the paired tests read under db.STATS_MEMORY_LIMITS[0] (64MB = 61.0 MiB as DuckDB
    prints it); what the driver does after them is under its own limit again (128MB)."""
    import masbench.harness.curve as curve
    import masbench.harness.paired_tests as paired_tests
    import masbench.harness.suite_run as suite_run
    from masbench.harness import RunOptions, run_suite
    from masbench.store import fill_outcomes

    monkeypatch.delenv("MASBENCH_DUCKDB_MEMORY", raising=False)
    seen: dict[str, str] = {}

    def spy(name, fn):
        def wrapped(store, *a, **k):
            seen[name] = store.sql("SELECT current_setting('memory_limit')")[0][0]
            return fn(store, *a, **k)
        return wrapped

    monkeypatch.setattr(curve, "compute_curve", spy("curve", curve.compute_curve))  # imported after the cells ran
    monkeypatch.setattr(paired_tests, "compute_paired", spy("paired", paired_tests.compute_paired))
    monkeypatch.setattr(suite_run, "fill_outcomes", spy("outcomes", fill_outcomes))
    (tmp_path / "tasks").mkdir()
    suite = tmp_path / "tasks" / "m.yaml"
    suite.write_text(f"name: m\nmodels: {{default: sim/medium}}\ntasks:\n  - {{generator: masbench.depth, values: [1], "
                     f"n: 3, seed: 0}}\ndesigns: [cot]\ncot_sc: {{k_max: 2, bootstrap: 10}}\nstore: {tmp_path / 's.duckdb'}\n")
    out = await run_suite(RunOptions(suite=str(suite), store=tmp_path / "s.duckdb", cache=False))
    assert out.status == "finished"
    assert seen == {"curve": "61.0 MiB", "paired": "61.0 MiB", "outcomes": "122.0 MiB"}
