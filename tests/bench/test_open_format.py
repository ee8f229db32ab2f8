"""Format ``open``: open-ended rows become judged tasks; a row with ``gold`` carries a rule check;
bad rows are errors naming the file, row and field; the shipped open-ended suite loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from masbench.bench import TaskDataError, load_suite_tasks, load_tasks
from masbench.bench.scoring.judge import rule_scorer
from masbench.library import Library
from masbench.spec import SuiteSpec, TaskSource


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    p = tmp_path / "open.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_rows_become_judged_tasks(tmp_path):
    _write(tmp_path, [{"id": "a", "question": "Explain rain.", "rubric": "Mentions evaporation.",
                       "reference": "Water..."},
                      {"id": "b", "question": "2 plus 2? Explain.", "gold": 4, "check": "numeric"},
                      {"question": "Capital of France?", "gold": "Paris"}])
    tasks = load_tasks(TaskSource(path="open.jsonl", format="open", name="o"), tmp_path)
    assert [t.id for t in tasks] == ["o-a", "o-b", "o-0003"]
    assert all(t.scorer == "judge" for t in tasks)
    a, b, c = tasks
    assert a.answers == [] and a.meta["rubric"] == "Mentions evaporation." and a.meta["reference"] == "Water..."
    assert rule_scorer(a) is None                       # open-ended: only a judge scores it
    assert b.answers == ["4"] and b.meta["check"] == "numeric" and rule_scorer(b) == "numeric"
    assert c.meta["check"] == "exact"                   # a gold without check: compared exactly


@pytest.mark.parametrize("row, field, what", [
    ({"question": "q", "check": "numeric"}, "check", "no gold"),
    ({"question": "q", "gold": "1", "check": "judge"}, "check", "not a rule scorer"),
    ({"question": "q", "gold": "1", "check": "nope"}, "check", "not a rule scorer"),
    ({"question": "   "}, "question", "empty question"),
    ({"prompt": "q"}, "question", "no column"),
])
def test_bad_rows_name_file_row_and_field(tmp_path, row, field, what):
    _write(tmp_path, [{"question": "fine"}, row])
    with pytest.raises(TaskDataError) as exc:
        load_tasks(TaskSource(path="open.jsonl", format="open"), tmp_path)
    msg = str(exc.value)
    assert what in msg and "open.jsonl" in msg and field in msg and "2" in msg


def test_the_shipped_open_ended_suite():
    lib = Library()
    loaded = lib.get("suite", "open-ended")
    suite = loaded.typed(SuiteSpec)
    tasks = load_suite_tasks(suite, loaded.path.parent)
    checkable = [t for t in tasks if rule_scorer(t) is not None]
    assert len(tasks) == 20 and len(checkable) == 10
    assert all(t.scorer == "judge" and t.meta.get("rubric") for t in tasks)
    assert suite.judge is not None and lib.has("agent", suite.judge.agent) and suite.judge.k >= 2
    assert suite.models["default"] == "embedded/smollm2"
