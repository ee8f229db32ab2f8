"""``masbench tasks score --format table|jsonl|csv`` with several replies per id, and ``tasks show``
counting by (source, axis, value) (issue 23, item 5).

The suite reads a MASBench folder in the published layout (masbench.testing.published); the
expected verdicts are decided here, per reply, by how each reply was written (right or wrong on
purpose), not by the scorer under test."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from masbench.bench import load_suite_tasks
from masbench.bench.types import TaskInstance
from masbench.cli.tasks import CSV_COLUMNS, tasks_app
from masbench.spec.suite import SuiteSpec
from masbench.testing.published import write_masbench_dir

ROWS = 4  # per config: values 2, 3, 4, 5 (2 + index % 4) on both axes


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[Path, list[TaskInstance]]:
    tmp = tmp_path_factory.mktemp("score")
    root = write_masbench_dir(tmp / "MASBench", rows=ROWS, configs=("breadth", "horizon"))
    path = tmp / "pub.yaml"
    path.write_text(yaml.safe_dump({"name": "pub", "designs": ["cot"],
                                    "tasks": [{"masbench": str(root), "configs": ["breadth", "horizon"]}]}))
    return path, load_suite_tasks(SuiteSpec.model_validate(yaml.safe_load(path.read_text())), tmp)


def reply_for(task: TaskInstance, right: bool) -> str:
    golds = task.meta["gold"]
    if len(golds) > 1:  # horizon: one \boxed{} per problem; a wrong reply misses the last one
        boxes = golds if right else golds[:-1]
        return "### Final Answers\n" + "\n".join(f"Problem {i + 1}: \\boxed{{{g}}}" for i, g in enumerate(boxes))
    return f"<answer>{golds[0] if right else (int(golds[0]) + 1) % 23}</answer>"


def pool_file(tmp_path: Path, tasks: list[TaskInstance]) -> tuple[Path, dict[tuple[str, int], bool]]:
    """A CoT-SC pool scored elsewhere, in one file: 3 replies for the first tasks (the third with an
    explicit `sample` field), 1 for some, none for the last task. Returns the file and the intended
    verdict per (id, sample)."""
    lines, want = [], {}
    for j, t in enumerate(tasks[:-1]):
        k = 3 if j % 2 == 0 else 1
        for s in range(k):
            right = (j + s) % 3 != 0
            line = {"id": t.id, "reply": reply_for(t, right)}
            if s == 2:
                line["sample"] = 7  # a sample number given in the file wins over the position
            lines.append(json.dumps(line))
            want[(t.id, 7 if s == 2 else s)] = right
    path = tmp_path / "pool.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, want


def test_jsonl_round_trips_several_replies_per_id(tmp_path, published):
    suite, tasks = published
    replies, want = pool_file(tmp_path, tasks)
    result = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(replies), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]  # stdout is JSON lines only
    assert {(r["id"], r["sample"]): r["correct"] for r in records} == want
    assert len(records) == len(want) > len(tasks)  # several verdicts per id, none dropped or merged
    by_id = {t.id: t for t in tasks}
    for r in records:
        assert set(r) == set(CSV_COLUMNS)
        assert r["gold"] == by_id[r["id"]].answers and r["source"] == "masbench" and r["scorer"] == "masbench"
    right = sum(want.values())
    assert f"accuracy: {right}/{len(want)} = {100 * right / len(want):.1f}% (1 suite tasks without a reply)" \
        in result.stderr


def test_csv_parses_with_one_row_per_reply(tmp_path, published):
    suite, tasks = published
    replies, want = pool_file(tmp_path, tasks)
    result = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(replies), "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert {(r["id"], int(r["sample"])): r["correct"] == "true" for r in rows} == want
    horizon = next(r for r in rows if "horizon" in r["id"] and r["correct"] == "true")
    assert horizon["gold"] == horizon["predicted"] and " | " in horizon["gold"]  # several answers, one cell


def header(table: str) -> list[str]:
    line = next(ln for ln in table.splitlines() if "┃" in ln and "scorer" in ln)
    return [c.strip() for c in line.split("┃") if c.strip()]


def test_table_shows_the_sample_column_only_when_an_id_has_several_replies(tmp_path, published):
    suite, tasks = published
    replies, _ = pool_file(tmp_path, tasks)
    several = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(replies)],
                                 env={"COLUMNS": "250"})
    assert several.exit_code == 0 and "sample" in header(several.stdout)
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"id": tasks[0].id, "reply": reply_for(tasks[0], True)}) + "\n")
    single = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(one)], env={"COLUMNS": "250"})
    assert single.exit_code == 0 and "sample" not in header(single.stdout) and "task" in header(single.stdout)
    assert f"accuracy: 1/1 = 100.0% ({len(tasks) - 1} suite tasks without a reply)" in single.stdout


def test_a_repeated_id_and_sample_is_one_line_naming_file_line_and_field(tmp_path, published):
    suite, tasks = published
    t = tasks[0]
    bad = tmp_path / "dup.jsonl"
    bad.write_text("\n".join(json.dumps(x) for x in [{"id": t.id, "reply": "a"}, {"id": t.id, "reply": "b"},
                                                      {"id": t.id, "reply": "c", "sample": 1}]) + "\n")
    result = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(bad), "--format", "jsonl"])
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{bad} row 3 field 'sample'" in result.stderr and "already given on line 2" in result.stderr
    negative = tmp_path / "neg.jsonl"
    negative.write_text(json.dumps({"id": t.id, "reply": "a", "sample": -1}) + "\n")
    result = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(negative)])
    assert result.exit_code == 2 and "integer ≥ 0" in result.stderr


def test_an_unknown_format_is_a_usage_error(tmp_path, published):
    suite, tasks = published
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"id": tasks[0].id, "reply": "x"}) + "\n")
    result = CliRunner().invoke(tasks_app, ["score", str(suite), "--replies", str(one), "--format", "xml"])
    assert result.exit_code == 2 and "table, jsonl, csv" in result.output


def test_show_counts_by_source_axis_and_value(published):
    suite, _ = published
    root = suite.parent / "MASBench"
    want: Counter = Counter()
    for config in ("breadth", "horizon"):  # counted from the published files themselves
        for row in pq.read_table(next((root / config).glob("test-*.parquet"))).to_pylist():
            want[(row["axis"], row["value"])] += 1
    assert want[("breadth", "3")] == want[("horizon", "3")] == 1  # the rows that used to merge into one
    result = CliRunner().invoke(tasks_app, ["show", str(suite), "--n", "0"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    got: Counter = Counter()
    for line in result.stdout.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").replace("┃", "│").split("│")]
        if len(cells) == 4 and cells[0] == "masbench" and cells[3].isdigit():
            got[(cells[1], cells[2])] += int(cells[3])
    assert got == want
