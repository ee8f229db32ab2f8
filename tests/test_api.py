"""The Python API (masbench/api.py): its docstring examples run as written (a simulated quickstart
run, its verdicts, its store read-only); ``masbench run`` goes through the same function; the API
is reached from ``import masbench`` without importing the harness until it is used."""

from __future__ import annotations

import dataclasses
import doctest
import subprocess
import sys
from pathlib import Path

import pytest

import masbench
import masbench.api as api
from masbench.harness import RunOptions
from tests.clirun import masbench as cli


@pytest.mark.slow
def test_the_docstring_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the examples' relative store lands here
    res = doctest.testmod(api, extraglobs={"masbench": masbench}, optionflags=doctest.ELLIPSIS, report=True)
    assert res.attempted >= 10 and res.failed == 0
    assert (tmp_path / "runs" / "api.duckdb").is_file()


def test_run_settings_are_the_run_options_fields() -> None:
    """Every ``masbench run`` option is reachable from ``masbench.run`` under the same name."""
    # run()'s own arguments, a worker's internal field, and `masbench judge check`'s mode
    own = {"suite", "store", "overrides", "shard", "judge_check"}
    fields = {f.name for f in dataclasses.fields(RunOptions)} - own
    assert set(api.RunSettings.__annotations__) == fields


def test_run_options_carry_models_store_and_settings(tmp_path: Path) -> None:
    o = api.run_options(Path("tasks/x.yaml"), {"default": "sim/p60"}, tmp_path / "s.duckdb", limit=3, new=True)
    assert (o.suite, o.store, o.overrides, o.limit, o.new) == ("tasks/x.yaml", tmp_path / "s.duckdb",
                                                               {"default": "sim/p60"}, 3, True)
    assert api.run_options("quickstart").store is None


def test_the_run_command_calls_the_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    def fake(suite, **kw):
        seen.update(kw, suite=suite)
        raise KeyboardInterrupt  # stop there: the command's own handling of it says it was reached

    monkeypatch.setattr(api, "run", fake)
    out = cli("run", "quickstart", "--model", "default=sim/p60", "--store", str(tmp_path / "x.duckdb"), "--limit", "2",
              "--free", "default")
    assert out.returncode == 130
    assert seen["suite"] == "quickstart" and seen["models"] == {"default": "sim/p60"} and seen["limit"] == 2
    assert seen["store"] == tmp_path / "x.duckdb" and seen["free"] == ["default"] and seen["otel"] is False


@pytest.mark.slow
def test_compare_frames_the_stored_verdicts_and_open_store_is_read_only(tmp_path: Path) -> None:
    from tests.simsuite import write_suite

    suite = write_suite(tmp_path, n=6)
    s = masbench.run(suite, lib=[tmp_path])
    v = masbench.compare(s.store)
    with masbench.open_store(s.store) as st:
        stored = dict(st.sql("SELECT design, verdict FROM paired_tests WHERE run_id = ? AND against = 'curve' "
                             "AND axis = 'all' AND is_verdict", [s.run_id]))
        with pytest.raises(Exception, match="read-only"):
            st.sql("DELETE FROM results")
    assert list(v.columns) == api.VERDICT_COLUMNS and set(v["run_id"]) == {s.run_id}
    verdicts = dict(zip(v["design"], v["verdict"]))
    assert {d: verdicts[d] for d in stored} == stored  # the verdicts are the store's, word for word
    assert verdicts["cot"] == "baseline" and v["simulated"].all()
    with pytest.raises(FileNotFoundError, match="no store at"):
        masbench.open_store(tmp_path / "missing.duckdb")


def test_import_masbench_does_not_import_the_api() -> None:
    code = ("import sys, masbench; assert 'masbench.api' not in sys.modules and 'masbench.harness' not in sys.modules;"
            "f = masbench.open_store; assert 'masbench.api' in sys.modules and f.__module__ == 'masbench.api';"
            "print(sorted(n for n in ('run', 'compare', 'open_store') if n in dir(masbench)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['compare', 'open_store', 'run']"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        masbench.nope  # type: ignore[attr-defined]  # noqa: B018
