"""Task sources as reader × format, seen from outside the package: the registries list the built-ins,
unknown names are clear errors (at check time and at load time), a toy reader and a toy format
registered here (no file under masbench/ edited) load a suite through ``masbench.harness.prepare``,
and the short YAML keys give the same tasks as the general form they are sugar for."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from masbench.bench import FORMATS, READERS, RowGroup, TaskDataError, TaskInstance, load_suite_tasks, load_tasks
from masbench.harness import RunOptions, prepare
from masbench.library import Library
from masbench.spec import SuiteSpec, TaskSource
from masbench.spec.problems import SpecError
from masbench.testing.published import write_masbench_dir, write_smfr_jsonl

BUILTIN_FORMATS = {"masbench", "smfr", "gsm8k", "math", "aime", "choice", "table", "guess"}
BUILTIN_READERS = {"file", "jsonl", "json", "csv", "parquet", "hf", "masbench-dir", "legacy-jsonl", "legacy-parquet"}


# ----------------------------------------------------------------------------- the toy seam


def toy_format(group: RowGroup, source: TaskSource, label: str) -> list[TaskInstance]:
    """Rows ``{"q", "a"}`` → exact-match tasks; ``params.tag`` becomes a skill."""
    tag = source.params.get("tag", "toy")
    return [TaskInstance(id=f"{group.label(label)}-{i}", source=group.label(label), question=row["q"],
                         answers=[str(row["a"])], scorer="exact", skills=[tag], meta={"row": i, "where": str(where)})
            for where, i, row in group.rows]


def toy_reader(path: str, source: TaskSource, base_dir: Path | None) -> Iterator[RowGroup]:
    """A text file of ``question | answer`` lines → one group of ``{"q", "a"}`` rows."""
    file = Path(base_dir or ".") / path
    rows = [(file, i, dict(zip(("q", "a"), (x.strip() for x in line.split("|")))))
            for i, line in enumerate(file.read_text().splitlines(), start=1) if line.strip()]
    yield RowGroup(rows[:source.n], str(file), source.split, files=[file])


@pytest.fixture
def toys():
    """Register the toy format and reader for one test, then take them out again."""
    FORMATS.register("toy-qa", toy_format)
    READERS.register("toy-lines", toy_reader)
    yield
    FORMATS.remove("toy-qa")
    READERS.remove("toy-lines")


def toy_world(tmp_path: Path) -> Path:
    """A library root with a suite whose tasks come from the toy format (read by a built-in reader and
    by the toy reader); returns the suite file."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"q": "What is 2 + 2?", "a": 4}, {"q": "Capital of France?", "a": "Paris"}, {"q": "3 * 3?", "a": 9}]))
    (tmp_path / "data" / "more.txt").write_text("One plus one? | 2\n\nTen minus one? | 9\n")
    (tmp_path / "tasks").mkdir()
    suite = {"name": "toy", "models": {"default": "sim/p60"}, "designs": ["cot"],
             "tasks": [{"reader": "jsonl", "path": "../data/qa.jsonl", "format": "toy-qa", "n": 2,
                        "params": {"tag": "toy.qa"}},
                       {"reader": "toy-lines", "path": "../data/more.txt", "format": "toy-qa", "name": "lines"}],
             "store": str(tmp_path / "runs" / "toy.duckdb")}
    path = tmp_path / "tasks" / "toy.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def test_a_toy_format_and_reader_registered_outside_load_a_suite_through_prepare(tmp_path, toys):
    path = toy_world(tmp_path)
    prep = prepare(RunOptions(suite=str(path), lib=[tmp_path]))
    assert [(t.id, t.source, t.question, t.answers, t.scorer, t.skills) for t in prep.tasks] == [
        ("toy-qa-1", "toy-qa", "What is 2 + 2?", ["4"], "exact", ["toy.qa"]),
        ("toy-qa-2", "toy-qa", "Capital of France?", ["Paris"], "exact", ["toy.qa"]),
        ("lines-1", "lines", "One plus one?", ["2"], "exact", ["toy"]),
        ("lines-3", "lines", "Ten minus one?", ["9"], "exact", ["toy"]),
    ]
    assert prep.tasks[0].meta["where"] == str(tmp_path / "tasks" / "../data/qa.jsonl")  # the jsonl reader's row file
    assert len(prep.cells()) == 4 * 2  # the pool and cot, one seed: the tasks made it into the run's cells


