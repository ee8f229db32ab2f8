"""A run stores each task's gold evidence (``meta["evidence"]``) in ``results.evidence``, generically:
search tasks carry it, arithmetic tasks do not, and the recall views see only the former."""

from __future__ import annotations

import json

import duckdb
import yaml

import pytest

from masbench.bench import load_suite_tasks
from masbench.harness import RunOptions, run_suite
from masbench.spec.suite import SuiteSpec

SUITE = """name: evidence
models: {{default: sim/p60}}
tasks:
  - {{generator: search, name: s, values: [2, 3], n: 2, seed: 0, params: {{corpus_size: 80}}}}
  - {{generator: masbench.depth, values: [1], n: 2, seed: 0}}
designs: [cot]
cot_sc: {{k_max: 2, bootstrap: 50}}
budget: {{per_task_tokens: 20000}}
store: {store}
"""


@pytest.mark.slow
async def test_results_keep_the_tasks_gold_evidence(tmp_path) -> None:
    suite = tmp_path / "evidence.yaml"
    suite.write_text(SUITE.format(store=tmp_path / "e.duckdb"))
    s = await run_suite(RunOptions(suite=str(suite)))
    assert s.failed == 0
    tasks = {t.id: t for t in load_suite_tasks(SuiteSpec.model_validate(yaml.safe_load(suite.read_text())))}
    con = duckdb.connect(str(s.store), read_only=True)
    rows = con.execute("SELECT task_id, evidence FROM results WHERE run_id = ?", [s.run_id]).fetchall()
    cells = con.execute("SELECT task_id, n_evidence, recall FROM retrieval_recall_cells WHERE run_id = ?",
                        [s.run_id]).fetchall()
    con.close()
    assert len(rows) == 6
    for task_id, evidence in rows:
        want = tasks[task_id].meta.get("evidence")
        assert (json.loads(evidence) if evidence else None) == want
    assert sum(1 for _, e in rows if e) == 4
    assert sorted(c[0] for c in cells) == sorted(t for t, e in rows if e)
    assert all(recall == 0.0 for _, _, recall in cells)  # cot searches nothing
