"""The tool-using design shown in the README (and docs/tools.md) is valid as written and runs: it
is checked like any design file and run through the harness on two search tasks with a simulated
searcher (every cell answers, the agent searched)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import yaml

from masbench.harness import RunOptions, run_suite
from masbench.library import Library
from masbench.runtime import check_design
from masbench.spec import DesignSpec

ROOT = Path(__file__).resolve().parents[1]


def _design_snippet(doc: Path) -> str:
    blocks = re.findall(r"```yaml\n(# a design: one ReAct searcher.*?)```", doc.read_text(), re.S)
    assert len(blocks) == 1, f"{doc.name}: the ReAct design snippet is missing or repeated"
    return blocks[0]


def test_the_readme_and_the_tools_page_show_the_same_design():
    assert _design_snippet(ROOT / "README.md") == _design_snippet(ROOT / "docs" / "tools.md")


async def test_the_readme_react_design_checks_and_runs(tmp_path):
    text = _design_snippet(ROOT / "README.md")
    spec = DesignSpec.model_validate(yaml.safe_load(text))
    assert check_design(spec, None, Library()) == []
    lib = tmp_path / "lib"
    (lib / "orchestrators").mkdir(parents=True)
    (lib / "orchestrators" / "my_react.yaml").write_text(text)
    suite = tmp_path / "snippet.yaml"
    suite.write_text(
        "name: snippet\n"
        "models:\n  default: {id: sim/searcher, sim: {accuracy: {default: 0.9}, tools: {search: 1.0}}}\n"
        "tasks:\n  - {generator: search, values: [2], n: 2, seed: 0, params: {corpus_size: 200}}\n"
        "designs: [my-react]\ncot_sc: {enabled: false}\n"
        f"store: {tmp_path / 'snippet.duckdb'}\n")
    s = await run_suite(RunOptions(suite=str(suite), lib=[lib]))
    con = duckdb.connect(str(s.store), read_only=True)
    try:
        ok = con.execute("SELECT count(*) FROM results WHERE run_id = ? AND status = 'ok'", [s.run_id]).fetchall()[0][0]
        searches = con.execute("SELECT count(*) FROM tool_calls WHERE run_id = ? AND tool = 'search' AND status = 'ok'",
                               [s.run_id]).fetchall()[0][0]
    finally:
        con.close()
    assert ok == 2 and searches >= 2