def test_without_the_toy_registered_the_suite_check_names_file_line_and_the_known_formats(tmp_path):
    path = toy_world(tmp_path)
    with pytest.raises(SpecError) as err:
        Library(roots=[tmp_path]).load_path(path)
    problems = {p.field: p for p in err.value.problems}
    assert set(problems) == {"tasks[0].format", "tasks[1].format", "tasks[1].reader"}
    fmt = problems["tasks[0].format"]
    format_line = next(i for i, x in enumerate(path.read_text().splitlines(), start=1) if "format: toy-qa" in x)
    assert fmt.file == str(path) and fmt.line == format_line  # the `format:` line of the first source
    assert "unknown task format 'toy-qa'" in fmt.message and "gsm8k" in fmt.message and "smfr" in fmt.message
    assert "unknown task reader 'toy-lines'" in problems["tasks[1].reader"].message
    assert "masbench-dir" in problems["tasks[1].reader"].message


# ----------------------------------------------------------------------------- the registries


def test_builtins_are_listed_without_importing_them_and_each_loads():
    assert BUILTIN_FORMATS <= set(FORMATS.names()) and BUILTIN_READERS <= set(READERS.names())
    for name in BUILTIN_FORMATS:
        assert callable(FORMATS[name]), name
    for name in BUILTIN_READERS:
        assert callable(READERS[name]), name


def test_unknown_format_or_reader_at_load_time_is_one_clear_error(tmp_path):
    (tmp_path / "x.jsonl").write_text('{"question": "q", "answer": "#### 1"}\n')
    with pytest.raises(TaskDataError, match=r"x.jsonl field 'format': unknown task format 'nope' \(known: .*gsm8k"):
        load_tasks(TaskSource(path="x.jsonl", format="nope"), tmp_path)
    with pytest.raises(TaskDataError, match=r"field 'reader': unknown task reader 'tape' \(known: .*parquet"):
        load_tasks(TaskSource(path="x.jsonl", reader="tape", format="gsm8k"), tmp_path)
    with pytest.raises(TaskDataError, match="unknown task format 'nope'"):
        load_tasks(TaskSource(hf="some/dataset", format="nope"))


def test_the_general_form_is_checked_by_the_schema():
    with pytest.raises(ValidationError, match="needs format"):
        TaskSource(path="x.jsonl")
    with pytest.raises(ValidationError, match="reader: goes with path"):
        TaskSource(gsm8k="x.jsonl", reader="csv")
    with pytest.raises(ValidationError, match="format: goes with path: or hf:"):
        TaskSource(gsm8k="x.jsonl", format="math")
    with pytest.raises(ValidationError, match="exactly one of"):
        TaskSource(path="x.jsonl", gsm8k="x.jsonl", format="gsm8k")
    assert TaskSource(gsm8k="x.jsonl", format="gsm8k").route().format == "gsm8k"  # naming its own format is fine


def test_short_keys_dump_as_before_so_run_configurations_keep_their_identity():
    assert "path" not in TaskSource(gsm8k="x").model_dump() and "reader" not in TaskSource(gsm8k="x").model_dump()
    general = TaskSource(path="x", reader="csv", format="gsm8k").model_dump(mode="json", by_alias=True)
    assert (general["path"], general["reader"], general["format"]) == ("x", "csv", "gsm8k")
    assert TaskSource.model_validate(general) == TaskSource(path="x", reader="csv", format="gsm8k")


