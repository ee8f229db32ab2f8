"""Declared names kept between processes (masbench.spec.declared): a name parsed in one process is
read from the kept table in the next, never across a change to the reading code, and never when
``MASBENCH_CACHE_DIR`` is empty. "The next process" is simulated by :func:`forget` (the in-memory
names dropped, the table read again); the parser is replaced by one that fails the test."""

from __future__ import annotations

import json

import pytest

from masbench.spec import declared


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("MASBENCH_CACHE_DIR", str(folder))
    declared.forget()
    yield folder
    declared.forget()


def _file(tmp_path, text: str):
    f = tmp_path / "agent.yaml"
    f.write_text(text)
    return f


def _no_parse(text, file):
    raise AssertionError(f"{file} parsed again")


def test_a_name_kept_by_one_process_is_read_by_the_next_without_parsing(tmp_path, cache, monkeypatch):
    f = _file(tmp_path, "name: kept-alpha\nprompt: Solve it.\n")
    none = tmp_path / "none.yaml"
    none.write_text("prompt: no name here\n")
    assert declared.declared_name(f) == "kept-alpha" and declared.declared_name(none) is None
    declared.keep()
    table = declared.kept_file()
    assert table is not None and table.parent == cache / "declared-names"
    assert sorted(json.loads(table.read_text()).values(), key=str) == [None, "kept-alpha"]
    declared.forget()
    monkeypatch.setattr(declared, "parse_yaml", _no_parse)
    assert declared.declared_name(f) == "kept-alpha" and declared.declared_name(none) is None
    f.write_text("name: kept-bravo\nprompt: Solve it.\n")  # new content: parsed (and the parser here fails)
    with pytest.raises(AssertionError, match="parsed again"):
        declared.declared_name(f)


def test_changed_reading_code_reads_a_table_of_its_own(tmp_path, cache, monkeypatch):
    f = _file(tmp_path, "name: kept-charlie\n")
    assert declared.declared_name(f) == "kept-charlie"
    declared.keep()
    before = declared.kept_file()
    monkeypatch.setattr(declared.yaml, "__version__", "0.0-another")
    assert declared.kept_file() != before
    declared.forget()
    parsed = []
    real = declared.parse_yaml
    monkeypatch.setattr(declared, "parse_yaml", lambda text, file: parsed.append(file) or real(text, file))
    assert declared.declared_name(f) == "kept-charlie" and parsed == [str(f)]


def test_an_empty_cache_setting_keeps_nothing_and_a_broken_table_is_ignored(tmp_path, cache, monkeypatch):
    f = _file(tmp_path, "name: kept-delta\n")
    monkeypatch.setenv("MASBENCH_CACHE_DIR", "")
    assert declared.kept_file() is None
    assert declared.declared_name(f) == "kept-delta"
    declared.keep()
    assert not cache.exists()
    monkeypatch.setenv("MASBENCH_CACHE_DIR", str(cache))
    table = declared.kept_file()
    assert table is not None
    table.parent.mkdir(parents=True)
    table.write_text("{not json")
    declared.forget()
    assert declared.declared_name(f) == "kept-delta"  # parsed again, not an error
    declared.keep()
    assert json.loads(table.read_text()) != {}


def test_only_the_newest_tables_are_kept(tmp_path, cache, monkeypatch):
    for i in range(declared.KEEP + 2):
        monkeypatch.setattr(declared.yaml, "__version__", f"v{i}")
        declared.forget()
        assert declared.declared_name(_file(tmp_path, f"name: n{i}\n")) == f"n{i}"
        declared.keep()
    assert len(list((cache / "declared-names").glob("*.json"))) == declared.KEEP
