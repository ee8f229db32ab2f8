"""Published-data task sources, loaded through suite YAML from local copies built from the format
facts (docs/formats.md), and their one-line bad-input errors (exit 2)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from masbench.bench import TaskDataError, load_suite_tasks, load_tasks
from masbench.cli.tasks import tasks_app
from masbench.spec.suite import SuiteSpec, TaskSource
from masbench.testing.published import MASBENCH_CONFIGS, write_masbench_dir, write_smfr_jsonl

ROWS = 4


@pytest.fixture(scope="module")
def masbench_dir(tmp_path_factory):
    return write_masbench_dir(tmp_path_factory.mktemp("hf") / "MASBench", rows=ROWS)


def suite(tmp_path: Path, tasks: list[dict]) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "tasks": tasks, "designs": ["cot"]}), encoding="utf-8")
    return path


def load(path: Path):
    return load_suite_tasks(SuiteSpec.model_validate(yaml.safe_load(path.read_text())), base_dir=path.parent)


def published_rows(folder: Path, config: str, split: str) -> list[dict]:
    return pq.read_table(next((folder / config).glob(f"{split}-*.parquet"))).to_pylist()


def test_fixture_is_in_the_published_layout(masbench_dir):
    for config in MASBENCH_CONFIGS:
        splits = sorted(p.name.split("-")[0] for p in (masbench_dir / config).glob("*.parquet"))
        assert splits == (["train"] if config == "combine" else ["test", "train"])
        schema = pq.read_schema(next((masbench_dir / config).glob("*.parquet")))
        assert all(f.type == pa.string() for f in schema)
        expected = {"reward_model_json", "extra_info_json", "prompt_json", "axis", "data"}
        assert set(schema.names) == (expected if config == "combine" else expected | {"value"})


def test_masbench_directory_through_suite_yaml(tmp_path, masbench_dir):
    path = suite(tmp_path, [{"masbench": str(masbench_dir), "n": ROWS}])
    tasks = load(path)
    configs = [c for c in MASBENCH_CONFIGS if c != "combine"]
    assert len(tasks) == len(configs) * ROWS
    for config in configs:
        rows = published_rows(masbench_dir, config, "test")
        mine = [t for t in tasks if t.meta["config"] == config]
        for row, t in zip(rows, mine):
            user = json.loads(row["prompt_json"])[0]["content"]
            gold = json.loads(row["reward_model_json"])["ground_truth"].split("<<horizon>>")
            index = json.loads(row["extra_info_json"])["index"]
            assert t.question == user and not t.question.startswith("[")
            assert t.answers == gold and t.meta["gold"] == gold
            assert (t.axis, t.axis_value, t.meta["value"]) == (row["axis"], int(row["value"]), row["value"])
            assert t.id == f"masbench-{config}-test-{index}" and t.scorer == "masbench"
    horizon = [t for t in tasks if t.axis == "horizon"]
    assert all(len(t.answers) == t.axis_value >= 2 for t in horizon)
    assert all(len(t.answers) == 2 for t in tasks if t.axis == "parallel")
    assert len({t.id for t in tasks}) == len(tasks)  # indices repeat per config; ids do not


def test_masbench_configs_split_and_combine(tmp_path, masbench_dir):
    path = suite(tmp_path, [{"masbench": str(masbench_dir), "configs": ["depth", "combine"], "split": "train", "n": 2}])
    tasks = load(path)
    assert [t.id for t in tasks] == ["masbench-depth-train-0", "masbench-depth-train-1",
                                     "masbench-combine-train-0", "masbench-combine-train-1"]
    combine = tasks[2]
    assert combine.axis == "combine" and combine.axis_value is None and combine.meta["value"] is None


def test_masbench_value_kept_as_published(tmp_path):
    root = write_masbench_dir(tmp_path / "M", rows=2, configs=("depth",))
    f = next((root / "depth").glob("test-*.parquet"))
    rows = pq.read_table(f).to_pylist()
    rows[1]["value"] = "3-4"
    pq.write_table(pa.Table.from_pylist(rows), f)
    tasks = load_tasks(TaskSource(masbench=str(root), configs=["depth"]))
    assert [(t.axis_value, t.meta["value"]) for t in tasks] == [(2, "2"), (None, "3-4")]


def test_smfr_published_rows_through_suite_yaml(tmp_path):
    write_smfr_jsonl(tmp_path / "data" / "balanced_dataset_single_3_fixed.jsonl", n_rows=4, n=3)
    tasks = load(suite(tmp_path, [{"smfr": "data/balanced_dataset_single_3_fixed.jsonl", "n": 10}]))
    rows = [json.loads(x) for x in (tmp_path / "data" / "balanced_dataset_single_3_fixed.jsonl").read_text().splitlines()]
    assert [t.id for t in tasks] == ["smfr-n3-0001", "smfr-n3-0002", "smfr-n3-0003", "smfr-n3-0004"]
    for row, t in zip(rows, tasks):
        assert t.question == row["problem"]
        assert t.meta["gold_names"] == sorted(row["answer"]["answer"])
        assert t.meta["candidates"] == list(row["answer"]["investor_dates"])
        assert (t.axis, t.axis_value, t.scorer) == ("smfr", 3, "smfr")
        md = row["metadata"]
        assert f"smfr.question.{md['task_params']['question_type']}" in t.skills
        assert f"smfr.aggregation.{md['aggregation_op']}" in t.skills
    assert tasks[0].answers == ["alice, bob"] and tasks[0].meta["tie"]


def test_smfr_folder_of_files_has_unique_ids(tmp_path):
    write_smfr_jsonl(tmp_path / "d" / "balanced_dataset_single_2_fixed.jsonl", n_rows=2, n=2)
    write_smfr_jsonl(tmp_path / "d" / "balanced_dataset_single_3_fixed.jsonl", n_rows=2, n=3)
    tasks = load_tasks(TaskSource(smfr="d", n=10), tmp_path)
    assert len(tasks) == 4 and len({t.id for t in tasks}) == 4
    assert sorted({t.axis_value for t in tasks}) == [2, 3]


def test_gsm8k_math_aime(tmp_path):
    (tmp_path / "gsm.jsonl").write_text(json.dumps({"question": "Q?", "answer": "2*3=6\n#### 1,206"}) + "\n")
    (tmp_path / "math.jsonl").write_text(json.dumps({
        "problem": "Half of one?", "solution": "It is $\\boxed{\\frac{1}{2}}$.", "level": "Level 2",
        "type": "Prealgebra"}) + "\n")
    with (tmp_path / "aime.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, ["ID", "Problem", "Solution", "Answer"])
        w.writeheader()
        w.writerow({"ID": "2024-I-1", "Problem": "Find m+n.", "Solution": "...", "Answer": "033"})
    [g] = load_tasks(TaskSource(gsm8k="gsm.jsonl"), tmp_path)
    [m] = load_tasks(TaskSource(math="math.jsonl"), tmp_path)
    [a] = load_tasks(TaskSource(aime="aime.csv"), tmp_path)
    assert (g.answers, g.scorer) == (["1206"], "gsm8k")
    assert (m.answers, m.meta["level"], m.meta["type"], m.skills, m.scorer) == (
        ["\\frac{1}{2}"], "Level 2", "Prealgebra", ["math.prealgebra"], "math")
    assert (a.id, a.answers, a.scorer) == ("aime-2024-I-1", ["33"], "aime")


def test_choice_shuffle_is_seeded_and_recorded(tmp_path):
    with (tmp_path / "gpqa.csv").open("w", newline="") as fh:
        cols = ["Record ID", "Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2",
                "Incorrect Answer 3"]
        w = csv.DictWriter(fh, cols)
        w.writeheader()
        for i in range(6):
            w.writerow(dict(zip(cols, [f"rec{i}", f"Question {i}?", f"right{i}", f"w1{i}", f"w2{i}", f"w3{i}"])))
    a = load_tasks(TaskSource(choice="gpqa.csv", seed=1), tmp_path)
    b = load_tasks(TaskSource(choice="gpqa.csv", seed=1), tmp_path)
    c = load_tasks(TaskSource(choice="gpqa.csv", seed=2), tmp_path)
    assert [t.question for t in a] == [t.question for t in b]
    assert [t.meta["permutation"] for t in a] != [t.meta["permutation"] for t in c]
    for t in a:
        letter = t.answers[0]
        assert f"{letter}) right{t.id[-1]}" in t.question  # the gold letter shows the correct option
        assert t.meta["options"][t.meta["permutation"]["ABCD".index(letter)]].startswith("right")
    assert len({t.answers[0] for t in a}) > 1  # the correct option does not always land on one letter


def test_table_dotted_paths_into_json_columns(tmp_path, masbench_dir):
    f = next((masbench_dir / "horizon").glob("test-*.parquet"))
    src = TaskSource(table=str(f), name="verl", gold_sep="<<horizon>>",
                     fields={"question": "prompt.0.content", "answer": "reward_model.ground_truth",
                             "id": "extra_info.index", "axis": "axis", "axis_value": "value"})
    tasks = load_tasks(src)
    rows = pq.read_table(f).to_pylist()
    assert [t.answers for t in tasks] == [json.loads(r["reward_model_json"])["ground_truth"].split("<<horizon>>")
                                          for r in rows]
    assert tasks[0].question == json.loads(rows[0]["prompt_json"])[0]["content"]
    assert tasks[1].id == "verl-1" and tasks[1].axis == "horizon" and tasks[1].axis_value == 3


def test_hf_source_reads_a_local_dataset_folder_through_datasets(tmp_path, masbench_dir, monkeypatch):
    import datasets  # noqa: F401 - the hf extra is part of the test install (scripts/setup.sh): no skip
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    via_hf = load_tasks(TaskSource(hf=str(masbench_dir), format="masbench", configs=["depth", "horizon"], n=3))
    direct = load_tasks(TaskSource(masbench=str(masbench_dir), configs=["depth", "horizon"], n=3))
    assert [(t.id, t.question, t.answers, t.axis, t.axis_value) for t in via_hf] == \
        [(t.id, t.question, t.answers, t.axis, t.axis_value) for t in direct]


# ---------------------------------------------------------------- bad input: one line, exit 2


def run_show(path: Path):
    result = CliRunner().invoke(tasks_app, ["show", str(path)])
    lines = [x for x in result.output.splitlines() if x.strip()]
    return result.exit_code, lines


def test_missing_config_is_one_line_exit_2(tmp_path):
    root = write_masbench_dir(tmp_path / "M", rows=2, configs=("depth",))
    code, lines = run_show(suite(tmp_path, [{"masbench": str(root), "configs": ["depth", "breadth"]}]))
    assert code == 2 and len(lines) == 1
    assert str(root / "breadth") in lines[0] and "'configs'" in lines[0] and "config 'breadth' not found" in lines[0]


def test_unparsable_json_column_is_one_line_exit_2(tmp_path):
    root = write_masbench_dir(tmp_path / "M", rows=3, configs=("depth",))
    f = next((root / "depth").glob("test-*.parquet"))
    rows = pq.read_table(f).to_pylist()
    rows[1]["reward_model_json"] = '{"ground_truth": "5", '
    pq.write_table(pa.Table.from_pylist(rows), f)
    code, lines = run_show(suite(tmp_path, [{"masbench": str(root), "configs": ["depth"]}]))
    assert code == 2 and len(lines) == 1
    assert f"{f} row 2 field 'reward_model_json'" in lines[0] and "JSON" in lines[0]


def test_missing_field_path_is_one_line_exit_2(tmp_path, masbench_dir):
    f = next((masbench_dir / "depth").glob("test-*.parquet"))
    code, lines = run_show(suite(tmp_path, [{"table": str(f), "fields": {
        "question": "prompt.0.content", "answer": "reward_model.truth"}}]))
    assert code == 2 and len(lines) == 1
    assert f"{f} row 1 field 'reward_model.truth'" in lines[0] and "ground_truth" in lines[0]


def test_smfr_row_without_list_answer_is_an_error(tmp_path):
    (tmp_path / "s.jsonl").write_text(json.dumps({"problem": "p", "answer": "Alice"}) + "\n")
    with pytest.raises(TaskDataError, match=r"s.jsonl row 1 field 'answer'"):
        load_tasks(TaskSource(smfr="s.jsonl"), tmp_path)


def test_exactly_one_source_key():
    with pytest.raises(ValueError, match="exactly one of"):
        TaskSource(masbench="a", smfr="b")


def test_legacy_parquet_key_reads_a_published_masbench_file(tmp_path, masbench_dir):
    f = next((masbench_dir / "horizon").glob("test-*.parquet"))
    tasks = load_tasks(TaskSource(parquet=str(f), n=2))
    assert [t.id for t in tasks] == ["masbench-horizon-test-0", "masbench-horizon-test-1"]
    assert tasks[0].answers == json.loads(pq.read_table(f).to_pylist()[0]["reward_model_json"])[
        "ground_truth"].split("<<horizon>>")
    assert not tasks[0].question.startswith("[")


def test_legacy_value_that_is_not_an_integer_does_not_crash(tmp_path):
    (tmp_path / "v.jsonl").write_text(json.dumps({"question": "q", "answer": "1", "value": "3-4"}) + "\n")
    [t] = load_tasks(TaskSource(jsonl="v.jsonl", params={"axis": "depth"}), tmp_path)
    assert t.axis == "depth" and t.axis_value is None


def test_choice_list_of_options_mmlu_style(tmp_path):
    rows = [{"question": "2 + 2?", "choices": ["3", "4", "5", "22"], "answer": 1},
            {"question": "Red?", "choices": json.dumps(["blue", "red"]), "answer": "B"},
            {"question": "Pick x", "choices": ["y", "x", "z"], "answer": "x"}]
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    tasks = load_tasks(TaskSource(choice="m.jsonl", seed=3), tmp_path)
    for t, correct in zip(tasks, ["4", "red", "x"]):
        letter = t.answers[0]
        assert f"{letter}) {correct}\n" in t.question + "\n" and t.meta["options"][
            t.meta["permutation"][t.meta["letters"].index(letter)]] == correct
    (tmp_path / "bad.jsonl").write_text(json.dumps({"question": "q", "choices": ["a", "b"], "answer": 7}) + "\n")
    with pytest.raises(TaskDataError, match=r"bad.jsonl row 1 field 'answer'"):
        load_tasks(TaskSource(choice="bad.jsonl"), tmp_path)
