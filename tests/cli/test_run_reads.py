"""``masbench run`` prints what each source read before its header: the rows of a published split
read whole, and a warning where ``n`` cut one (issue 23, item 4), on a MASBench folder in the
published layout and the simulator."""

from __future__ import annotations

import pyarrow.parquet as pq
import yaml
from typer.testing import CliRunner

import pytest

from masbench.cli import app
from masbench.testing.published import write_masbench_dir


@pytest.mark.slow
def test_run_prints_rows_read_per_source_and_the_cut_warning_before_its_header(tmp_path):
    root = write_masbench_dir(tmp_path / "MASBench", rows=12, configs=("depth", "parallel"))
    rows = {c: pq.ParquetFile(next((root / c).glob("test-*.parquet"))).metadata.num_rows for c in ("depth", "parallel")}
    suite = tmp_path / "reads.yaml"
    suite.write_text(yaml.safe_dump({
        "name": "reads", "models": {"default": "sim/p60"}, "designs": ["cot"],
        "tasks": [{"masbench": str(root), "configs": ["depth"]},
                  {"masbench": str(root), "configs": ["parallel"], "n": 3, "name": "par"}],
        "cot_sc": {"k_max": 2, "bootstrap": 10}, "store": str(tmp_path / "reads.duckdb")}))
    res = CliRunner().invoke(app, ["run", str(suite)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("run reads-"))
    assert lines[:header] == [f"masbench: read {rows['depth']} rows of depth/test ({rows['depth']} tasks)",
                              f"warning: par: read 3 of {rows['parallel']} rows of parallel/test: capped by n: 3"]
    assert f"· {rows['depth'] + 3} tasks ×" in lines[header]