# ----------------------------------------------------------------------------- sugar = general form


def dumps(tasks: list[TaskInstance]) -> list[dict]:
    return [t.model_dump(mode="json") for t in tasks]


def sugar_and_general(tmp_path: Path) -> list[tuple[str, dict, dict]]:
    masbench_dir = write_masbench_dir(tmp_path / "MASBench", rows=3)
    write_smfr_jsonl(tmp_path / "smfr" / "balanced_dataset_single_3_fixed.jsonl", n_rows=3, n=3)
    write_smfr_jsonl(tmp_path / "smfr" / "balanced_dataset_single_2_fixed.jsonl", n_rows=2, n=2)
    (tmp_path / "gsm.jsonl").write_text("".join(json.dumps({"question": f"Q{i}?", "answer": f"so\n#### {i}"}) + "\n"
                                                for i in range(4)))
    (tmp_path / "guess.jsonl").write_text(json.dumps({"problem": "p", "gold": [1, 2], "id": "z"}) + "\n")
    return [
        ("masbench", {"masbench": "MASBench", "n": 2},
         {"path": "MASBench", "reader": "masbench-dir", "format": "masbench", "n": 2}),
        ("masbench-train", {"masbench": "MASBench", "configs": ["depth", "combine"], "split": "train"},
         {"path": "MASBench", "reader": "masbench-dir", "format": "masbench", "configs": ["depth", "combine"],
          "split": "train"}),
        ("smfr-file", {"smfr": "smfr/balanced_dataset_single_3_fixed.jsonl"},
         {"path": "smfr/balanced_dataset_single_3_fixed.jsonl", "format": "smfr"}),
        ("smfr-folder", {"smfr": "smfr", "n": 4}, {"path": "smfr", "reader": "jsonl", "format": "smfr", "n": 4}),
        ("gsm8k", {"gsm8k": "gsm.jsonl", "n": 3}, {"path": "gsm.jsonl", "reader": "file", "format": "gsm8k", "n": 3}),
        ("gsm8k-named", {"gsm8k": "gsm.jsonl", "name": "g"}, {"path": "gsm.jsonl", "format": "gsm8k", "name": "g"}),
        ("jsonl", {"jsonl": "guess.jsonl"}, {"path": "guess.jsonl", "reader": "legacy-jsonl", "format": "guess"}),
        ("table", {"table": str(next((masbench_dir / "depth").glob("test-*.parquet"))),
                   "fields": {"question": "prompt.0.content", "answer": "reward_model.ground_truth"}},
         {"path": str(next((masbench_dir / "depth").glob("test-*.parquet"))), "reader": "parquet", "format": "table",
          "fields": {"question": "prompt.0.content", "answer": "reward_model.ground_truth"}}),
    ]


def test_short_keys_give_the_same_tasks_as_the_general_form(tmp_path):
    cases = sugar_and_general(tmp_path)
    assert {"masbench", "smfr-file", "gsm8k"} <= {c[0] for c in cases}
    for label, short, general in cases:
        sugar_tasks = load_tasks(TaskSource(**short), tmp_path)
        assert sugar_tasks, label
        assert dumps(sugar_tasks) == dumps(load_tasks(TaskSource(**general), tmp_path)), label


def test_a_suite_mixing_the_forms_loads_from_yaml(tmp_path):
    cases = {c[0]: c for c in sugar_and_general(tmp_path)}
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"name": "mixed", "designs": ["cot"], "tasks": [
        cases["masbench"][1], {**cases["gsm8k"][2], "name": "general"}, cases["smfr-file"][1]]}))
    spec = SuiteSpec.model_validate(yaml.safe_load(path.read_text()))
    tasks = load_suite_tasks(spec, base_dir=tmp_path)
    assert {t.source for t in tasks} == {"masbench", "general", "smfr"}
    assert [t.scorer for t in tasks if t.source == "general"] == ["gsm8k"] * 3
