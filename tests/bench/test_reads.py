"""Data sources read every row unless a suite caps them with ``n``; what each source read is
counted, and a cap that cuts a published split or a file is a warning (issue 23, item 4).

Fixtures are in the published layouts (docs/formats.md, masbench.testing.published):
expected counts come from reading the parquet and JSONL files directly, not from the loaders."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from masbench.bench import SourceRead, load_suite, load_tasks
from masbench.cli.tasks import tasks_app
from masbench.harness.cells import config_hash
from masbench.library import bundled_root
from masbench.spec.suite import SOURCE_KEYS, SuiteSpec, TaskSource
from masbench.testing.published import write_masbench_dir, write_smfr_jsonl

ROWS = 23  # more than the old silent default of 10, fewer than a slow test needs


@pytest.fixture(scope="module")
def masbench_dir(tmp_path_factory) -> Path:
    return write_masbench_dir(tmp_path_factory.mktemp("pub") / "MASBench", rows=ROWS, configs=("depth", "horizon"))


def parquet_rows(folder: Path, config: str, split: str = "test") -> int:
    return sum(pq.read_table(f).num_rows for f in (folder / config).glob(f"{split}-*.parquet"))


def jsonl_rows(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def suite_file(tmp_path: Path, tasks: list[dict]) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"name": "reads", "tasks": tasks, "designs": ["cot"]}), encoding="utf-8")
    return path


def test_a_masbench_directory_reads_every_row_of_each_config_by_default(masbench_dir):
    loaded = load_suite(SuiteSpec.model_validate({"name": "s", "designs": ["cot"],
                                                  "tasks": [{"masbench": str(masbench_dir),
                                                             "configs": ["depth", "horizon"]}]}))
    want = {c: parquet_rows(masbench_dir, c) for c in ("depth", "horizon")}
    assert want == {"depth": ROWS, "horizon": ROWS}  # the fixture holds more than the old default 10
    assert len(loaded.tasks) == sum(want.values())
    assert [(r.what, r.rows, r.total, r.cut) for r in loaded.reads] == \
        [("depth/test", want["depth"], want["depth"], False), ("horizon/test", want["horizon"], want["horizon"], False)]
    assert loaded.reads[0].line() == f"masbench: read {ROWS} rows of depth/test ({ROWS} tasks)"


def test_a_cap_that_cuts_a_published_split_is_a_warning_with_both_counts(masbench_dir):
    loaded = load_suite(SuiteSpec.model_validate({"name": "s", "designs": ["cot"],
                                                  "tasks": [{"masbench": str(masbench_dir), "configs": ["depth"],
                                                             "n": 10}]}))
    (read,) = loaded.reads
    assert (read.rows, read.total, read.cap, read.cut) == (10, parquet_rows(masbench_dir, "depth"), 10, True)
    assert len(loaded.tasks) == 10
    assert read.line() == f"warning: masbench: read 10 of {ROWS} rows of depth/test: capped by n: 10"


def test_a_cap_at_or_above_the_split_size_is_no_warning(masbench_dir):
    for n in (ROWS, ROWS + 5):
        (read,) = load_suite(SuiteSpec.model_validate({"name": "s", "designs": ["cot"], "tasks": [
            {"masbench": str(masbench_dir), "configs": ["horizon"], "n": n}]})).reads
        assert (read.rows, read.total, read.cut) == (ROWS, ROWS, False)
        assert not read.line().startswith("warning")


def test_an_smfr_file_reads_every_row_and_counts_them(tmp_path):
    path = write_smfr_jsonl(tmp_path / "balanced_dataset_single_3_fixed.jsonl", n_rows=14, n=3)
    with_blank = tmp_path / "gaps.jsonl"  # a blank line is no row: the count skips it as the reader does
    with_blank.write_text(path.read_text(encoding="utf-8").replace("\n", "\n\n", 3), encoding="utf-8")
    for file in (path, with_blank):
        loaded = load_suite(SuiteSpec.model_validate({"name": "s", "designs": ["cot"], "tasks": [{"smfr": str(file)}]}))
        assert len(loaded.tasks) == jsonl_rows(file) == 14
        (read,) = loaded.reads
        assert (read.rows, read.total, read.cut) == (14, 14, False)
        capped = load_suite(SuiteSpec.model_validate({"name": "s", "designs": ["cot"],
                                                      "tasks": [{"smfr": str(file), "n": 4}]})).reads[0]
        assert (capped.rows, capped.total, capped.cut) == (4, 14, True)
        assert capped.line() == f"warning: smfr: read 4 of 14 rows of {file}: capped by n: 4"


def test_the_legacy_and_hf_readers_count_too(tmp_path, masbench_dir, monkeypatch):
    depth = next((masbench_dir / "depth").glob("test-*.parquet"))
    (read,) = load_suite(SuiteSpec.model_validate({"name": "s", "designs": ["cot"],
                                                   "tasks": [{"parquet": str(depth), "n": 5}]})).reads
    assert (read.rows, read.total, read.cut) == (5, pq.ParquetFile(depth).metadata.num_rows, True)
    import datasets  # noqa: F401 - the hf extra is part of the test install (scripts/setup.sh): no skip
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    reads = load_suite(SuiteSpec.model_validate({"name": "s", "designs": ["cot"], "tasks": [
        {"hf": str(masbench_dir), "format": "masbench", "configs": ["depth", "horizon"], "n": 7}]})).reads
    assert [(r.rows, r.total, r.cut) for r in reads] == [(7, ROWS, True), (7, ROWS, True)]


def test_generators_keep_their_count_of_ten_and_their_run_identity():
    bare = TaskSource(generator="masbench.depth", values=[1, 2])
    assert bare.n == 10 and len(load_tasks(bare)) == 2 * 10
    as_before = {"name": "g", "designs": ["cot"], "tasks": [{"generator": "masbench.depth", "values": [1], "n": 10}]}
    unset = {"name": "g", "designs": ["cot"], "tasks": [{"generator": "masbench.depth", "values": [1]}]}
    assert config_hash(SuiteSpec.model_validate(unset), {}, None, None) == \
        config_hash(SuiteSpec.model_validate(as_before), {}, None, None)
    (read,) = load_suite(SuiteSpec.model_validate(unset)).reads
    assert read == SourceRead("masbench.depth", "masbench.depth", 10)
    assert read.line() == "masbench.depth: 10 tasks made by generator masbench.depth"


def test_a_data_source_without_n_is_a_new_run_identity(masbench_dir):
    # it used to mean 10 rows and now means all of them: a run of the old meaning must not be resumed
    capped = {"name": "d", "designs": ["cot"], "tasks": [{"masbench": str(masbench_dir), "n": 10}]}
    every = {"name": "d", "designs": ["cot"], "tasks": [{"masbench": str(masbench_dir)}]}
    assert config_hash(SuiteSpec.model_validate(capped), {}, None, None) != \
        config_hash(SuiteSpec.model_validate(every), {}, None, None)


def test_tasks_show_prints_the_count_and_the_cut_warning(tmp_path, masbench_dir):
    path = suite_file(tmp_path, [{"masbench": str(masbench_dir), "configs": ["depth"], "n": 10},
                                 {"masbench": str(masbench_dir), "configs": ["horizon"], "name": "all"}])
    result = CliRunner().invoke(tasks_app, ["show", str(path), "--n", "0"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert f"warning: masbench: read 10 of {ROWS} rows of depth/test: capped by n: 10" in lines
    assert f"all: read {ROWS} rows of horizon/test ({ROWS} tasks)" in lines


def test_every_bundled_suite_caps_its_data_sources_explicitly():
    """Bundled suites keep meaning what they meant: a data source (not a generator) in one of them
    says how many rows it reads, so the change of default cannot turn 10 tasks into 1,609."""
    suites = sorted((bundled_root() / "tasks").glob("*.yaml"))
    assert suites
    data_keys = [k for k in SOURCE_KEYS if k != "generator"]
    for path in suites:
        for i, source in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))["tasks"]):
            if any(k in source for k in data_keys):
                assert "n" in source, f"{path.name}: tasks[{i}] reads a data source without an explicit n"


def test_bundled_suites_load_the_tasks_their_sources_say():
    """The one bundled data source (my-jsonl: n: 100 over a 10-row file) reads its whole file, as before."""
    path = bundled_root() / "tasks" / "my-jsonl.yaml"
    loaded = load_suite(SuiteSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))), path.parent)
    data = path.parent / "data" / "example.jsonl"
    assert len(loaded.tasks) == jsonl_rows(data) == 10
    assert [(r.rows, r.total, r.cut) for r in loaded.reads] == [(10, 10, False)]
