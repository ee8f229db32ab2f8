"""Loaders (JSONL, parquet, generators, suites), the bundled suites, and `tasks show|export`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from masbench.bench import TaskInstance, load_suite, load_suite_tasks, load_tasks, score
from masbench.cli.tasks import resolve_suite, tasks_app
from masbench.library import bundled_root
from masbench.spec.suite import SuiteSpec, TaskSource

REPO = Path(__file__).resolve().parents[2]
SUITES = ["quickstart", "masbench-5axis", "smfr", "my-jsonl", "illusion-smfr", "masbench-depth", "masbench-horizon",
          "masbench-breadth", "masbench-parallel", "masbench-robustness"]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")
    return path


def test_jsonl_gsm8k_style(tmp_path):
    path = write_jsonl(tmp_path / "mine.jsonl", [
        {"question": "What is 2 + 2?", "answer": "2 + 2 = 4\n#### 4"},
        {"question": "How much is 1,000 + 200?", "answer": "#### 1,200"},
        {"question": "Two numbers?", "answer": [3, 5]},
    ])
    tasks = load_tasks(TaskSource(jsonl="mine.jsonl", n=10), base_dir=tmp_path)
    assert [t.answers for t in tasks] == [["4"], ["1200"], ["3", "5"]]
    assert tasks[0].id == "mine-0000" and tasks[0].source == "mine" and tasks[0].scorer == "numeric"
    assert score(tasks[1], "Answer: $1,200").correct
    assert len(load_tasks(TaskSource(jsonl=str(path), n=2))) == 2


def test_jsonl_custom_fields_and_params(tmp_path):
    write_jsonl(tmp_path / "qa.jsonl", [{"uid": "a1", "problem": "Capital of France?", "solution": "Paris"}])
    src = TaskSource(jsonl="qa.jsonl", name="capitals",
                     fields={"question": "problem", "answer": "solution", "id": "uid"},
                     params={"scorer": "exact", "skills": ["geo.capitals"]})
    [t] = load_tasks(src, base_dir=tmp_path)
    assert (t.id, t.source, t.answers, t.scorer, t.skills) == ("capitals-a1", "capitals", ["paris"], "exact",
                                                               ["geo.capitals"])
    assert score(t, "Answer: paris").correct
    with pytest.raises(ValueError, match="fields.answer"):
        load_tasks(TaskSource(jsonl="qa.jsonl", fields={"question": "problem", "answer": "nope"}), tmp_path)
    with pytest.raises(ValueError, match="unknown params"):
        load_tasks(TaskSource(jsonl="qa.jsonl", params={"bogus": 1}, fields={"question": "problem",
                                                                            "answer": "solution"}), tmp_path)


def test_jsonl_errors(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"question": "x", "answer": "1"}\nnot json\n')
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        load_tasks(TaskSource(jsonl="bad.jsonl"), tmp_path)
    with pytest.raises(FileNotFoundError):
        load_tasks(TaskSource(jsonl="missing.jsonl"), tmp_path)


def test_parquet_masbench_layout(tmp_path):
    table = pa.table({
        "question": ["Q one", "Q two", "Q three"],
        "answer": [["7"], ["3", "11"], ["5"]],
        "level": [2, 3, 2],
    })
    pq.write_table(table, tmp_path / "depth-test.parquet")
    tasks = load_tasks(TaskSource(parquet="depth-test.parquet", n=2), base_dir=tmp_path)
    assert [t.answers for t in tasks] == [["7"], ["3", "11"]]
    assert [(t.axis, t.axis_value) for t in tasks] == [("depth", 2), ("depth", 3)]
    assert score(tasks[1], "Answer: 3, 11").correct and not score(tasks[1], "Answer: 3").correct

    pq.write_table(pa.table({"prompt": ["P"], "gold": ['["1", "2"]'], "k": ["x9"]}), tmp_path / "combine.parquet")
    [t] = load_tasks(TaskSource(parquet="combine.parquet", fields={"id": "k"}, name="combo"), tmp_path)
    assert (t.id, t.question, t.answers, t.axis) == ("combo-x9", "P", ["1", "2"], None)


def test_generator_source_and_names():
    src = TaskSource(generator="masbench.depth", values=[1], n=2, name="bare", params={"style": "bare"})
    tasks = load_tasks(src)
    assert [t.id for t in tasks] == ["bare-depth-1-test-s0-0000", "bare-depth-1-test-s0-0001"]
    assert all(t.source == "bare" for t in tasks)
    with pytest.raises(ValueError, match="unknown generator"):
        load_tasks(TaskSource(generator="nope"))


def test_duplicate_ids_across_sources_are_an_error():
    suite = SuiteSpec(name="dup", designs=["cot"], tasks=[
        TaskSource(generator="masbench.depth", values=[1], n=2),
        TaskSource(generator="masbench.depth", values=[1], n=2, params={"style": "bare"}),
    ])
    with pytest.raises(ValueError, match="distinct names"):
        load_suite_tasks(suite)


def test_a_repeated_id_within_one_source_is_an_error_naming_that_source(tmp_path):
    write_jsonl(tmp_path / "qa.jsonl", [{"uid": "a1", "question": "Q1?", "answer": "1"},
                                        {"uid": "a1", "question": "Q2?", "answer": "2"}])
    suite = SuiteSpec(name="dup", designs=["cot"], tasks=[
        TaskSource(generator="masbench.depth", values=[1], n=1), TaskSource(jsonl="qa.jsonl", fields={"id": "uid"})])
    with pytest.raises(ValueError, match=r"task id 'qa-a1' appears twice in source #2$"):
        load_suite(suite, tmp_path)


@pytest.mark.parametrize("name", SUITES)
def test_bundled_suites_validate_and_load(name):
    path = REPO / "tasks" / f"{name}.yaml"
    spec = SuiteSpec.model_validate(yaml.safe_load(path.read_text()))
    tasks = load_suite_tasks(spec, base_dir=path.parent)
    assert tasks and all(isinstance(t, TaskInstance) for t in tasks)
    assert len({t.id for t in tasks}) == len(tasks)
    if name == "quickstart":
        assert len(tasks) == 80 and {t.axis_value for t in tasks} == {None, 1}  # arithmetic + one-step
        assert spec.cot_sc.k_max == 4 and spec.budget.per_task_tokens == 1200
        assert spec.store == "runs/quickstart.duckdb" and spec.models == {"default": "embedded/smollm2"}
    if name == "masbench-5axis":
        assert {t.axis for t in tasks} == {"depth", "horizon", "breadth", "parallel", "robustness"}
    if name.startswith("masbench-") and name != "masbench-5axis":  # the MASBench paper's protocol
        cs = spec.cot_sc
        assert (cs.temperature, cs.vote, cs.k, cs.agent) == (0.5, "raw", 5, "masbench-solver")
        assert {t.axis for t in tasks} == {name.split("-", 1)[1]} and {t.scorer for t in tasks} == {"masbench"}
        assert "MAS-Orchestra" in (spec.description or "")
    if name == "illusion-smfr":  # the Illusion paper's protocol
        cs = spec.cot_sc
        assert (cs.temperature, cs.vote, cs.k, cs.match) == (1.0, "raw", "cost-matched", "smfr-expert")
        assert {t.scorer for t in tasks} == {"smfr"} and "Illusion" in (spec.description or "")
    if name == "my-jsonl":
        assert len(tasks) == 10 and tasks[0].source == "example"


def test_example_jsonl_golds_are_numbers():
    rows = [json.loads(x) for x in (REPO / "tasks/data/example.jsonl").read_text().splitlines() if x.strip()]
    assert len(rows) == 10
    tasks = load_tasks(TaskSource(jsonl="data/example.jsonl", n=100), base_dir=REPO / "tasks")
    assert [t.answers[0] for t in tasks] == ["7", "7", "18", "27", "18", "6", "26", "80", "2.25", "-5"]


def test_suite_resolution(tmp_path, monkeypatch):
    assert bundled_root() / "tasks" == REPO / "tasks"
    monkeypatch.chdir(tmp_path)
    assert resolve_suite("quickstart") == REPO / "tasks" / "quickstart.yaml"
    (tmp_path / "tasks").mkdir()
    local = tmp_path / "tasks" / "quickstart.yaml"
    local.write_text((REPO / "tasks/quickstart.yaml").read_text())
    assert resolve_suite("quickstart") == local  # the working directory wins
    with pytest.raises(FileNotFoundError):
        resolve_suite("no-such-suite")


def test_cli_show_and_export(tmp_path):
    runner = CliRunner()
    shown = runner.invoke(tasks_app, ["show", "quickstart", "--n", "1"])
    assert shown.exit_code == 0, shown.output
    assert "one-step-depth-1-test-s0-0000" in shown.output and "gold:" in shown.output and "[depth=1]" in shown.output
    assert "arithmetic-arith-1-test-s0-0000" in shown.output and "What is " in shown.output

    out = tmp_path / "q.jsonl"
    exported = runner.invoke(tasks_app, ["export", str(REPO / "tasks/quickstart.yaml"), "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    rows = [TaskInstance.model_validate_json(x) for x in out.read_text().splitlines()]
    assert len(rows) == 80 and rows[0].meta["dag"]["edges"]

    to_stdout = runner.invoke(tasks_app, ["export", "my-jsonl"])
    assert to_stdout.exit_code == 0 and len(to_stdout.stdout.strip().splitlines()) == 10  # the count is on stderr

    shown = runner.invoke(tasks_app, ["show", "masbench-5axis", "--n", "1"])
    assert shown.exit_code == 0 and "[answer_1]" in shown.output  # placeholders are not eaten as markup

    missing = runner.invoke(tasks_app, ["show", "nope"])
    assert missing.exit_code == 2 and "no suite" in missing.output  # bad input: exit 2
