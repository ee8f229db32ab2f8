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
