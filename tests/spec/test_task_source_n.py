"""``n`` on a task source: a generator's count (10 when unset), a data source's cap on rows (unset:
every row); ``limit:`` is not a second name for it; and a command-line flag's problem prints as
``FLAG: message`` (issue 23, items 4 and 6)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from masbench.library import Library
from masbench.spec.problems import SpecError, flag_problem
from masbench.spec.suite import GENERATOR_N, TaskSource


def test_a_generator_counts_ten_per_value_unless_told_and_a_data_source_caps_nothing():
    assert GENERATOR_N == 10
    assert TaskSource(generator="masbench.depth").n == 10
    assert TaskSource(generator="masbench.depth", n=3).n == 3
    for key in ("masbench", "smfr", "gsm8k", "table", "jsonl", "parquet"):
        assert TaskSource.model_validate({key: "x"}).n is None
        assert TaskSource.model_validate({key: "x", "n": 25}).n == 25
    assert TaskSource(path="x.jsonl", format="gsm8k").n is None
    with pytest.raises(ValidationError):
        TaskSource(masbench="x", n=0)  # a cap is at least one row


def test_a_data_source_dump_says_its_n_is_unset():
    # what a run hashes: an unset cap dumps as None, never as a number it does not mean
    assert TaskSource(smfr="x.jsonl").model_dump()["n"] is None
    assert TaskSource(generator="smfr").model_dump()["n"] == 10


def test_limit_is_not_an_alias_of_n_and_says_where(tmp_path):
    suite = tmp_path / "tasks" / "lim.yaml"
    suite.parent.mkdir()
    suite.write_text("name: lim\ntasks:\n  - {masbench: data, limit: 10}\ndesigns: [cot]\n")
    with pytest.raises(SpecError) as exc:
        Library(roots=[tmp_path]).load_path(suite, "suite", check=False)
    text = str(exc.value)
    assert text.startswith(f"{suite}:3:") and "limit" in text


def test_a_flag_problem_is_the_flag_and_the_message():
    p = flag_problem("--free judge", "no model alias 'judge'")
    assert str(p) == "--free judge: no model alias 'judge'"
    assert str(SpecError([p])) == "--free judge: no model alias 'judge'"
