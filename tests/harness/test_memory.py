"""The driver's memory between a run's phases (masbench.harness.memory)."""

from __future__ import annotations


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
